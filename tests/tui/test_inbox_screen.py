"""The inbox screen (`i`) over a real cache: colleagues' changes pulled into the user's issues,
grouped by issue, newest first; enter opens the issue and marks it read, `r` marks all read,
and what was read stays read after the app is closed and opened again on the same cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import OptionList, Static
from tui_support import ME, NOW, settle

from cache import ME_STATE_KEY, Cache, IssueFilter, IssueSort, Resource
from tracker_tui.app import make_app
from tracker_tui.screens.help import HelpScreen
from tracker_tui.screens.inbox import InboxScreen
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.sync_link import OfflineLink
from tracker_tui.widgets.status_bar import StatusBar

SIZE = (120, 36)


def colleague_changes(cache: Cache) -> list[str]:
    """Two of the user's issues changed by a colleague, as a pull stores them: the first gets
    its priority and title changed, then the second its status (so it is newest). Their ids."""
    cache.state.set(ME_STATE_KEY, ME)
    rows = cache.reads.window(
        IssueFilter(assignee=frozenset({ME})), IssueSort("number", False), 0, 2
    )
    changed: list[str] = []
    for n, (row, change) in enumerate(
        zip(rows, [{"priority": "urgent", "title": "Renamed"}, {"status": "canceled"}], strict=True)
    ):
        record = cache.server.server_record(Resource.ISSUES, row.id)
        assert record is not None and all(record[k] != v for k, v in change.items())
        later = {**record, **change, "updated_at": f"2026-11-21T15:3{n}:00.000000Z"}
        cache.server.apply_page(Resource.ISSUES, [later], news=True)
        changed.append(row.id)
    return changed


def app_on(path: Path) -> tuple[Any, Cache]:
    store = Cache.open(path, clock=NOW.timestamp)
    return make_app(cache=store, me=ME, sync=OfflineLink(), clock=lambda: NOW), store


def header(app: Any) -> str:
    return str(app.screen.query_one("#inbox-header", Static).render())


async def test_the_inbox_groups_by_issue_and_keeps_read_state_across_a_restart(
    cache: Cache,
) -> None:
    first, second = colleague_changes(cache)
    path = cache.path
    app, store = app_on(path)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert "inbox 3" in str(app.screen.query_one(StatusBar).render())
            await pilot.press("i")
            await settle(pilot)
            assert isinstance(app.screen, InboxScreen)
            assert [group.issue_id for group in app.screen.groups] == [second, first]
            title, priority = app.screen.groups[1].lines
            assert title.startswith("title ") and title.endswith(" → Renamed")
            assert priority.startswith("priority ") and priority.endswith(" → Urgent")
            assert header(app).startswith("Inbox · 3 unread changes on 2 issues")
            shown = str(app.screen.query_one(OptionList).get_option_at_index(1).prompt)
            assert "Renamed" in shown and "→ Urgent" in shown
            await pilot.press("down", "enter")
            await settle(pilot)
            assert isinstance(app.screen, IssueDetailScreen) and app.screen.issue_id == first
            assert store.inbox.unread() == (1, 1)
            await pilot.press("escape")
            await settle(pilot)
            assert [group.issue_id for group in app.screen.groups] == [second]
            assert "inbox 1" in str(app.screen.query_one(StatusBar).render())
    finally:
        store.close()
    app, store = app_on(path)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("i")
            await settle(pilot)
            assert [group.issue_id for group in app.screen.groups] == [second]
            await pilot.press("r")
            await settle(pilot)
            assert app.screen.groups == []
            assert app.screen.query_one("#inbox-empty", Static).display
            assert "inbox" not in str(app.screen.query_one(StatusBar).render())
            await pilot.press("a")
            await settle(pilot)
            assert [group.issue_id for group in app.screen.groups] == [second, first]
            assert all(group.unread == 0 for group in app.screen.groups)
    finally:
        store.close()


async def test_opening_an_issue_from_the_list_marks_it_read_and_help_lists_the_inbox(
    cache: Cache,
) -> None:
    first, second = colleague_changes(cache)
    app, store = app_on(cache.path)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("enter")  # the newest update heads the list: the colleague's
            await settle(pilot)
            assert isinstance(app.screen, IssueDetailScreen) and app.screen.issue_id == second
            assert store.inbox.unread() == (2, 1)
            await pilot.press("escape", "i")
            await settle(pilot)
            assert [group.issue_id for group in app.screen.groups] == [first]
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            inbox = next(group for group in app.screen.groups if group.title == "Inbox")
            described = {entry.description for entry in inbox.entries}
            assert {"Back", "Mark all read", "Show read"} <= described
            everywhere = next(g for g in app.screen.groups if g.title == "Everywhere")
            assert "Inbox" in {entry.description for entry in everywhere.entries}
    finally:
        store.close()
