"""Keys stay where their bindings are declared when the keymap moves them.

Textual applies the keymap (`App.set_keymap`) by deleting a moved binding's old keys from a
copy of each node's bindings and adding its new keys at the end, and the footer lists the
active bindings in that order: a user who moved `list.search` to ctrl+f found Search at the
far right of the footer, past the keys it used to come before, and at 80 columns off it. The
screens below put each node's bindings back in the order the node declares them (the order of
its bindings before the keymap), so the footer reads the same whatever keys the user chose. The
help orders its lines the same way (`tracker_tui.screens.help`).
"""

from __future__ import annotations

from textual.binding import Binding, BindingsMap
from textual.dom import DOMNode
from textual.screen import Screen, ScreenResultType


def _name(binding: Binding) -> tuple[str, str]:
    return (binding.id or "", "") if binding.id else (binding.action, binding.description)


def declared_order(node: DOMNode, bindings: BindingsMap) -> BindingsMap:
    """`bindings` (a copy of `node`'s, the keymap applied) in the order `node` declares them."""
    places: dict[tuple[str, str], int] = {}
    for place, (_key, binding) in enumerate(node._bindings):
        places.setdefault(_name(binding), place)
    last = len(places)

    def place_of(item: tuple[str, list[Binding]]) -> int:
        return min((places.get(_name(binding), last) for binding in item[1]), default=last)

    ordered = BindingsMap()
    ordered.key_to_bindings = dict(sorted(bindings.key_to_bindings.items(), key=place_of))
    return ordered


class DeclaredKeyOrder(Screen[ScreenResultType]):
    """A screen whose active bindings (what its footer lists) keep their declared order under
    a keymap."""

    @property
    def _binding_chain(self) -> list[tuple[DOMNode, BindingsMap]]:
        chain = super()._binding_chain
        if not self.app._keymap:
            return chain
        return [(node, declared_order(node, bindings)) for node, bindings in chain]
