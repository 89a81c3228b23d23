"""The user's keys: the `[keymap]` table of config.toml, read and checked before the app starts.

Every binding of the app has an id, `<screen>.<action>` (`list.next`, `detail.edit`), and the
keymap gives an id other keys:

    [keymap]
    list.next = "n"                  # instead of j and down
    list.previous = ["e", "up"]      # several keys: a list, or "e,up"
    app.sync_now = "ctrl+y"

A value replaces every key of the binding (Textual's `App.set_keymap` does the remapping). What
would make a key silently do nothing is refused before the app opens, in one message naming
every problem: an id no binding has (with the nearest ids), a key name no terminal sends, and a
clash: two bindings of one screen on the same key, at least one of them moved there by the
keymap (the app's own bindings, `app.*`, reach every screen, so they clash with any). Clashes
among the default keys are deliberate (a dialog's `y` shadows the app's sync panel) and are not
reported.

This module knows no Textual: `tracker-tui config check` runs it on the bindings listed in the
shipped schema (`tracker_tui.config_schema`), the app on its live bindings.
"""

from __future__ import annotations

import difflib
import string
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cache.models import Frozen
from tracker_tui.errors import UsageError

APP_PART = "app"
"""The id prefix of the app's own bindings, which are active on every screen."""

SHARED_PARTS: Mapping[str, tuple[str, ...]] = {
    "picker": ("form", "bulk", "labels"),
}
"""Widgets whose bindings live on several screens: the label picker sits in the issue form,
the bulk edit and the labels dialog, so its keys clash with theirs."""

MODIFIERS = ("ctrl", "alt", "shift", "meta", "super", "hyper")

NAMED_KEYS = frozenset(
    {
        "escape",
        "enter",
        "tab",
        "backspace",
        "delete",
        "insert",
        "home",
        "end",
        "pageup",
        "pagedown",
        "up",
        "down",
        "left",
        "right",
        "space",
        *(f"f{number}" for number in range(1, 25)),
    }
)
"""Keys with names (beside characters and their names: `?` or `question_mark`)."""

_REPLACED = {
    "solidus": "slash",
    "reverse_solidus": "backslash",
    "commercial_at": "at",
    "hyphen_minus": "minus",
    "plus_sign": "plus",
    "low_line": "underscore",
}
"""Textual's short names for some characters (`textual.keys.KEY_NAME_REPLACEMENTS`)."""


def character_name(character: str) -> str:
    """What Textual calls a key that types `character`: itself for letters and digits, else
    its Unicode name in lower case (`?` is `question_mark`, `/` is `slash`)."""
    if character.isalnum():
        return character
    try:
        name = unicodedata.name(character).lower().replace("-", "_").replace(" ", "_")
    except ValueError:
        return character
    return _REPLACED.get(name, name)


_CHARACTER_NAMES = frozenset(character_name(c) for c in string.punctuation)


