"""A re-read (the cache changed) redraws only the lines of the list that would read differently.

A pull's page mostly changes issues far from the viewport, and each `CacheChanged` re-reads the
rows on screen: drawing them all again cost the event loop most of a re-read at 100,000 issues
(docs/architecture.md#keys-during-a-pull). What changed must still show: a row's new values, a
time that reads differently, a new count; and the highlight stays on its issue.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from textual.strip import Strip
from textual.widget import Widget
from tui_support import ME, NOW, AppFactory, issue_list, screen_lines, settle

from cache import Cache, JsonObject, Resource
from sync.pull.report import PullProgress
from tracker_tui.app import make_app
from tracker_tui.formatting import relative_time
from tracker_tui.messages import CacheChanged, SyncStatusChanged
from tracker_tui.sync_link import OfflineLink
from tracker_tui.widgets.issue_list import HEADER_LINES, IssueList

SIZE = (120, 36)


class Drawn:
    """The list's lines drawn (`render_line` calls), by line of the viewport, and the
    answers to its reads that arrived (`rows_arrived` calls)."""

    def __init__(self) -> None:
        self.lines: list[int] = []
        self.arrivals = 0

    def reset(self) -> None:
        self.lines.clear()
        self.arrivals = 0


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> Iterator[Drawn]:
    record = Drawn()
    render_line = IssueList.render_line
    rows_arrived = IssueList.rows_arrived

    def counted_render_line(self: IssueList, y: int) -> Strip:
        record.lines.append(y)
        return render_line(self, y)

    def counted_rows_arrived(self: IssueList, **kwargs: Any) -> None:
        record.arrivals += 1
        rows_arrived(self, **kwargs)

    monkeypatch.setattr(IssueList, "render_line", counted_render_line)
    monkeypatch.setattr(IssueList, "rows_arrived", counted_rows_arrived)
    yield record


def edit_in_place(cache: Cache, issue_id: str, fields: JsonObject) -> None:
    """The server's copy of an issue changed without moving it in the default order (its
    `updated_at` kept), as a pull stores it."""
    record = cache.server.server_record(Resource.ISSUES, issue_id)
    assert record is not None
    cache.server.apply_page(Resource.ISSUES, [{**record, **fields}])


def state(issues: IssueList) -> tuple[str | None, int, int, int | None]:
    row = issues.highlighted_row
    return (row.id if row else None, issues.cursor, issues.scroll_offset.y, issues.count)


async def test_a_reread_that_brings_back_the_same_rows_draws_no_line(
    app_factory: AppFactory, cache: Cache, drawn: Drawn
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        await pilot.press("pagedown", "j", "j")
        await settle(pilot)
        before, shown = state(issues), screen_lines(app)
        drawn.reset()
        for _ in range(3):
            app.post_message(CacheChanged())
            await settle(pilot)
        assert drawn.arrivals >= 3
        assert drawn.lines == []
        assert state(issues) == before
        assert screen_lines(app) == shown


async def test_a_reread_that_changes_nothing_draws_no_widget_again(
    app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not the chips, the status bar nor the footer either: the app's revision counter that
    tells screens to re-read is no reason to repaint the screen (it drew all of it again,
    14 ms of the event loop at 120x40)."""
    rendered: list[str] = []
    render_lines = Widget.render_lines

    def counted(self: Widget, crop: Any) -> list[Strip]:
        rendered.append(type(self).__name__)
        return render_lines(self, crop)

    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        monkeypatch.setattr(Widget, "render_lines", counted)
        for _ in range(2):
            app.post_message(CacheChanged())
            await settle(pilot)
        assert rendered == []


