"""The projects screen over a real cache: open a project's issues, create, archive."""

from __future__ import annotations

from textual.widgets import OptionList
from tui_support import AppFactory, settle

from cache import Cache, IssueFilter, Operation, Resource
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.screens.projects import ProjectsScreen
from tracker_tui.widgets.issue_list import IssueList

SIZE = (120, 36)


async def test_enter_shows_the_projects_issues(app_factory: AppFactory, cache: Cache) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("P")
        await settle(pilot)
        assert isinstance(app.screen, ProjectsScreen)
        assert app.screen.query_one(OptionList).option_count == 3
        first = app.screen.projects[0].id
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
        assert app.screen.issue_query.filter.project == {first}
        expected = cache.count(IssueFilter(project=frozenset({first})))
        assert app.screen.query_one(IssueList).count == expected


async def test_create_and_archive_go_through_the_outbox(
    app_factory: AppFactory, cache: Cache
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("P")
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        await pilot.press("n")
        await pilot.pause()
        await pilot.press(*"db", "tab", *"Database")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "capital letters" in str(app.screen.query_one("#project-problem").render())
        await pilot.press("shift+tab", "ctrl+u", *"DB", "ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ProjectsScreen)
        assert app.screen.query_one(OptionList).option_count == 4
    entries = cache.outbox()
    assert [entry.operation for entry in entries] == [Operation.UPDATE, Operation.CREATE]
    assert entries[0].changes == {"state": "archived"}
    assert entries[1].changes["key"] == "DB"
    assert all(entry.resource is Resource.PROJECTS for entry in entries)


async def test_a_project_picked_from_an_issue_goes_back_to_the_list(
    app_factory: AppFactory,
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("P")
        await settle(pilot)
        assert isinstance(app.screen, ProjectsScreen)
        second = app.screen.projects[1].id
        await pilot.press("down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
        assert len(app.screen_stack) == 2
        assert app.screen.issue_query.filter.project == {second}
