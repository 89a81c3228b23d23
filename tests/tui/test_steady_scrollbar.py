"""The list's scrollbar looks as Textual's own would at every step, and is not drawn again when
the count changes under a thumb that stays where it was (5 ms of every key at 100,000 issues)."""

from __future__ import annotations

import random

from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip

from tracker_tui.widgets.steady_scrollbar import SteadyScrollBar, steady_vertical_scrollbar


class Tall(ScrollView):
    """A scrolling area of `virtual_size` rows with Textual's own scrollbar."""

    DEFAULT_CSS = "Tall { width: 1fr; height: 1fr; }"

    def render_line(self, y: int) -> Strip:
        return Strip.blank(self.size.width)


class SteadyTall(Tall):
    """The same, with the steady scrollbar (as the issue list has it)."""

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        return steady_vertical_scrollbar(self)


class Side(App[None]):
    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Tall()
            yield SteadyTall()


def drawn(bar: ScrollBar) -> list[list[tuple[str, str]]]:
    """The bar's lines as the screen gets them (Textual keeps them until a refresh)."""
    region = Region(0, 0, bar.size.width, bar.size.height)
    return [[(seg.text, str(seg.style)) for seg in strip] for strip in bar.render_lines(region)]


async def test_the_steady_bar_looks_like_textuals_own_through_every_change() -> None:
    rnd = random.Random(18)
    app = Side()
    async with app.run_test(size=(60, 20)) as pilot:
        plain, steady = app.query_one(Tall), app.query_one(SteadyTall)
        for step in range(120):
            rows = rnd.choice([5, 40, 300, 3_000, 100_000, rnd.randint(1, 200_000)])
            for view in (plain, steady):
                view.virtual_size = Size(10, rows)
            if step % 3 == 0:
                top = rnd.randint(0, rows)
                for view in (plain, steady):
                    view.scroll_to(y=top, animate=False, immediate=True)
            if step % 40 == 39:
                await pilot.resize_terminal(60, rnd.choice([12, 20, 31]))
            await pilot.pause()
            assert isinstance(steady.vertical_scrollbar, SteadyScrollBar)
            assert steady.vertical_scrollbar.display == plain.vertical_scrollbar.display
            if plain.vertical_scrollbar.display:
                assert drawn(steady.vertical_scrollbar) == drawn(plain.vertical_scrollbar), step


async def test_a_count_that_leaves_the_thumb_where_it_was_draws_nothing() -> None:
    app = Side()
    async with app.run_test(size=(60, 20)) as pilot:
        steady = app.query_one(SteadyTall)
        steady.virtual_size = Size(10, 100_000)
        await pilot.pause()
        bar = steady.vertical_scrollbar
        before = drawn(bar)
        drawn_lines = 0
        render_line = bar.render_line

        def counted(y: int) -> Strip:
            """Called for the lines Textual draws again, not for those it kept."""
            nonlocal drawn_lines
            drawn_lines += 1
            return render_line(y)

        bar.render_line = counted  # type: ignore[method-assign]
        for rows in (99_000, 64_000, 3_000, 100_000):
            steady.virtual_size = Size(10, rows)
            await pilot.pause()
        assert drawn_lines == 0
        steady.scroll_to(y=50_000, animate=False, immediate=True)
        await pilot.pause()
        assert drawn_lines == bar.size.height
        assert drawn(bar) != before
