"""Lines that go to the screen as the widget drew them, when its CSS would change nothing.

Textual styles every line a widget draws (`StylesCache.render_line`: borders, padding,
outline, tint, opacity) and copies it into a new strip even when there is none of that. The copy
loses what the drawn strip keeps of itself, its filtered copy above all, so a widget that keeps
its drawn lines (the issue list keeps its rows, `IssueList._row_strips`) had each of them
filtered again on every frame that showed it: half of a new query's 37 lines, 2 of 5 ms at
100,000 issues (issue 18).

`PlainLines` hands the drawn strip on as it is while the widget has none of that styling, and
styles it as Textual does otherwise; which lines are drawn again (the dirty ones) and the
app's filters stay Textual's. Textual is pinned below 8.3 (`pyproject.toml`), and
tests/tui/test_list_row_strips.py compares these lines with Textual's own styling of them.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.terminal_theme import TerminalTheme
from textual._styles_cache import StylesCache
from textual.color import Color
from textual.content import Content
from textual.css.styles import StylesBase
from textual.geometry import Size, Spacing
from textual.strip import Strip
from textual.style import Style

Label = tuple[Content, Color, Color, Style] | None
"""A border's title or subtitle, as Textual passes it."""


class PlainLines(StylesCache):
    """A widget's lines cache that styles a line only when its CSS asks for it."""

    def render_line(
        self,
        styles: StylesBase,
        y: int,
        size: Size,
        content_size: Size,
        padding: Spacing,
        base_background: Color,
        background: Color,
        render_content_line: Callable[[int], Strip],
        border_title: Label,
        border_subtitle: Label,
        opacity: float,
        ansi_theme: TerminalTheme,
        native_ansi: bool,
    ) -> Strip:
        if plain(styles, size, content_size, padding, opacity):
            inner, _outer = self.get_inner_outer(base_background, background)
            return render_content_line(y).adjust_cell_length(size.width, inner.rich_style)
        return super().render_line(
            styles,
            y,
            size,
            content_size,
            padding,
            base_background,
            background,
            render_content_line,
            border_title,
            border_subtitle,
            opacity,
            ansi_theme,
            native_ansi,
        )


def plain(
    styles: StylesBase, size: Size, content_size: Size, padding: Spacing, opacity: float
) -> bool:
    """Whether Textual's styling would leave a widget's lines as drawn: they fill it, and
    nothing lies around or over them."""
    return (
        content_size == size
        and not any(padding)
        and not any(edge for edge, _color in styles.border)
        and not any(edge for edge, _color in styles.outline)
        and not styles.tint.a
        and opacity == 1.0
        and styles.text_opacity == 1.0
        and (not styles.has_rule("hatch") or styles.hatch == "none")
    )
