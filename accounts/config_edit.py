"""The configuration file written back as an edit of itself (with tomlkit), so that what the
user wrote by hand (comments, order, blank lines, quoting) stays as they wrote it.

Apart from `accounts.profiles` because only a change of the configuration writes it: every
command reads config.toml (with tomllib), few write it, and tomlkit is the largest import that
reading it would otherwise pay (docs/architecture.md#start-up).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

import tomlkit
from tomlkit.container import Container, OutOfOrderTableProxy
from tomlkit.items import Item, Table, Whitespace

from accounts.profiles import KeyStorage


def dumps(document: Mapping[str, Any], previous: str | None, *, header: str) -> str:
    """The file holding `document`: `previous` (the file as it is) edited where it differs, or a
    new file starting with `header` when there is none (or it is no TOML)."""
    if previous is not None:
        try:
            edited = tomlkit.parse(previous)
        except tomlkit.exceptions.TOMLKitError:
            edited = None
        if edited is not None:
            _edit(edited, document)
            return tomlkit.dumps(edited)
    return header + tomlkit.dumps(document)


UNWRITTEN_DEFAULTS: Mapping[str, object] = {"key_storage": KeyStorage.KEYRING.value}
"""Values a new file states, but an edit does not add where the user left them out."""


def _edit(container: MutableMapping[str, Any], wanted: Mapping[str, Any]) -> None:
    """Make `container` hold `wanted`, touching only what differs: a table is edited key by key,
    a value that is already equal keeps its comments and layout, one that is not is replaced
    (tomlkit keeps the comment at the end of its line)."""
    for key in [key for key in container if key not in wanted]:
        del container[key]
    for key, value in wanted.items():
        current = container.get(key)
        if isinstance(value, Mapping) and isinstance(current, Table | OutOfOrderTableProxy):
            _edit(current, value)
        elif current is None and UNWRITTEN_DEFAULTS.get(key, ...) == value:
            continue
        elif current is None or _plain(current) != value:
            _put(container, key, tomlkit.item(value))


def _put(container: MutableMapping[str, Any], key: str, item: Item) -> None:
    """Set `key`. A new table goes after the last table of its parent (of a parent the user
    split in parts around other tables, the last part) and before the comments that end it:
    tomlkit counts those into the table above, but the user wrote them over the next one."""
    if isinstance(container, OutOfOrderTableProxy) and key not in container:
        container = container._tables[-1]  # tomlkit has no public way to it
    trail: list[Item] = []
    if isinstance(item, Table) and (end := _end_table(container)) is not None:
        body = end.value.body
        while body and body[-1][0] is None:
            trail.insert(0, body.pop()[1])
    if not trail or not isinstance(trail[0], Whitespace):
        _spaced(item)
    container[key] = item
    if trail and (new_end := _end_table(item)) is not None:
        new_end.value.body.extend((None, line) for line in trail)


def _end_table(node: object) -> Table | None:
    """The table whose body ends where `node` ends in the file: its last table, nested."""
    if not isinstance(node, Table):
        return None
    keyed = [item for key, item in node.value.body if key is not None]
    return _end_table(keyed[-1]) or node if keyed and isinstance(keyed[-1], Table) else node


def _spaced(item: Item) -> None:
    """A new table ends with a blank line, so that a table after it stays apart from it."""
    if isinstance(item, Table):
        tables = [value for value in item.values() if isinstance(value, Table)]
        if tables:
            _spaced(tables[-1])
        else:
            item.add(tomlkit.nl())


def _plain(value: object) -> object:
    """A tomlkit value as plain Python, to compare with what is wanted."""
    return value.unwrap() if isinstance(value, Item | Container) else value
