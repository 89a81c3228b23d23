"""`--read-only` on the issue list and the projects: the write keys are not offered (footer,
help, command palette), and pressing one anyway says why nothing happens."""

from __future__ import annotations

from typing import Any

from textual.widgets._footer import FooterKey
from tui_support import AppFactory, Notices, settle

from cache import Cache
from tracker_tui.screens.help import HelpScreen
from tracker_tui.screens.projects import ProjectsScreen

SIZE = (120, 36)
WRITE_KEYS = {
    "e": "Edit",
    "c": "New",
    "b": "Bulk edit",
    "space": "Mark",
    "asterisk": "Mark all",
    "exclamation_mark": "Invert marks",
    "x": "Clear marks",
    "u": "Undo bulk change",
}
PROJECT_WRITE_KEYS = {"n": "New project", "e": "Edit project", "a": "Archive / restore"}


def footer_keys(app: Any) -> set[str]:
    return {key.key for key in app.screen.query(FooterKey)}


def help_descriptions(app: Any) -> set[str]:
    assert isinstance(app.screen, HelpScreen)
    return {entry.description for group in app.screen.groups for entry in group.entries}


def palette_names(app: Any) -> set[str]:
    return {command.title for command in app.get_system_commands(app.screen)}


async def test_the_list_offers_its_write_keys_unless_read_only(app_factory: AppFactory) -> None:
    """Without read-only mode the keys are there: what the read-only test checks can fail."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert set(WRITE_KEYS) <= set(app.screen.active_bindings)
        assert {"e", "c", "b", "space", "u"} <= footer_keys(app)
        assert "Undo bulk change" in palette_names(app)


async def test_read_only_hides_the_write_keys_of_the_list_and_the_projects(
    app_factory: AppFactory, cache: Cache, notices: Notices
) -> None:
    app = app_factory(read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert set(WRITE_KEYS).isdisjoint(app.screen.active_bindings)
        shown = footer_keys(app)
        assert shown.isdisjoint(WRITE_KEYS)
        assert {"slash", "f", "s", "enter"} <= shown
        assert "Undo bulk change" not in palette_names(app)
        await pilot.press("question_mark")
        await settle(pilot)
        descriptions = help_descriptions(app)
        assert descriptions.isdisjoint(WRITE_KEYS.values())
        assert {"Search", "Filter", "Open"} <= descriptions
        await pilot.press("escape", "P")
        await settle(pilot)
        assert isinstance(app.screen, ProjectsScreen)
        assert set(PROJECT_WRITE_KEYS).isdisjoint(app.screen.active_bindings)
        assert footer_keys(app).isdisjoint(PROJECT_WRITE_KEYS)
        await pilot.press("n", "escape", *WRITE_KEYS)
        await settle(pilot)
    assert cache.outbox.entries() == []
    assert notices.texts().count("Read-only mode: changes are off.") == 1 + len(WRITE_KEYS)
