"""The app shell: themes, the status bar, help generated from bindings, the command palette."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from textual.binding import Binding
from textual.command import CommandPalette, Hit
from tui_support import AppFactory, Notices, settle

from cache import IssueFilter
from sync.connection import Connection, ConnectionState
from sync.pull import PullProgress
from tracker_tui.app import THEMES, TrackerApp
from tracker_tui.data.outbox_counts import OutboxCounts
from tracker_tui.data.source import IssueQuery
from tracker_tui.data.views import SavedView
from tracker_tui.messages import SyncFailed, SyncStatusChanged
from tracker_tui.screens.help import HelpScreen
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.screens.issue_list_commands import IssueListCommands
from tracker_tui.widgets.issue_list import IssueList
from tracker_tui.widgets.status_bar import StatusBar

SIZE = (120, 36)


def status_text(app: TrackerApp) -> str:
    return app.screen.query_one(StatusBar).render().plain


def seconds_shown(text: str) -> int:
    found = re.search(r"waiting for the rate limit, (\d+) s", text)
    assert found is not None, text
    return int(found.group(1))


def described(bindings: list[Any]) -> set[str]:
    return {
        binding.description for binding in Binding.make_bindings(bindings) if binding.description
    }


async def test_theme_key_cycles_builtin_themes_and_reports_them(
    app_factory: AppFactory,
) -> None:
    chosen: list[str] = []
    app = app_factory(theme="nord", on_theme_changed=chosen.append)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme == "nord"
        await pilot.press("ctrl+t")
        assert app.theme == THEMES[THEMES.index("nord") + 1]
        for _ in THEMES:
            await pilot.press("ctrl+t")
        await pilot.pause()
    assert chosen[0] == "gruvbox"
    assert len(chosen) == len(THEMES) + 1
    assert set(chosen) == set(THEMES)


async def test_an_unknown_saved_theme_is_ignored(app_factory: AppFactory) -> None:
    chosen: list[str] = []
    app = app_factory(theme="no-such-theme", on_theme_changed=chosen.append)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme == "textual-dark"
    assert chosen == []


async def test_status_bar_says_offline_until_the_sync_engine_reports(
    app_factory: AppFactory,
) -> None:
    app = app_factory(profile="work")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = status_text(app)
        assert text.startswith("work")
        assert "offline" in text
        assert "↑ — pending" in text
        assert "budget —" in text
        app.post_message(
            SyncStatusChanged(
                profile="work",
                connection=ConnectionState(Connection.ONLINE),
                outbox=OutboxCounts(pending=3),
                budget_minute=58,
                budget_day=9_800,
                progress=PullProgress("issues", pages=1, received=40, total=120),
            )
        )
        await pilot.pause()
        text = status_text(app)
        assert "● online" in text
        assert "↑ 3 pending" in text and "failed" not in text
        assert "budget 58/min 9,800/day" in text
        assert "syncing issues 40 of 120" in text
        app.post_message(
            SyncStatusChanged(
                profile="work",
                connection=ConnectionState(Connection.OFFLINE),
                outbox=OutboxCounts(pending=1),
            )
        )
        await pilot.pause()
        text = status_text(app)
        assert "offline" in text
        assert "budget —/min —/day" in text
        assert "syncing" not in text


async def test_status_bar_shows_each_connection_state_and_counts_down(
    app_factory: AppFactory,
) -> None:
    """A refused key, a wait for the rate limit that ticks down, the next retry; failed
    writes and conflicts are counted apart from pending ones (issue 14, defects 3 and 16)."""
    app = app_factory(profile="work")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        refused = ConnectionState(Connection.KEY_REFUSED, "the server refused the API key")
        counts = OutboxCounts(pending=0, failed=1, conflicts=2)
        app.post_message(SyncStatusChanged("work", connection=refused, outbox=counts))
        await pilot.pause()
        text = status_text(app)
        assert "✗ key refused" in text and "online" not in text
        assert "↑ 0 pending · 1 failed · 2 conflicts" in text
        waiting = ConnectionState(Connection.RATE_LIMITED, until=time.monotonic() + 30)
        app.post_message(SyncStatusChanged("work", connection=waiting))
        await pilot.pause()
        first = seconds_shown(status_text(app))
        assert 25 <= first <= 30
        await asyncio.sleep(2.2)  # the bar redraws every second by itself
        await pilot.pause()
        assert seconds_shown(status_text(app)) <= first - 2
        retrying = ConnectionState(Connection.OFFLINE, retry_at=time.monotonic() + 9.5)
        app.post_message(SyncStatusChanged("work", connection=retrying))
        await pilot.pause()
        assert "○ offline · retry in 10 s" in status_text(app)


async def test_status_bar_marks_read_only_mode(app_factory: AppFactory) -> None:
    app = app_factory(read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert status_text(app).endswith("read-only")


def test_sync_reports_replace_older_ones_in_the_queue() -> None:
    older = SyncStatusChanged(profile="p", progress=PullProgress("issues", 1, 1, 9))
    newer = SyncStatusChanged(profile="p", progress=PullProgress("issues", 1, 2, 9))
    assert newer.can_replace(older)


async def test_help_lists_every_described_binding_in_reach(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        groups = {group.title: group for group in help_screen.groups}
        assert {"Issue list", "Issues screen", "Everywhere"} <= set(groups)
        shown = {entry.description for entry in groups["Issue list"].entries}
        assert shown == described(IssueList.BINDINGS)
        screen_shown = {entry.description for entry in groups["Issues screen"].entries}
        assert described(IssueListScreen.BINDINGS) <= screen_shown
        assert described(TrackerApp.BINDINGS) <= {
            entry.description for entry in groups["Everywhere"].entries
        }
        keys = {entry.description: entry.keys for entry in groups["Issue list"].entries}
        assert keys["Next issue"] == ("j", "↓")
        assert keys["Mark all"] == ("*",)
        views = next(e for e in groups["Issues screen"].entries if e.description == "Saved view")
        assert views.keys == tuple(str(slot) for slot in range(1, 10))
        await pilot.press("question_mark")
        assert isinstance(app.screen, IssueListScreen)


async def test_palette_offers_bindings_sorts_views_and_filters(app_factory: AppFactory) -> None:
    app = app_factory(
        views=[SavedView("Triage", IssueQuery(IssueFilter(priority=frozenset({"urgent"}))))]
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        provider = IssueListCommands(app.screen)
        discovered = [hit.text async for hit in provider.discover()]
        assert {"Search", "Filter", "Mark all", "Sort by title", "View: Triage"} <= set(discovered)
        assert not any(str(text).startswith("Filter status") for text in discovered)
        hits = [hit async for hit in provider.search("filter status todo")]
        assert hits and all(isinstance(hit, Hit) for hit in hits)
        best = max(hits, key=lambda hit: hit.score)
        assert best.text == "Filter status: Todo"
        await best.command()
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
        assert app.screen.issue_query.filter.status == {"todo"}
        assignees = [hit.text async for hit in provider.search("filter assignee grace")]
        assert "Filter assignee: Grace Hopper" in assignees
        system = {command.title for command in app.get_system_commands(app.screen)}
        assert {"Help", "Next theme", "Quit"} <= system


async def test_palette_runs_a_command_from_the_keyboard(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"sort by title")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
        assert app.screen.issue_query.sort.key == "title"


async def test_a_failing_callback_becomes_a_notice(
    app_factory: AppFactory, notices: Notices
) -> None:
    def cannot_write(_value: object) -> None:
        raise PermissionError("config.toml is read-only")

    app = app_factory(on_views_changed=cannot_write, on_theme_changed=cannot_write)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+t", "ctrl+s", *"Mine", "enter")
        await pilot.pause()
        assert app.is_running
    assert "Could not save the theme: config.toml is read-only" in notices.texts()
    assert "Could not save the views: config.toml is read-only" in notices.texts()


async def test_a_narrow_status_bar_drops_the_budget_then_the_progress(
    app_factory: AppFactory,
) -> None:
    """At 80 columns the connection and what waits always show, read-only too."""
    app = app_factory(profile="work", read_only=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        waiting = ConnectionState(Connection.RATE_LIMITED, until=time.monotonic() + 30)
        app.post_message(
            SyncStatusChanged(
                "work",
                connection=waiting,
                outbox=OutboxCounts(pending=12, failed=1),
                budget_minute=0,
                budget_day=940,
                progress=PullProgress("issues", pages=50, received=4_951, total=7_000),
            )
        )
        await pilot.pause()
        text = status_text(app)
        assert "waiting for the rate limit, " in text and "↑ 12 pending · 1 failed" in text
        assert "budget" not in text and text.endswith("read-only")
        await pilot.resize_terminal(160, 24)
        await pilot.pause()
        text = status_text(app)
        assert "syncing issues 4,951 of 7,000" in text and "budget 0/min 940/day" in text


async def test_a_sync_failure_is_told_as_sync_not_as_the_cache(
    app_factory: AppFactory, notices: Notices
) -> None:
    """The engine's failures were notices titled "Local cache" reading "Could not sync"."""
    app = app_factory()
    async with app.run_test(size=(100, 30)) as pilot:
        app.post_message(SyncFailed("the server sent a page that is not JSON"))
        await pilot.pause()
    assert notices.texts() == ["Sync failed: the server sent a page that is not JSON"]
