"""The screens beyond the list: their keys in help, footer and palette; read-only everywhere."""

from __future__ import annotations

from textual.command import CommandPalette
from textual.widgets import Footer
from tui_support import AppFactory, FakeIssueSource, Notices, settle

from cache import Cache
from tracker_tui.screens.binding_commands import BindingCommands
from tracker_tui.screens.help import HelpScreen
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.screens.projects import ProjectsScreen
from tracker_tui.screens.sync_panel import SyncPanelScreen

SIZE = (120, 36)


async def test_detail_keys_are_in_help_and_the_palette(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, IssueDetailScreen)
        assert screen.query_one(Footer)
        provider = BindingCommands(screen)
        names = [hit.text async for hit in provider.discover()]
        for name in ("Status", "Priority", "Assignee", "Project", "Labels", "Comment", "Edit"):
            assert name in names
        system = {command.title for command in app.get_system_commands(screen)}
        assert {"Sync panel", "Projects", "Undo bulk change"} <= system
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        described = {entry.description for group in app.screen.groups for entry in group.entries}
        assert {"Status", "Comment", "Sync panel", "Projects", "Undo bulk change"} <= described
        await pilot.press("escape", "ctrl+p")
        assert isinstance(app.screen, CommandPalette)


async def test_read_only_refuses_writes_on_every_screen(
    app_factory: AppFactory, cache: Cache, notices: Notices
) -> None:
    app = app_factory(read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, SyncPanelScreen)
        await pilot.press("m", "t", "escape", "P")
        await settle(pilot)
        assert isinstance(app.screen, ProjectsScreen)
        await pilot.press("n", "e", "a", "escape")
        await pilot.pause()
        assert "u" not in app.screen.active_bindings  # undo is not offered at all
        await pilot.press("u")
        await pilot.pause()
    assert cache.outbox.entries() == []
    # n, e and a on the projects screen, and u: hidden keys still say why nothing happens.
    assert notices.texts().count("Read-only mode: changes are off.") == 4


async def test_without_a_cache_the_other_screens_say_why(
    app_factory: AppFactory, notices: Notices
) -> None:
    app = app_factory(FakeIssueSource(20))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter", "y", "P")
        await pilot.pause()
    assert notices.texts().count("No local cache is open.") == 3
