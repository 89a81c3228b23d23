"""A footer that rebuilds its keys only when the keys it shows change.

Textual's `Footer` recomposes (removes and mounts a widget per key, styling each) whenever the
screen publishes a bindings update: on every focus change and every time the screen comes back
from a dialog, even when the same keys come back. Under the issue list that rebuild cost more
than drawing the list (about 40 ms on closing the filter dialog, the list's new rows waiting
behind it). This footer compares what it would show with what it shows and keeps its keys when
they are the same.

It also builds each key in the footer's compactness: Textual makes a `FooterKey` compact and
then binds it to the footer, which is not, and each change restyles the key, twice per key
for every rebuild (some 30 restyles before the first frame of the list,
docs/architecture.md#start-up).

Held (`held=True`), it builds no keys until told to (`show_keys`), or at the latest
`KEYS_AT_LATEST` after mounting: the list screen shows them in the frame after the one that
first shows its rows, which waited on the footer's fifteen-odd key widgets before (mounting,
styling, measuring and drawing each: about a fifth of the app's work between starting its
event loop and that frame).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

KEYS_AT_LATEST = 1.0
"""Seconds after mounting when a held footer shows its keys even if no one said to."""


def shown_keys(screen: Screen[object]) -> tuple[object, ...]:
    """What a footer on `screen` would show: each shown binding, whether it is enabled, its
    tooltip; and the command palette's key."""
    palette = screen.app.COMMAND_PALETTE_BINDING
    return tuple(
        (
            binding.key,
            binding.action,
            binding.description,
            binding.group,
            enabled,
            tooltip,
        )
        for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items()
        if binding.show or key == palette
    )


class SteadyFooter(Footer):
    """`Footer`, minus the rebuilds that would put back the same keys."""

    def __init__(self, *, held: bool = False) -> None:
        super().__init__()
        self._shown: tuple[object, ...] | None = None
        self._held = held

    def on_mount(self) -> None:
        """Show the keys at the latest `KEYS_AT_LATEST` from now, if held."""
        if self._held:
            self.set_timer(KEYS_AT_LATEST, self.show_keys)

    def show_keys(self) -> None:
        """Stop holding the keys back, and build them in the footer's own turn (a key binds
        to the footer that composes it: composed in a screen's callback, it found none)."""
        if self._held:
            self._held = False
            self.call_later(self._show_held_keys)

    def _show_held_keys(self) -> None:
        if self.is_attached:
            self.bindings_changed(self.screen)

    def compose(self) -> ComposeResult:
        """Textual's keys, each already as compact as it will be: as the footer it is bound
        to, and the command palette's, which is bound to nothing, as compact as a key starts."""
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                compact = widget.has_class("-command-palette") or self.compact
                widget.set_reactive(FooterKey.compact, compact)
                widget.set_class(compact, "-compact", update=False)
            yield widget

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Rebuild only if the keys to show differ from those shown, and none while held."""
        if self._held:
            return
        if self.is_attached and screen is self.screen and self.app.app_focus:
            shown = shown_keys(screen)
            if shown == self._shown:
                return
            self._shown = shown
        super().bindings_changed(screen)
