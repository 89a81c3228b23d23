"""The sync panel over a real cache: state, failed writes, conflicts settled field by field."""

from __future__ import annotations

from datetime import timedelta

from textual.content import Content
from textual.widgets import Input, OptionList, Static
from tui_support import NOW, AppFactory, settle

from cache import Cache, EntryState, FieldConflict, Resource
from sync.connection import Connection, ConnectionState
from sync.models import SkippedRecord
from sync.remembered import note_unreadable
from tracker_tui.data.outbox_counts import OutboxCounts, count_outbox
from tracker_tui.messages import SyncStatusChanged
from tracker_tui.screens.issue_form import IssueFormScreen
from tracker_tui.screens.sync_panel import SyncPanelScreen
from tracker_tui.sync_link import OfflineLink, Poster
from tracker_tui.widgets.status_bar import StatusBar

SIZE = (120, 36)


def make_conflict(cache: Cache, issue_id: str = "iss_000119") -> int:
    """An edit of the title that the server's copy contradicts, parked as a conflict."""
    entry = cache.outbox.update(Resource.ISSUES, issue_id, {"title": "Mine"})
    assert entry is not None
    cache.push.mark_sending(entry.id)
    [conflict] = cache.push.record_conflicts(
        entry.id, [FieldConflict("title", entry.base["title"], "Mine", "Theirs")]
    )
    return conflict.id


def make_failure(cache: Cache, issue_id: str = "iss_000118") -> int:
    entry = cache.outbox.update(Resource.ISSUES, issue_id, {"title": f"Renamed {issue_id}"})
    assert entry is not None
    cache.push.mark_sending(entry.id)
    cache.push.mark_failed(entry.id, "invalid_request: title is locked")
    return entry.id


def report(online: bool = True) -> SyncStatusChanged:
    """What the engine reports over the panel tests' outbox: a pending edit, a failed one,
    a conflicting field."""
    kind = Connection.ONLINE if online else Connection.OFFLINE
    return SyncStatusChanged(
        profile="work",
        connection=ConnectionState(kind),
        outbox=OutboxCounts(pending=1, failed=1, conflicts=1),
        budget_minute=57,
        budget_day=9_876,
        last_sync=NOW - timedelta(minutes=2),
    )


async def test_panel_shows_state_failures_and_conflicts(
    app_factory: AppFactory, cache: Cache
) -> None:
    make_conflict(cache)
    make_failure(cache)
    cache.outbox.update(Resource.ISSUES, "iss_000117", {"status": "canceled"})
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
        assert "budget left 57/min 9,876/day" in summary
        failed = screen.query_one("#failed", OptionList)
        assert "title is locked" in str(failed.get_option_at_index(0).prompt)
        assert screen.query_one("#conflicts", OptionList).option_count == 1
        pending = str(screen.query_one("#pending", Static).render())
        assert "status" in pending and "Canceled" in pending
        app.post_message(report(online=False))
        await settle(pilot)
        assert "offline" in str(screen.query_one("#sync-summary", Static).render())


