"""The app's side of the `SyncLink` seam: started with a poster, poked after writes, asked to
sync now, stopped on exit, and its reports (online, offline, online again) shown without the
app waiting on it."""

from __future__ import annotations

from textual.command import CommandPalette
from tui_support import NOW, AppFactory, settle

from sync.connection import Connection, ConnectionState
from tracker_tui.data.outbox_counts import OutboxCounts
from tracker_tui.messages import CacheChanged, SyncStatusChanged
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.screens.sync_panel import SyncPanelScreen
from tracker_tui.sync_link import OfflineLink, Poster
from tracker_tui.widgets.status_bar import StatusBar

SIZE = (120, 36)


class ScriptedLink:
    """A sync engine stand-in the test drives by hand."""

    def __init__(self) -> None:
        self.post: Poster | None = None
        self.pokes = 0
        self.syncs = 0
        self.stopped = False

    async def start(self, post: Poster) -> None:
        self.post = post

    def poke(self) -> None:
        self.pokes += 1

    def sync_now(self) -> None:
        self.syncs += 1

    def issue_opened(self, issue_id: str) -> None:
        return None

    def search_typed(self, text: str) -> None:
        return None

    def user_typed(self) -> None:
        return None

    async def stop(self) -> None:
        self.stopped = True

    def report(self, online: bool, pending: int = 0) -> None:
        assert self.post is not None
        kind = Connection.ONLINE if online else Connection.OFFLINE
        self.post(
            SyncStatusChanged(
                "work",
                connection=ConnectionState(kind),
                outbox=OutboxCounts(pending=pending),
                last_sync=NOW,
            )
        )


async def test_reports_show_offline_and_back_and_writes_poke_the_engine(
    app_factory: AppFactory,
) -> None:
    link = ScriptedLink()
    app = app_factory(sync=link, profile="work")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert link.post is not None
        bar = app.screen.query_one(StatusBar)
        link.report(online=True)
        await settle(pilot)
        assert "● online" in bar.render().plain
        link.report(online=False, pending=1)
        await settle(pilot)
        assert "○ offline" in bar.render().plain
        assert "↑ 1 pending" in bar.render().plain
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("p", "end", "enter")  # the newest demo issue is urgent: now none
        await settle(pilot)
        assert link.pokes == 1
        link.report(online=True)
        link.post(CacheChanged())
        await settle(pilot)
        assert "● online" in app.screen.query_one(StatusBar).render().plain
    assert link.stopped


async def test_sync_now_is_a_key_on_every_screen_and_a_palette_command(
    app_factory: AppFactory, link: OfflineLink
) -> None:
    """ctrl+r asks the engine to push and pull at once from the list, the detail view and the
    sync panel; "Sync now" in the palette does the same (issue 14, defect 2)."""
    app = app_factory(profile="work")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert link.syncs == 1
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert link.syncs == 2
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, SyncPanelScreen)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert link.syncs == 3
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"sync now")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SyncPanelScreen)
        assert link.syncs == 4
