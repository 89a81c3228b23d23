"""The keys a hint names, as the user's `[keymap]` has them: "ctrl+s sends", "c to write one".

Dialogs, placeholders, empty states and notices name keys in words. Written as literals they
went on naming the default keys after the keymap moved a binding (the footer and the help, drawn
from the live bindings, did follow it). So a hint names a binding by its id and gets the keys
here: those the keymap gives the id, else the binding's own, found on the node the hint is
about, its ancestors (the screen, the app) or the widgets of its screen. Keys are written as the
hints always wrote them (`ctrl+s`, `esc`, `enter`, `?`), not as the footer does (`^s`, `⏎`).
"""

from __future__ import annotations

from textual.binding import BindingsMap
from textual.dom import DOMNode, NoScreen
from textual.keys import format_key

WORDS = {"escape": "esc", "enter": "enter", "space": "space", "tab": "tab", "delete": "delete"}
"""Keys a hint calls by name, where Textual's display would draw a symbol (`⏎`, `del`)."""


def key_text(key: str) -> str:
    """One key as a hint writes it: `ctrl+s`, `esc`, `?` (for `question_mark`), `]`."""
    *modifiers, base = key.split("+") if key not in ("+", "plus") else [key]
    shown = WORDS.get(base) or format_key(base)
    return "+".join([*modifiers, shown])


def keys_text(keys: list[str]) -> str:
    """Several keys of one binding: `n or esc`, `esc, q or ?`."""
    shown = [key_text(key) for key in keys]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def bound_keys(
    node: DOMNode, binding_id: str, declared_in: type[DOMNode] | None = None
) -> list[str]:
    """The keys that run the binding `binding_id` now: the keymap's, else its defaults.

    `declared_in` is the class declaring the binding, for a hint written before a widget of
    that class is mounted (a dialog's hint naming the keys of the picker it will hold).
    Raises LookupError for an id bound nowhere in reach of `node`: a hint naming a binding
    that does not exist is a bug to catch in tests, not a text to guess."""
    keymap: dict[str, str] = getattr(node.app, "_keymap", {})
    if moved := keymap.get(binding_id):
        return moved.split(",")
    maps = [owner._bindings for owner in _owners(node)]
    if declared_in is not None:
        maps.append(BindingsMap(declared_in.__dict__.get("BINDINGS", ())))
    for bindings_map in maps:
        keys = [
            key
            for key, bindings in bindings_map.key_to_bindings.items()
            if any(binding.id == binding_id for binding in bindings)
        ]
        if keys:
            return keys
    raise LookupError(f"no binding {binding_id!r} in reach of {node!r}")


def hint_keys(node: DOMNode, binding_id: str, declared_in: type[DOMNode] | None = None) -> str:
    """The keys of `binding_id` as a hint names them (`bound_keys`, written by `keys_text`)."""
    return keys_text(bound_keys(node, binding_id, declared_in))


def hint_key(node: DOMNode, binding_id: str) -> str:
    """The first key of `binding_id` (as the footer shows it), for a hint short on room."""
    return key_text(bound_keys(node, binding_id)[0])


def _owners(node: DOMNode) -> list[DOMNode]:
    """Where a binding named by a hint about `node` may be declared: the node and its
    ancestors, then the widgets of its screen (a screen's notice about its list's keys)."""
    owners = list(node.ancestors_with_self)
    if node.app not in owners:
        owners.append(node.app)
    try:
        screen = node.screen
    except NoScreen:
        return owners
    owners.extend(widget for widget in screen.walk_children() if widget not in owners)
    return owners