async def test_panel_lists_the_records_the_pull_could_not_read(
    app_factory: AppFactory, cache: Cache
) -> None:
    """What the pull skipped (sync.remembered) is listed with why, and the section is
    not there when nothing was."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SyncPanelScreen)
        assert not screen.query_one("#unreadable", Static).display
        await pilot.press("escape")
        await settle(pilot)
        reason = "updated_at: Value error, Invalid isoformat string: 'yesterday'"
        note_unreadable(cache, "issues", [SkippedRecord(4, "iss_unread", reason, {})], [])
        await pilot.press("y")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SyncPanelScreen)
        listed = screen.query_one("#unreadable", Static)
        assert listed.display and screen.query_one("#unreadable-heading").display
        assert f"issues iss_unread  {reason}" in str(listed.render())


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
    assert cache.outbox.conflicts() == []
    assert all(entry.state is not EntryState.CONFLICT for entry in cache.outbox.entries())
    assert conflict_id not in [conflict.id for conflict in cache.outbox.conflicts()]


async def test_keeping_mine_requeues_the_edit(app_factory: AppFactory, cache: Cache) -> None:
    make_conflict(cache)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
    assert cache.outbox.conflicts() == []
    assert [entry.state for entry in cache.outbox.entries()] == [EntryState.PENDING]


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
        assert cache.outbox.entry(first).state is EntryState.PENDING
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, IssueFormScreen)
        assert app.screen.issue_id == "iss_000110"
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
    assert [entry.id for entry in cache.outbox.entries([EntryState.FAILED])] == []
    assert second not in [entry.id for entry in cache.outbox.entries()]


async def test_panel_names_issues_by_number_never_by_internal_id(
    app_factory: AppFactory, cache: Cache
) -> None:
    """Failed writes, conflicts and pending writes say "#N", as the list does (issue 14,
    defect 12's rule, in the sync panel)."""
    make_conflict(cache, "iss_000119")
    make_failure(cache, "iss_000118")
    cache.outbox.update(Resource.ISSUES, "iss_000117", {"status": "canceled"})
    numbers = {
        issue_id: detail.issue.number
        for issue_id in ("iss_000117", "iss_000118", "iss_000119")
        if (detail := cache.reads.issue(issue_id)) is not None
    }
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        screen = app.screen
        failed = str(screen.query_one("#failed", OptionList).get_option_at_index(0).prompt)
        conflict = screen.query_one("#conflicts", OptionList).get_option_at_index(0).prompt
        pending = str(screen.query_one("#pending", Static).render())
    conflict_text = " ".join(str(cell) for column in conflict.columns for cell in column.cells)
    assert f"#{numbers['iss_000118']} update issue" in failed
    assert f"#{numbers['iss_000119']} · title" in conflict_text
    assert f"#{numbers['iss_000117']} update issue" in pending
    shown = (failed + conflict_text + pending).replace("Renamed iss_000118", "")  # its title
    assert "iss_" not in shown


async def test_status_bar_and_panel_count_the_same_writes(
    app_factory: AppFactory, cache: Cache
) -> None:
    """One failed write and nothing else waiting: "0 pending · 1 failed" on the bar of every
    screen and on the panel, never "↑ 1 pending" on one and "1 failed" on the other (issue 14,
    defect 16)."""
    make_failure(cache)
    link = CountingLink(cache)
    app = app_factory(sync=link, profile="work")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        list_bar = app.screen.query_one(StatusBar).render().plain
        await pilot.press("y")
        await settle(pilot)
        panel = app.screen
        panel_bar = panel.query_one(StatusBar).render().plain
        subtitle = Content.from_markup(
            str(panel.query_one("#sync-summary", Static).border_subtitle)
        ).plain
    for text in (list_bar, panel_bar, subtitle):
        assert "↑ 0 pending · 1 failed" in text, text


class CountingLink(OfflineLink):
    """An engine stand-in that reports the counts of the cache's outbox, as the engine does."""

    def __init__(self, cache: Cache) -> None:
        super().__init__()
        self._cache = cache

    async def start(self, post: Poster) -> None:
        post(SyncStatusChanged("work", outbox=count_outbox(self._cache)))


def make_unsure(cache: Cache, *look_alikes: str) -> int:
    """A create whose answer was lost while the server holds records like it (issue 15): it
    may have made one of `look_alikes`."""
    cache.outbox.create(Resource.ISSUES, {"title": "Weekly review"})
    [entry] = cache.outbox.entries([EntryState.PENDING])
    cache.push.mark_sending(entry.id)
    cache.push.release(entry.id)
    found = [
        cache.server.server_record(Resource.ISSUES, issue_id) or {} for issue_id in look_alikes
    ]
    numbers = ", ".join(f"#{record['number']}" for record in found)
    cache.push.mark_unsure(entry.id, found, f"may be a duplicate: check {numbers}")
    return entry.id


async def test_an_unsure_create_is_shown_counted_and_settled_as_one_of_its_look_alikes(
    app_factory: AppFactory, cache: Cache
) -> None:
    """It shows in its own list with the records it may have made, the bar counts it, and
    `s` links it to the one the user picks: nothing more is sent."""
    entry_id = make_unsure(cache, "iss_000117", "iss_000118")
    first, second = (
        cache.server.server_record(Resource.ISSUES, f"iss_00011{n}") or {} for n in (7, 8)
    )
    app = app_factory(sync=CountingLink(cache), profile="work")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "1 unsure" in app.screen.query_one(StatusBar).render().plain
        await pilot.press("y")
        await settle(pilot)
        unsure = app.screen.query_one("#unsure", OptionList)
        shown = str(unsure.get_option_at_index(0).prompt)
        assert shown.startswith("new issue: Weekly review")
        assert f"may be a duplicate: check #{first['number']}, #{second['number']}" in shown
        assert app.screen.query_one("#failed", OptionList).option_count == 1  # "No failed"
        await pilot.press("s")
        await settle(pilot)
        choices = app.screen.query_one("#choices", OptionList)
        labels = [str(choices.get_option_at_index(i).prompt) for i in range(2)]
        assert labels == [f"#{record['number']} {record['title']}" for record in (first, second)]
        await pilot.press("down", "enter")
        await settle(pilot)
    assert cache.outbox.entry(entry_id).state is EntryState.DONE
    assert cache.push.linked(Resource.ISSUES, [second["id"]]) == {second["id"]}
    assert cache.outbox.entries([EntryState.PENDING, EntryState.UNSURE]) == []


async def test_an_unsure_create_is_sent_anyway_or_discarded(
    app_factory: AppFactory, cache: Cache
) -> None:
    sent = make_unsure(cache, "iss_000117")
    dropped = make_unsure(cache, "iss_000118")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert cache.outbox.entry(sent).state is EntryState.PENDING
        app.screen.query_one("#unsure", OptionList).focus()
        await pilot.press("x")
        await settle(pilot)
    assert dropped not in [entry.id for entry in cache.outbox.entries()]


async def test_editing_a_failed_write_starts_from_what_was_refused_and_replaces_it(
    app_factory: AppFactory, cache: Cache
) -> None:
    """`e` once opened the form on the server's values: what the user typed was only in the
    failed write. Now the form shows it, and saving queues the fix and drops the failed write."""
    failed = make_failure(cache, "iss_000118")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, IssueFormScreen)
        title = app.screen.query_one("#title", Input)
        assert title.value == "Renamed iss_000118"
        title.value = "Renamed, shorter"
        await pilot.press("ctrl+s")
        await settle(pilot)
    assert failed not in [entry.id for entry in cache.outbox.entries()]
    [queued] = cache.outbox.entries([EntryState.PENDING])
    assert queued.changes == {"title": "Renamed, shorter"}