async def test_a_pull_s_progress_redraws_the_status_bar_alone(
    app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine reports twice a second during a pull: the status bar shows it, and no other
    widget draws its content again (the whole screen did: 7-9 ms of the event loop a report
    at 120x40, 3.4-3.7 without). Textual's `Widget._render` is where a widget's content is
    drawn anew rather than taken from its cache of lines."""
    rendered: list[str] = []
    render = Widget._render

    def counted(self: Widget) -> Any:
        rendered.append(type(self).__name__)
        return render(self)

    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        monkeypatch.setattr(Widget, "_render", counted)
        for received in (2_000, 4_000):
            progress = PullProgress("issues", received // 100, received, 100_000)
            app.post_message(SyncStatusChanged("default", progress=progress))
            await settle(pilot)
        assert rendered and set(rendered) == {"StatusBar"}
        assert any("4,000" in line for line in screen_lines(app))


async def test_a_reread_redraws_the_changed_row_in_view_and_no_other(
    app_factory: AppFactory, cache: Cache, drawn: Drawn
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        await pilot.press("j", "j", "j")
        await settle(pilot)
        before = state(issues)
        edited = issues.row(7)
        assert edited is not None and edited.id != before[0]
        edit_in_place(cache, edited.id, {"title": "Renamed while in view"})
        drawn.reset()
        app.post_message(CacheChanged())
        await settle(pilot)
        assert drawn.arrivals >= 1
        assert drawn.lines == [7 + HEADER_LINES]
        row = issues.row(7)
        assert row is not None and (row.id, row.title) == (edited.id, "Renamed while in view")
        assert state(issues) == before
        list_top = issues.region.y
        assert "Renamed while in view" in screen_lines(app)[list_top + 7 + HEADER_LINES]


async def test_a_reread_redraws_the_highlighted_row_when_it_changed_and_keeps_it_highlighted(
    app_factory: AppFactory, cache: Cache, drawn: Drawn
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        await pilot.press("j", "j")
        await settle(pilot)
        before = state(issues)
        assert before[0] is not None
        edit_in_place(cache, before[0], {"title": "The highlighted one, renamed"})
        drawn.reset()
        app.post_message(CacheChanged())
        await settle(pilot)
        assert drawn.lines == [2 + HEADER_LINES]
        assert state(issues) == before
        row = issues.highlighted_row
        assert row is not None and row.title == "The highlighted one, renamed"


async def test_rows_that_shift_are_redrawn_and_the_count_shows(
    app_factory: AppFactory, cache: Cache, drawn: Drawn
) -> None:
    """An issue arriving at the top moves every row of the screen: all of them read
    differently, and the chips count it."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        first = issues.row(0)
        assert first is not None
        record = cache.server.server_record(Resource.ISSUES, first.id)
        assert record is not None
        newest = (NOW + timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        cache.server.apply_page(
            Resource.ISSUES,
            [{**record, "id": "iss_arrived", "title": "Arrived", "updated_at": newest}],
        )
        drawn.reset()
        app.post_message(CacheChanged())
        await settle(pilot)
        assert issues.count == 501
        assert set(range(HEADER_LINES, issues.visible_rows + HEADER_LINES)) <= set(drawn.lines)
        top = issues.row(0)
        assert top is not None and top.id == "iss_arrived"
        assert "Arrived" in screen_lines(app)[issues.region.y + HEADER_LINES]
        assert any("501 issues" in line for line in screen_lines(app))


async def test_a_reread_redraws_the_times_the_clock_changed(cache: Cache, drawn: Drawn) -> None:
    """Nothing in the cache changed, but the rows' "updated" times read differently now."""
    now = [NOW]

    def clock() -> datetime:
        return now[0]

    app = make_app(cache=cache, clock=clock, sync=OfflineLink(), me=ME)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        drawn.reset()
        now[0] = NOW + timedelta(days=400)
        app.post_message(CacheChanged())
        await settle(pilot)
        assert set(range(HEADER_LINES, issues.visible_rows + HEADER_LINES)) <= set(drawn.lines)
        row = issues.row(0)
        assert row is not None
        updated = datetime.fromisoformat(str(row.cells["updated_at"]).replace("Z", "+00:00"))
        line = screen_lines(app)[issues.region.y + HEADER_LINES]
        assert relative_time(updated, now[0]) in line
