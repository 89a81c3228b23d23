"""A new query's rows come before its count: the list shows them at once, the chip bar says
"counting…" until the count of that very query arrives, and a count nobody waits for any more
is stopped and never shown."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tui_support import AppFactory, FakeIssueSource, Notices, issue_list, settle

from cache import IssueFilter
from tracker_tui.app import TrackerApp
from tracker_tui.data.source import IssueQuery
from tracker_tui.widgets.filter_chips import FilterChips

SIZE = (120, 36)
SIZE_OF_LIST = 5000
HELD_AT_MOST = 500
"""Hundredths of a second a held count waits at most (a list that never stops it, or never
shows rows before it, fails the test instead of hanging it)."""
TODO = IssueQuery(IssueFilter(status=frozenset({"todo"})))
DONE = IssueQuery(IssueFilter(status=frozenset({"done"})))


def chips_text(app: TrackerApp) -> str:
    return app.screen.query_one(FilterChips).render().plain


class HeldCounts(FakeIssueSource):
    """Counts of `held` wait for `release` (or for their `stop` to say the count is no longer
    wanted, which is then recorded and ends the count as a source may: by raising)."""

    def __init__(self, held: IssueQuery) -> None:
        super().__init__(SIZE_OF_LIST)
        self.held = held
        self.release = threading.Event()
        self.waiting = threading.Event()
        self.stopped = threading.Event()

    def count(self, query: IssueQuery, stop: Callable[[], bool] | None = None) -> int:
        if query.filter_key == self.held.filter_key:
            self.waiting.set()
            for _ in range(HELD_AT_MOST):
                if self.release.wait(0.01):
                    break
                if stop is not None and stop():
                    self.stopped.set()
                    raise RuntimeError("count stopped")
        return super().count(query, stop)


async def until(pilot: Any, condition: Callable[[], bool]) -> None:
    for _ in range(500):
        if condition():
            return
        await pilot.pause(0.01)
    raise AssertionError("the condition never held")


async def test_a_new_query_shows_its_rows_before_its_count(app_factory: AppFactory) -> None:
    source = HeldCounts(TODO)
    app = app_factory(source)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        assert "5,000 issues" in chips_text(app)
        issues.issue_query = TODO
        await until(pilot, source.waiting.is_set)
        await until(pilot, lambda: issues.highlighted_row is not None)
        row = issues.highlighted_row
        assert row is not None and row.status == "todo"
        assert issues.count is None
        assert "counting…" in chips_text(app)
        assert "5,000 issues" not in chips_text(app)
        source.release.set()
        await settle(pilot)
        expected = FakeIssueSource(SIZE_OF_LIST).count(TODO)
        assert issues.count == expected
        assert f"{expected:,} issues" in chips_text(app)
        assert issues.virtual_size.height == expected + 1


async def test_a_late_count_of_an_older_query_is_dropped(app_factory: AppFactory) -> None:
    source = HeldCounts(TODO)
    app = app_factory(source)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        issues.issue_query = TODO
        await until(pilot, source.waiting.is_set)
        source.held = IssueQuery(IssueFilter(text="nothing holds this"))
        issues.issue_query = DONE
        await until(pilot, lambda: issues.count is not None)
        expected = FakeIssueSource(SIZE_OF_LIST).count(DONE)
        assert issues.count == expected
        source.release.set()
        await pilot.pause(0.1)
        await settle(pilot)
        assert issues.count == expected
        assert f"{expected:,} issues" in chips_text(app)
        row = issues.highlighted_row
        assert row is not None and row.status == "done"


async def test_the_next_query_stops_the_count_of_the_one_before(
    app_factory: AppFactory, notices: Notices
) -> None:
    """Typing on stops the count of what was typed before (it would only hold a core), and a
    stopped count is no failure to tell the user about."""
    source = HeldCounts(TODO)
    app = app_factory(source)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        issues.issue_query = TODO
        await until(pilot, source.waiting.is_set)
        issues.issue_query = DONE
        await until(pilot, source.stopped.is_set)
        await settle(pilot)
        assert issues.count == FakeIssueSource(SIZE_OF_LIST).count(DONE)
        assert not [text for text in notices.texts() if "Could not" in text]


async def test_rows_that_are_all_there_is_need_no_count(app_factory: AppFactory) -> None:
    """Fewer rows than asked for are the whole list: no count is asked, none is waited for."""
    source = HeldCounts(IssueQuery(IssueFilter(text="nothing holds this")))
    app = app_factory(source)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        counts = source.counts
        issues = issue_list(app)
        query = IssueQuery(IssueFilter(text="speed up export on safari"))
        expected = FakeIssueSource(SIZE_OF_LIST).count(query)
        assert 0 < expected < 64
        issues.issue_query = query
        await settle(pilot)
        assert issues.count == expected
        assert source.counts == counts
        assert f"{expected:,} issues" in chips_text(app)


async def test_the_chips_never_show_the_count_of_the_query_before(
    app_factory: AppFactory,
) -> None:
    """Between a new filter and its first rows the chips say "counting…", not the count of
    the filter before (which the new chips would seem to claim)."""
    source = FakeIssueSource(SIZE_OF_LIST)
    app = app_factory(source)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "5,000 issues" in chips_text(app)
        source.gate = threading.Event()
        screen: Any = app.screen
        screen.issue_query = DONE
        await pilot.pause(0.05)
        assert "status: Done" in chips_text(app)
        assert "counting…" in chips_text(app)
        assert "5,000 issues" not in chips_text(app)
        source.gate.set()
        await settle(pilot)
        expected = FakeIssueSource(SIZE_OF_LIST).count(DONE)
        assert f"{expected:,} issues" in chips_text(app)


class FailingCount(FakeIssueSource):
    """Counts of `failing` fail (a disk error, a corrupt page), after its rows were read."""

    def __init__(self, failing: IssueQuery) -> None:
        super().__init__(SIZE_OF_LIST)
        self.failing = failing

    def count(self, query: IssueQuery, stop: Callable[[], bool] | None = None) -> int:
        if query.filter_key == self.failing.filter_key:
            raise RuntimeError("disk I/O error")
        return super().count(query, stop)


async def test_a_count_that_failed_is_said_unknown_not_still_counting(
    app_factory: AppFactory, notices: Notices
) -> None:
    app = app_factory(FailingCount(TODO))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        issues.issue_query = TODO
        await settle(pilot)
        assert issues.count is None
        assert "count unknown" in chips_text(app)
        assert "counting…" not in chips_text(app)
        assert any("disk I/O error" in text for text in notices.texts())
        issues.issue_query = DONE
        await settle(pilot)
        expected = FakeIssueSource(SIZE_OF_LIST).count(DONE)
        assert f"{expected:,} issues" in chips_text(app)
        assert "count unknown" not in chips_text(app)
