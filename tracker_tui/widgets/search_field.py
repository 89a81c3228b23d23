"""The issue list's search field: an `Input` whose keystrokes redraw the field, not the screen.

Textual's `Input` sets its virtual size to the width of its text on every change, and the virtual
size is a layout reactive: each letter typed laid out the whole list screen again (every
widget's place, then a redraw of what moved), 3-5 ms of every search key at 100,000 issues
(issue 18). The field's size is fixed by its CSS whatever it holds; only its own horizontal
scrolling depends on the text's width, and that follows the virtual size set here at once.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Input


class SearchField(Input):
    """A search input that never asks for a layout while its size is set by CSS."""

    def _watch_value(self, value: str) -> None:
        """Size the text's scroll area without laying out the screen (Input's own watcher then
        finds the size unchanged); an `auto` width or height still lays out, as it must."""
        if not self.styles.auto_dimensions:
            self.set_reactive(Widget.virtual_size, Size(self.content_width, 1))
            self.scroll_x = self.validate_scroll_x(self.scroll_x)
        super()._watch_value(value)
