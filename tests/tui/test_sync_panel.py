"""The sync panel over a real cache: state, failed writes, conflicts settled field by field."""

from __future__ import annotations

from datetime import timedelta

from textual.widgets import OptionList, Static
from tui_support import NOW, AppFactory, settle

from cache import Cache, EntryState, FieldConflict, Resource
from tracker_tui.messages import SyncStatusChanged
from tracker_tui.screens.issue_form import IssueFormScreen
from tracker_tui.screens.sync_panel import SyncPanelScreen

SIZE = (120, 36)


def make_conflict(cache: Cache, issue_id: str = "iss_000119") -> int:
    """An edit of the title that the server's copy contradicts, parked as a conflict."""
    entry = cache.update(Resource.ISSUES, issue_id, {"title": "Mine"})
    assert entry is not None
    cache.mark_sending(entry.id)
    [conflict] = cache.record_conflicts(
        entry.id, [FieldConflict("title", entry.base["title"], "Mine", "Theirs")]
    )
    return conflict.id


def make_failure(cache: Cache, issue_id: str = "iss_000118") -> int:
    entry = cache.update(Resource.ISSUES, issue_id, {"title": f"Renamed {issue_id}"})
    assert entry is not None
    cache.mark_sending(entry.id)
    cache.mark_failed(entry.id, "invalid_request: title is locked")
    return entry.id


def report(online: bool = True) -> SyncStatusChanged:
    return SyncStatusChanged(
        profile="work",
        online=online,
        pending_writes=2,
        budget_minute=57,
        budget_day=9_876,
        last_sync=NOW - timedelta(minutes=2),
    )


async def test_panel_shows_state_failures_and_conflicts(
    app_factory: AppFactory, cache: Cache
) -> None:
    make_conflict(cache)
    make_failure(cache)
    cache.update(Resource.ISSUES, "iss_000117", {"status": "canceled"})
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.post_message(report())
        await pilot.press("y")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SyncPanelScreen)
        summary = str(screen.query_one("#sync-summary", Static).render())
        assert "online" in summary and "last sync 2m ago" in summary
        assert "57 this minute, 9,876 today" in summary
        failed = screen.query_one("#failed", OptionList)
        assert "title is locked" in str(failed.get_option_at_index(0).prompt)
        assert screen.query_one("#conflicts", OptionList).option_count == 1
        pending = str(screen.query_one("#pending", Static).render())
        assert "status" in pending and "Canceled" in pending
        app.post_message(report(online=False))
        await settle(pilot)
        assert "offline" in str(screen.query_one("#sync-summary", Static).render())


async def test_taking_theirs_settles_the_conflict(app_factory: AppFactory, cache: Cache) -> None:
    conflict_id = make_conflict(cache)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        assert "No conflicts." in str(
            app.screen.query_one("#conflicts", OptionList).get_option_at_index(0).prompt
        )
    assert cache.conflicts() == []
    assert all(entry.state is not EntryState.CONFLICT for entry in cache.outbox())
    assert conflict_id not in [conflict.id for conflict in cache.conflicts()]


async def test_keeping_mine_requeues_the_edit(app_factory: AppFactory, cache: Cache) -> None:
    make_conflict(cache)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
    assert cache.conflicts() == []
    assert [entry.state for entry in cache.outbox()] == [EntryState.PENDING]


async def test_failed_writes_are_retried_discarded_or_edited(
    app_factory: AppFactory, cache: Cache
) -> None:
    first = make_failure(cache, "iss_000118")
    second = make_failure(cache, "iss_000110")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert cache.outbox_entry(first).state is EntryState.PENDING
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, IssueFormScreen)
        assert app.screen.issue_id == "iss_000110"
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
    assert [entry.id for entry in cache.outbox([EntryState.FAILED])] == []
    assert second not in [entry.id for entry in cache.outbox()]
