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
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


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

    def __init__(self) -> None:
        super().__init__()
        self._shown: tuple[object, ...] | None = None

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
        """Rebuild only if the keys to show differ from those shown."""
        if self.is_attached and screen is self.screen and self.app.app_focus:
            shown = shown_keys(screen)
            if shown == self._shown:
                return
            self._shown = shown
        super().bindings_changed(screen)
