"""Issue 17's moving around: sorting by a click on a heading, jumping to an issue by number,
next and previous issue from the detail view, copying and opening an issue."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import OptionList, Static
from tui_support import AppFactory, Notices, settle

from cache import Cache, IssueFilter, Resource
from tracker_tui.app import TrackerApp
from tracker_tui.data.cache_source import CacheIssueSource
from tracker_tui.data.neighbours import Step
from tracker_tui.data.source import IssueQuery
from tracker_tui.data.views import SavedView
from tracker_tui.screens.confirm import ConfirmDialog
from tracker_tui.screens.copy_menu import CopyMenu
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.screens.jump_dialog import JumpDialog
from tracker_tui.screens.projects import ProjectsScreen
from tracker_tui.screens.views_dialog import ViewsDialog
from tracker_tui.widgets.filter_chips import FilterChips
from tracker_tui.widgets.issue_columns import GUTTER, layout_columns
from tracker_tui.widgets.issue_list import IssueList
from tracker_tui.widgets.status_bar import StatusBar

SIZE = (120, 36)


def list_screen(app: Any) -> IssueListScreen:
    assert isinstance(app.screen, IssueListScreen)
    return app.screen


def under(app: Any) -> IssueListScreen:
    """The list screen, whatever is open over it."""
    return next(screen for screen in app.screen_stack if isinstance(screen, IssueListScreen))


def heading_x(width: int, key: str) -> int:
    """The first cell of the heading of the column sorting by `key`."""
    x = GUTTER
    for column in layout_columns(width):
        if column.sort == key:
            return x
        x += column.width + 1
    raise AssertionError(f"no column sorts by {key}")


async def test_a_click_on_a_heading_sorts_by_it_and_a_second_reverses(
    app_factory: AppFactory,
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = list_screen(app).query_one(IssueList)
        width = issues.scrollable_content_region.width
        await pilot.click(IssueList, offset=(heading_x(width, "priority") + 1, 0))
        await settle(pilot)
        assert issues.issue_query.sort.key == "priority"
        assert issues.issue_query.sort.descending
        first = issues.row(0)
        assert first is not None and first.cells["priority"] == "urgent"
        await pilot.click(IssueList, offset=(heading_x(width, "priority") + 1, 0))
        await settle(pilot)
        assert issues.issue_query.sort.key == "priority"
        assert not issues.issue_query.sort.descending
        await pilot.click(IssueList, offset=(heading_x(width, "number"), 0))
        await settle(pilot)
        assert issues.issue_query.sort.key == "number"
        assert issues.cursor == 0


def detail(app: Any) -> IssueDetailScreen:
    assert isinstance(app.screen, IssueDetailScreen)
    return app.screen


def shown_number(app: Any) -> int | None:
    issue = detail(app).shown_issue
    assert issue is not None
    number = issue.cells["number"]
    return number if isinstance(number, int) else None


async def test_colon_or_hash_opens_an_issue_by_number(
    app_factory: AppFactory, cache: Cache, notices: Notices
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("colon")
        assert isinstance(app.screen, JumpDialog)
        await pilot.press(*"123", "enter")
        await settle(pilot)
        assert shown_number(app) == 123
        await pilot.press("escape")
        await pilot.press("g", "number_sign", *"#42", "enter")
        await settle(pilot)
        assert shown_number(app) == 42
        await pilot.press("escape", "number_sign", *"9999", "enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
        assert (
            "Issue #9999 is not in the local cache yet (the newest cached is #500)"
            in (notices.texts()[-1])
        )
        cache.outbox.delete(Resource.ISSUES, "iss_000300")  # number 200
        await pilot.press("number_sign", *"#200", "enter")
        await settle(pilot)
        assert "No issue #200 in the local cache" in notices.texts()[-1]
        await pilot.press("colon", *"nope", "enter")
        await settle(pilot)
        assert "No issue 'nope' in the local cache." in notices.texts()[-1]


async def test_a_number_search_puts_that_issue_first_and_enter_opens_it(
    app_factory: AppFactory,
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"12")
        await settle(pilot)
        issues = list_screen(app).query_one(IssueList)
        row = issues.highlighted_row
        assert row is not None and row.cells["number"] == 12
        assert issues.scroll_offset.y == issues.cursor
        await pilot.press("enter", "enter")
        await settle(pilot)
        assert shown_number(app) == 12


async def test_qualifiers_show_as_chips_and_a_bad_value_is_named(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"status:todo label:bug -login")
        await settle(pilot)
        screen = list_screen(app)
        chips = screen.query_one(FilterChips).render().plain
        assert " status: todo " in chips and " label: bug " in chips and " -login " in chips
        problems = screen.query_one("#search-problems", Static)
        assert not problems.display
        issues = screen.query_one(IssueList)
        row = issues.row(0)
        assert row is not None and row.status == "todo" and "bug" in row.labels
        await pilot.press(*" status:tood")
        await settle(pilot)
        assert problems.display
        assert "status:tood is not a status; use one of backlog, todo, in_progress" in str(
            problems.render()
        )
        assert "⚠ 1 not understood" in screen.query_one(FilterChips).render().plain


async def test_next_and_previous_follow_the_lists_search_and_order(
    app_factory: AppFactory, source: CacheIssueSource
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"login", "enter", "s")
        await settle(pilot)
        query = list_screen(app).issue_query
        order = [row.id for row in source.window(query, 0, 4)]
        await pilot.press("enter")
        await settle(pilot)
        assert detail(app).issue_id == order[0]
        await pilot.press("J")
        await settle(pilot)
        assert detail(app).issue_id == order[1]
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert detail(app).issue_id == order[2]
        await pilot.press("K")
        await settle(pilot)
        assert detail(app).issue_id == order[1]
        await pilot.press("left_square_bracket", "left_square_bracket")
        await settle(pilot)
        assert detail(app).issue_id == order[0]
        await pilot.press("J", "J", "J", "K")
        await settle(pilot)
        assert detail(app).issue_id == order[2]
        await pilot.press("escape")
        assert isinstance(app.screen, IssueListScreen)


async def test_a_late_next_never_replaces_an_issue_the_user_moved_away_from(
    app_factory: AppFactory,
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        shown = detail(app)
        stale = IssueDetailScreen.Stepped(Step("iss_000000-not-this-one", "iss_000005"))
        shown.post_message(stale)
        await settle(pilot)
        assert app.screen is shown and shown.issue_id == "iss_000000"
        await pilot.press("s")
        await pilot.pause()
        shown.post_message(IssueDetailScreen.Stepped(Step("iss_000000", "iss_000005")))
        await settle(pilot)
        assert shown.issue_id == "iss_000000"
        assert app.screen is not shown


async def test_y_menu_copies_number_id_and_address_and_echoes_it(
    app_factory: AppFactory, notices: Notices
) -> None:
    app = app_factory(web_url="https://tracker.example/issue/{number}")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j", "Y")
        assert isinstance(app.screen, CopyMenu)
        await pilot.press("y")
        assert app.clipboard == "#499"
        bar = list_screen(app).query_one(StatusBar)
        assert "Copied #499" in bar.render().plain
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("Y", "i")
        assert app.clipboard == "iss_000001"
        await pilot.press("Y", "u")
        assert app.clipboard == "https://tracker.example/issue/499"
        assert "Copied https://tracker.example/issue/499" in (
            detail(app).query_one(StatusBar).render().plain
        )
        await pilot.press("Y", "escape")
        assert app.clipboard == "https://tracker.example/issue/499"


async def test_o_opens_the_address_or_says_how_to_set_one(
    app_factory: AppFactory, notices: Notices, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(TrackerApp, "open_url", lambda self, url, **_: opened.append(url))
    app = app_factory(web_url="https://tracker.example/{id}/n{number}")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("O")
        await settle(pilot)
        assert opened == ["https://tracker.example/iss_000000/n500"]
    bare = app_factory(profile="work")
    async with bare.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("O")
        await settle(pilot)
        assert len(opened) == 1
        said = notices.texts()[-1]
        assert 'add web_url = "https://tracker.example/issue/{number}"' in said
        assert "[profiles.work.ui]" in said and "config.toml" in said
        await pilot.press("Y", "u")
        assert 'add web_url = "' in notices.texts()[-1]


async def test_saved_views_are_renamed_reordered_and_deleted_and_saved_each_time(
    app_factory: AppFactory, notices: Notices
) -> None:
    urgent = SavedView("Urgent", IssueQuery(IssueFilter(priority=frozenset({"urgent"}))))
    done = SavedView("Done", IssueQuery(IssueFilter(status=frozenset({"done"}))))
    mine = SavedView("Mine", IssueQuery(mine=True))
    saved: list[list[SavedView]] = []
    app = app_factory(views=[urgent, done, mine], on_views_changed=saved.append)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("1", "v")
        assert isinstance(app.screen, ViewsDialog)
        await pilot.press("r", "end", *"!", "enter")
        assert [view.name for view in saved[-1]] == ["Urgent!", "Done", "Mine"]
        assert under(app).view_name == "Urgent!"
        await pilot.press("J")
        assert [view.name for view in saved[-1]] == ["Done", "Urgent!", "Mine"]
        await pilot.press("r", *"Mine", "enter")
        assert "Another view is already called “Mine”." in notices.texts()
        assert [view.name for view in saved[-1]] == ["Done", "Urgent!", "Mine"]
        await pilot.press("down", "d")
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("y")
        assert [view.name for view in saved[-1]] == ["Done", "Urgent!"]
        await pilot.press("K", "K", "enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
        assert [view.name for view in saved[-1]] == ["Urgent!", "Done"]
        assert list_screen(app).view_name == "Urgent!"
        await pilot.press("2")
        await settle(pilot)
        assert list_screen(app).issue_query == done.query
        await pilot.press("v", "d", "y", "escape")
        assert [view.name for view in saved[-1]] == ["Urgent!"]
        assert under(app).view_name is None
        await pilot.press("2")
        assert "No view saved on 2 (ctrl+s saves one)." in notices.texts()


async def test_the_projects_screen_counts_open_and_all_issues_per_project(
    app_factory: AppFactory, cache: Cache
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("P")
        await settle(pilot)
        assert isinstance(app.screen, ProjectsScreen)
        listing = app.screen.query_one(OptionList)
        for index, project in enumerate(app.screen.projects):
            mine = frozenset({project.id})
            total = cache.reads.count(IssueFilter(project=mine))
            closed = cache.reads.count(
                IssueFilter(project=mine, status=frozenset({"done", "canceled"}))
            )
            assert 0 < closed < total
            line = str(listing.get_option_at_index(index).prompt)
            assert f"{total - closed:,} open / {total:,}" in line


async def test_the_palette_offers_go_to_copy_and_open_for_the_issue_on_screen(
    app_factory: AppFactory,
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j", "ctrl+p")
        await pilot.pause()
        await pilot.press(*"copy #499's id")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert app.clipboard == "iss_000001"
        await pilot.press("ctrl+p", *"go to issue")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, JumpDialog)
