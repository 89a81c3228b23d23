"""Rows the list drew before are kept as drawn (`IssueList._row_strips`), and the list's lines
go to the screen without Textual's styling pass while nothing in its CSS would change them
(tracker_tui/widgets/plain_lines.py): a backspace or a filter toggled back drew a screen of
rows afresh, 20-35 ms of a key at 100,000 issues (issue 18). What is checked here: the lines
are what the styled, uncached path draws, after every kind of change a row can go through, and
a kept row is not drawn again."""

from __future__ import annotations

from typing import Any

import pytest
from rich.segment import Segment
from textual.cache import LRUCache
from textual.geometry import Region
from textual.strip import Strip
from tui_support import AppFactory, issue_list, screen_lines, settle

from cache import Cache, JsonObject, Resource, SyncState
from tracker_tui.messages import CacheChanged
from tracker_tui.widgets import issue_list as issue_list_module
from tracker_tui.widgets import plain_lines
from tracker_tui.widgets.issue_columns import render_row
from tracker_tui.widgets.issue_list import HEADER_LINES, IssueList

SIZE = (120, 36)


def segments(strips: list[Strip]) -> list[list[Segment]]:
    return [list(strip) for strip in strips]


def styled_afresh(issues: IssueList, crop: Region, monkeypatch: pytest.MonkeyPatch) -> list[Strip]:
    """The lines in `crop` as Textual's styling pass draws them, with no row kept."""
    issues._styles_cache.clear()
    with monkeypatch.context() as patch:
        patch.setattr(plain_lines, "plain", lambda *_: False)
        patch.setattr(issues, "_row_strips", LRUCache(issue_list_module.ROW_STRIPS))
        patch.setattr(issues, "_row_strips_for", ())
        lines = issues.render_lines(crop)
    issues._styles_cache.clear()
    return lines


def assert_drawn_as_afresh(issues: IssueList, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = Region(0, 0, issues.region.width, issues.region.height)
    narrow = Region(3, 2, 40, 10)
    for crop in (whole, narrow):
        assert segments(issues.render_lines(crop)) == segments(
            styled_afresh(issues, crop, monkeypatch)
        )


def edit_in_place(cache: Cache, issue_id: str, fields: JsonObject) -> None:
    record = cache.server.server_record(Resource.ISSUES, issue_id)
    assert record is not None
    cache.server.apply_page(Resource.ISSUES, [{**record, **fields}])


def is_plain(issues: IssueList) -> bool:
    styles = issues.styles
    return plain_lines.plain(
        styles, issues.region.size, issues.content_region.size, styles.padding, issues.opacity
    )


async def test_the_list_s_own_styles_take_the_plain_path(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        assert isinstance(issues._styles_cache, plain_lines.PlainLines)
        assert is_plain(issues)
        issues.styles.padding = (0, 1)
        await settle(pilot)
        assert not is_plain(issues)
        issues.styles.padding = 0
        issues.styles.border = ("round", "red")
        await settle(pilot)
        assert not is_plain(issues)


async def test_the_lines_are_what_textual_s_styling_draws_through_every_change(
    app_factory: AppFactory, cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        assert_drawn_as_afresh(issues, monkeypatch)
        steps: list[tuple[str, ...]] = [
            ("j", "j", "j"),
            ("space",),
            ("j", "space", "k"),
            ("slash", "a"),
            ("backspace",),
            ("escape",),
            ("m",),
            ("F",),
            ("pagedown",),
            ("x",),
            ("g",),
        ]
        for keys in steps:
            await pilot.press(*keys)
            await settle(pilot)
            assert_drawn_as_afresh(issues, monkeypatch)
        row = issues.row(issues.cursor + 1)
        assert row is not None
        edit_in_place(cache, row.id, {"title": "Renamed while kept"})
        app.post_message(CacheChanged())
        await settle(pilot)
        assert_drawn_as_afresh(issues, monkeypatch)
        line = issues.cursor - issues.scroll_offset.y + 1 + HEADER_LINES
        assert "Renamed while kept" in screen_lines(app)[issues.region.y + line]
        shown = issues.highlighted_row
        assert shown is not None
        cache.outbox.update(Resource.ISSUES, shown.id, {"description": "Not in the list"})
        app.post_message(CacheChanged())
        await settle(pilot)
        edited = issues.highlighted_row
        assert edited is not None and (edited.id, edited.title) == (shown.id, shown.title)
        assert edited.sync_state != shown.sync_state
        assert_drawn_as_afresh(issues, monkeypatch)
        issues.blur()
        await settle(pilot)
        assert_drawn_as_afresh(issues, monkeypatch)


async def test_a_row_brought_back_is_not_drawn_again(
    app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`m` and `m` again: the second brings back the rows of the first screen."""
    drawn: list[str] = []
    render_row = issue_list_module.render_row

    def counted(row: Any, *args: Any, **kwargs: Any) -> Strip:
        drawn.append(row.id)
        return render_row(row, *args, **kwargs)

    monkeypatch.setattr(issue_list_module, "render_row", counted)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first_screen = len(drawn)
        assert first_screen >= SIZE[1] - 8
        await pilot.press("m")
        await settle(pilot)
        mine = len(drawn) - first_screen
        assert mine > 0
        drawn.clear()
        await pilot.press("m")
        await settle(pilot)
        assert drawn == []
        await pilot.press("j")
        await settle(pilot)
        assert 1 <= len(drawn) <= 2  # at most the rows the cursor left and came to


async def test_a_row_that_would_read_differently_is_drawn_again(app_factory: AppFactory) -> None:
    """Each thing a row's line shows, changed alone after the row was kept."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        render_pass = issues._render_pass()
        line = issues._line(HEADER_LINES + 1, render_pass)
        row = line.row
        assert row is not None and row.sync_state is SyncState.SYNCED and not line.cursor
        kept = issues._row_strip(line, render_pass)
        assert issues._row_strip(line, render_pass) is kept
        variants = [
            line._replace(row=row.replace(cells={**row.cells, "title": "Another title"})),
            line._replace(row=row.replace(labels=(*row.labels, "another"))),
            line._replace(row=row.replace(sync_state=SyncState.PENDING)),
            line._replace(row=row.replace(searched=True)),
            line._replace(times=("a moment ago",) * len(line.times)),
            line._replace(marked=True),
            line._replace(cursor=True),
        ]
        for variant in variants:
            assert variant != line
            drawn = issues._row_strip(variant, render_pass)
            assert drawn is not kept
            assert variant.row is not None
            fresh = render_row(
                variant.row,
                render_pass.columns,
                now=render_pass.now,
                names=issues.names,
                marked=variant.marked,
                cursor=variant.cursor,
                styles=variant.styles,
                fill=render_pass.full - variant.width,
            )
            assert list(drawn) == list(fresh)
