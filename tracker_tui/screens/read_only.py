"""Read-only mode on a screen: its write keys leave the footer, the help and the command palette
(which all list the active bindings), and pressing one anyway says why nothing happens.

Textual skips a binding whose `check_action` answers False, so the key travels on as a plain
key event; the screen hears it as it bubbles up and names the mode, rather than staying silent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from textual import events
from textual.binding import BindingsMap
from textual.dom import DOMNode
from textual.screen import ScreenResultType

from tracker_tui.screens.declared_keys import DeclaredKeyOrder

READ_ONLY_NOTICE = "Read-only mode: changes are off."


def action_name(action: str) -> str:
    """`extend_marks(1)` → `extend_marks`: what `check_action` is asked about."""
    return action.partition("(")[0].removeprefix("app.").removeprefix("screen.")


def bound_keys(node: DOMNode, actions: frozenset[str]) -> Iterator[str]:
    """The keys the bindings of `node`'s class (and its bases) give to one of `actions`."""
    for cls in type(node).__mro__:
        bindings = BindingsMap(cls.__dict__.get("BINDINGS", ()))
        for key, binding in bindings:
            if action_name(binding.action) in actions:
                yield key


class ReadOnlyScreen(DeclaredKeyOrder[ScreenResultType]):
    """A screen whose `WRITE_ACTIONS` (its own, its widgets' and the app's) are hidden while
    `read_only`; the widgets and the app hide their own through their `check_action`."""

    WRITE_ACTIONS: ClassVar[frozenset[str]] = frozenset()

    read_only: bool
    _write_keys: frozenset[str] | None = None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide the screen's write actions in read-only mode (False: not shown, not run)."""
        return not (self.read_only and action in self.WRITE_ACTIONS)

    def on_key(self, event: events.Key) -> None:
        """A hidden write key reaches the screen as a plain key: say why it does nothing."""
        if not self.read_only:
            return
        if self._write_keys is None:
            nodes = [self.app, self, *self.walk_children()]
            self._write_keys = frozenset(
                key for node in nodes for key in bound_keys(node, self.WRITE_ACTIONS)
            )
        if event.key in self._write_keys:
            event.stop()
            event.prevent_default()
            self.notify(READ_ONLY_NOTICE, severity="warning")
