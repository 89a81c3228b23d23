"""What the lines drawn for a key leave behind: nothing for the cyclic garbage collector when
they are replaced (tracker_tui/widgets/strip_cycles.py), and no more strips than drawing needs
(each with seven caches: the objects allocated per key set off the collections that landed in
keys at 100,000 issues, issue 18)."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from rich.segment import Segment
from textual.cache import LRUCache
from textual.geometry import Region
from textual.strip import Strip
from tui_support import AppFactory, settle

from tracker_tui.widgets import strip_cycles
from tracker_tui.widgets.issue_list import IssueList

SIZE = (120, 36)


def test_a_strip_divides_as_textual_divides_it() -> None:
    strip = Strip([Segment("abc"), Segment("defg")])
    divide = strip_cycles._divide
    assert divide(strip, [7]) == [strip]
    assert divide(strip, [7, 9]) == [strip]
    assert not strip._divide_cache
    assert [piece.text for piece in divide(strip, [2, 7])] == ["ab", "cdefg"]
    assert [piece.text for piece in divide(strip, [3, 5, 7])] == ["abc", "de", "fg"]


async def test_the_lines_of_a_key_leave_no_cyclic_garbage(app_factory: AppFactory) -> None:
    """`m` twice redraws every row of the list, the chips and the footer's keys."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("m", "m")
        await settle(pilot)
        gc.collect()
        gc.disable()
        try:
            await pilot.press("m", "m")
            await settle(pilot)
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            strips = sum(isinstance(thing, Strip) for thing in gc.garbage)
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
        assert strips == 0


async def test_a_row_is_drawn_at_its_full_width_at_once(
    app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line of the list spans the cell under its scrollbar: drawn one cell short, Textual
    copied every row to pad it (a fourth strip per row, with its seven caches)."""
    made: list[int] = []
    drawn: list[int] = []
    drawing: list[bool] = []
    strip_init = Strip.__init__
    render_lines = IssueList.render_lines

    def counting_init(self: Strip, *args: Any, **kwargs: Any) -> None:
        if drawing:
            made[-1] += 1
        strip_init(self, *args, **kwargs)

    def counting_lines(self: IssueList, crop: Region) -> list[Strip]:
        """The strips made for the list's lines: its own, Textual's styled and filtered ones
        (the compositor then cuts each at the scrollbar's edge, whatever its width)."""
        made.append(0)
        drawing.append(True)
        try:
            lines = render_lines(self, crop)
        finally:
            drawing.pop()
        drawn.append(len(lines))
        return lines

    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = app.screen.query_one(IssueList)
        assert issues.show_vertical_scrollbar
        monkeypatch.setattr(Strip, "__init__", counting_init)
        monkeypatch.setattr(IssueList, "render_lines", counting_lines)
        issues.refresh()
        await pilot.pause()
        monkeypatch.undo()
        assert sum(drawn) >= SIZE[1] - 5
        assert sum(made) <= 3 * sum(drawn)


def test_a_cleared_line_cache_leaves_no_cyclic_garbage() -> None:
    """Textual's `LRUCache` rings its entries: cleared, they waited for the cyclic collector."""
    strip_cycles.install()
    cache: LRUCache[int, Strip] = LRUCache(8)
    for index in range(12):
        cache.set(index, Strip([Segment(str(index))]))
    gc.collect()
    gc.disable()
    try:
        cache.clear()
        assert len(cache) == 0 and cache.get(11) is None
        cache.set(1, Strip([Segment("again")]))
        assert cache.get(1) is not None
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        strips = sum(isinstance(thing, Strip) for thing in gc.garbage)
        links = sum(isinstance(thing, list) for thing in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert (strips, links) == (0, 0)
