"""Screenshots of the key screens, compared with the accepted ones in `__snapshots__`.

They show what changed, not what is right: the behaviour is asserted in the other modules.
Regenerate with `pytest tests/tui/test_snapshots.py --snapshot-update` and look at the diff.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from test_sync_panel import make_conflict, make_failure, report
from textual.pilot import Pilot
from tui_support import NOW, AppFactory, settle

from cache import Cache, IssueFilter, Resource
from demo.data import stamp
from sync.connection import Connection, ConnectionState
from tracker_tui.data.outbox_counts import OutboxCounts
from tracker_tui.data.source import IssueQuery
from tracker_tui.data.views import SavedView
from tracker_tui.messages import SyncStatusChanged

SIZE = (120, 36)

SnapCompare = Callable[..., bool]


async def report_sync(pilot: Pilot[Any]) -> None:
    """Let the first screenful load, and give the status bar something to show."""
    await settle(pilot)
    pilot.app.post_message(
        SyncStatusChanged(
            profile="work",
            connection=ConnectionState(Connection.ONLINE),
            outbox=OutboxCounts(pending=3),
            budget_minute=58,
            budget_day=9_800,
        )
    )
    await settle(pilot)


def test_issue_list_screen(snap_compare: SnapCompare, app_factory: AppFactory) -> None:
    """A filtered, re-sorted list with two marked rows and the cursor on the third row."""
    views = [
        SavedView("Open work", IssueQuery(IssueFilter(status=frozenset({"todo", "in_progress"}))))
    ]
    app = app_factory(views=views, profile="work")
    assert snap_compare(
        app, terminal_size=SIZE, run_before=report_sync, press=["j", "space", "j", "space", "j"]
    )


def test_issue_list_screen_at_80x24(snap_compare: SnapCompare, app_factory: AppFactory) -> None:
    """The smallest usual terminal: the title keeps 35 cells, the other columns give way."""
    app = app_factory(profile="work")
    assert snap_compare(app, terminal_size=(80, 24), run_before=report_sync, press=["j"])


def test_issue_list_screen_with_a_view(snap_compare: SnapCompare, app_factory: AppFactory) -> None:
    """Saved view 1 applied: its chip, its filter chips, the count."""
    views = [
        SavedView("Open work", IssueQuery(IssueFilter(status=frozenset({"todo", "in_progress"}))))
    ]
    app = app_factory(views=views, profile="work")

    async def apply_view(pilot: Pilot[Any]) -> None:
        await report_sync(pilot)
        await pilot.press("1")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=apply_view)


def test_help_screen(snap_compare: SnapCompare, app_factory: AppFactory) -> None:
    """Every binding of the list, the screen and the app, generated from the bindings."""
    app = app_factory(profile="work")
    assert snap_compare(app, terminal_size=SIZE, run_before=settle, press=["question_mark"])


def test_issue_detail_screen(
    snap_compare: SnapCompare, app_factory: AppFactory, cache: Cache
) -> None:
    """An issue with Markdown, a comment, and a pending edit of its priority."""
    when = stamp(NOW - timedelta(hours=3))
    comment = {"issue_id": "iss_000000", "author": "usr_grace", "created_at": when}
    cache.server.apply_page(
        Resource.COMMENTS,
        [comment | {"id": "cmt_snap", "body": "Seen on main too.", "updated_at": when}],
    )
    app = app_factory(profile="work")

    async def open_and_edit(pilot: Pilot[Any]) -> None:
        await report_sync(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("p", "end", "enter")  # urgent → no priority
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=open_and_edit)


def test_bulk_preview_screen(snap_compare: SnapCompare, app_factory: AppFactory) -> None:
    """Eight issues moved to in progress: who moves, who cannot, who already is."""
    app = app_factory(profile="work")

    async def preview(pilot: Pilot[Any]) -> None:
        await report_sync(pilot)
        await pilot.press(*["space", "j"] * 8, "b")
        await settle(pilot)
        await pilot.press("enter")  # set status
        await settle(pilot)
        await pilot.press("down", "down", "enter")  # in progress
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=preview)


def test_sync_panel_screen(
    snap_compare: SnapCompare, app_factory: AppFactory, cache: Cache
) -> None:
    """A failed write with the server's words, a conflict side by side, pending writes."""
    make_conflict(cache)
    make_failure(cache)
    cache.outbox.update(Resource.ISSUES, "iss_000117", {"status": "canceled"})
    app = app_factory(profile="work")

    async def open_panel(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        pilot.app.post_message(report())
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=open_panel)


def test_issue_detail_screen_at_80x24(snap_compare: SnapCompare, app_factory: AppFactory) -> None:
    app = app_factory(profile="work")

    async def open_issue(pilot: Pilot[Any]) -> None:
        await report_sync(pilot)
        await pilot.press("enter")
        await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=open_issue)
