"""A vertical scrollbar that is drawn again only when it would look different.

Textual repaints a scrollbar whenever its window's virtual size or position changes. The issue
list's virtual size is its count, which changes with nearly every key typed into a search or a
filter, while the thumb over 100,000 rows (or 3,000) stays one cell at the top: the bar's 37
lines went through Textual's line pipeline again for every key, 5 ms of each at 100,000 issues
(issue 18; `benchmarks/tui.py --keys-home`). This one compares what it would draw with what it
last asked to draw, and lets a refresh that changes nothing go.
"""

from __future__ import annotations

from typing import Self

from rich.segment import Segment
from textual.geometry import Region, Size
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.widget import Widget

_Look = tuple[Size, tuple[Segment, ...]]


class SteadyScrollBar(ScrollBar):
    """`ScrollBar`, repainted only when its cells would change."""

    def __init__(self, vertical: bool = True, name: str | None = None, *, thickness: int = 1):
        super().__init__(vertical, name, thickness=thickness)
        self._asked: _Look | None = None
        """What the last refresh that went through was for."""

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        """Let a plain repaint go when the bar would look as it was last asked to."""
        if regions or layout or recompose or not repaint:
            self._asked = None
            return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)
        look = self._look()
        if look is not None and look == self._asked:
            return self
        self._asked = look
        return super().refresh()

    def _look(self) -> _Look | None:
        """The bar's cells as `render` would draw them now (None when that cannot be told:
        not mounted yet, or a renderer that is not Textual's)."""
        if self.parent is None or not self.is_attached:
            return None
        renderer = self.render()
        if type(renderer) is not ScrollBarRender:
            return None
        style = renderer.style if not isinstance(renderer.style, str) else None
        if style is None or style.bgcolor is None or style.color is None:
            return None
        size = self.size
        bar = renderer.render_bar(
            size=size.height if renderer.vertical else size.width,
            virtual_size=renderer.virtual_size,
            window_size=renderer.window_size,
            position=renderer.position,
            thickness=size.width if renderer.vertical else size.height,
            vertical=renderer.vertical,
            back_color=style.bgcolor,
            bar_color=style.color,
        )
        return size, tuple(bar.segments)


def steady_vertical_scrollbar(widget: Widget) -> ScrollBar:
    """The vertical scrollbar of `widget`, made a `SteadyScrollBar` (as Textual's own property
    makes a `ScrollBar`, the first time it is asked for)."""
    if widget._vertical_scrollbar is None:
        thickness = widget.scrollbar_size_vertical
        bar = SteadyScrollBar(vertical=True, name="vertical", thickness=thickness)
        bar.display = False
        widget._vertical_scrollbar = bar
        widget.app._start_widget(widget, bar)
    return widget._vertical_scrollbar