class KeymapError(UsageError):
    """The keymap cannot be applied as written; the message names every problem."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__(_message(problems))
        self.problems = list(problems)


class BindingInfo(Frozen):
    """A binding as the keymap sees it: its id, its keys, and what it does."""

    _fields = ("id", "keys", "description")
    __slots__ = _fields
    id: str
    keys: tuple[str, ...]
    description: str

    def __init__(self, id: str, keys: tuple[str, ...], description: str) -> None:
        self._init(id, keys, description)

    @property
    def part(self) -> str:
        """The screen (or shared widget) its id names."""
        return self.id.split(".", 1)[0]


def normalize_key(key: str) -> str:
    """A key as Textual matches it: a single character by its name (`?` as `question_mark`)."""
    key = key.strip()
    return character_name(key) if len(key) == 1 else key


def key_problem(key: str) -> str | None:
    """Why `key` is no key a terminal sends (None when it is one), in a few words."""
    if not key:
        return "an empty key"
    *modifiers, base = key.split("+") if key != "+" else [key]
    unknown = [modifier for modifier in modifiers if modifier not in MODIFIERS]
    if unknown:
        return f"{unknown[0]!r} is no modifier (use {', '.join(MODIFIERS)})"
    if len(base) == 1 or base in NAMED_KEYS or base in _CHARACTER_NAMES:
        return None
    lower = base.lower()
    near = [lower] if lower in NAMED_KEYS else []
    near = near or difflib.get_close_matches(base, [*NAMED_KEYS, *_CHARACTER_NAMES], n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    return f"{base!r} is no key name{hint}"


def flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """`list.next = "n"` (a table `list` holding `next`) and `"list.next" = "n"` alike as the
    id `list.next`."""
    flat: dict[str, Any] = {}
    for name, value in table.items():
        ident = f"{prefix}{name}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{ident}."))
        else:
            flat[ident] = value
    return flat


def parse_keymap(table: Mapping[str, Any], where: str = "config.toml [keymap]") -> dict[str, str]:
    """The `[keymap]` table as Textual's keymap: id to comma-separated keys, normalised.

    Raises `KeymapError` for a value that is neither keys nor a list of keys, or a key name no
    terminal sends; `where` starts each problem (`config.toml: keymap`)."""
    keymap: dict[str, str] = {}
    problems: list[str] = []
    for ident, value in flatten(table).items():
        keys = _keys_of(value)
        if keys is None:
            problems.append(f'{where}: {ident} must be keys ("ctrl+n" or "n,down") or a list')
            continue
        for key in keys:
            if (problem := key_problem(key)) is not None:
                problems.append(f"{where}: {ident} = {key!r}: {problem}")
        keymap[ident] = ",".join(normalize_key(key) for key in keys)
    if problems:
        raise KeymapError(problems)
    return keymap


def _keys_of(value: object) -> list[str] | None:
    if isinstance(value, str):
        parts = value.split(",") if value.strip() != "," else [value]
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        parts = list(value)
    else:
        return None
    keys = [part.strip() if part.strip() else part for part in parts]
    return keys if keys and all(keys) else None


def keymap_problems(
    table: Mapping[str, Any], bindings: Iterable[BindingInfo], where: str = "config.toml [keymap]"
) -> list[str]:
    """Every problem of a `[keymap]` table: its malformed entries, and the unknown ids and
    clashes among the rest (for `config check`, which names them all at once)."""
    problems: list[str] = []
    usable: dict[str, str] = {}
    for ident, value in flatten(table).items():
        try:
            usable.update(parse_keymap({ident: value}, where))
        except KeymapError as error:
            problems.extend(error.problems)
    try:
        check_keymap(usable, bindings, where)
    except KeymapError as error:
        problems.extend(error.problems)
    return problems


def check_keymap(
    keymap: Mapping[str, str], bindings: Iterable[BindingInfo], where: str = "config.toml [keymap]"
) -> None:
    """Refuse a keymap naming an id no binding has, or moving a key onto another binding's on
    the same screen. The message names every problem, each clash by both ids."""
    known = {binding.id: binding for binding in bindings}
    problems = [
        f"{where}: {_unknown(ident, known)}" for ident in sorted(keymap) if ident not in known
    ]
    problems.extend(f"{where}: {clash}" for clash in _clashes(keymap, known))
    if problems:
        raise KeymapError(problems)


def _unknown(ident: str, known: Mapping[str, BindingInfo]) -> str:
    near = difflib.get_close_matches(ident, list(known), n=3, cutoff=0.5)
    part = ident.split(".", 1)[0]
    if not near:
        near = sorted(name for name in known if name.split(".", 1)[0] == part)[:6]
    hint = f"; nearest: {', '.join(near)}" if near else ""
    return f"no binding has the id {ident!r}{hint}"


def final_keys(binding: BindingInfo, keymap: Mapping[str, str]) -> tuple[str, ...]:
    """The keys a binding answers to once the keymap is applied."""
    moved = keymap.get(binding.id)
    return binding.keys if moved is None else tuple(moved.split(","))


def _reach(part: str) -> set[str]:
    """The screens a binding of `part` is active on (a shared widget's: several)."""
    return set(SHARED_PARTS.get(part, (part,)))


def _share_a_screen(one: BindingInfo, other: BindingInfo) -> bool:
    if APP_PART in (one.part, other.part):
        return True
    return bool(_reach(one.part) & _reach(other.part))


def _clashes(keymap: Mapping[str, str], known: Mapping[str, BindingInfo]) -> list[str]:
    moved = [known[ident] for ident in sorted(keymap) if ident in known]
    found: list[str] = []
    seen: set[frozenset[str]] = set()
    for binding in moved:
        for key in final_keys(binding, keymap):
            for other in known.values():
                pair = frozenset((binding.id, other.id))
                if other.id == binding.id or pair in seen or not _share_a_screen(binding, other):
                    continue
                if key in final_keys(other, keymap):
                    seen.add(pair)
                    found.append(
                        f"{binding.id} ({binding.description}) and {other.id} "
                        f"({other.description}) would both be {key!r}"
                    )
    return found


def _message(problems: Sequence[str]) -> str:
    """One problem on the line; several as a list under a heading."""
    if len(problems) == 1:
        return problems[0]
    return f"{len(problems)} problems with the keys:\n  " + "\n  ".join(problems)
