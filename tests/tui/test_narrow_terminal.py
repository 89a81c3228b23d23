"""An 80x24 terminal: the issue list gives its width to the titles, and every dialog of the list
and its bulk edits fits on screen, buttons and fields included."""

from __future__ import annotations

from typing import Any

from textual.geometry import Region
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, OptionList, SelectionList
from tui_support import AppFactory, settle

from cache import Cache, IssueFilter, IssueSort
from tracker_tui.screens.bulk_edit import BulkEditScreen
from tracker_tui.screens.bulk_preview import BulkPreviewScreen
from tracker_tui.screens.confirm import ConfirmDialog
from tracker_tui.screens.filter_dialog import FilterDialog
from tracker_tui.screens.project_form import ProjectFormDialog
from tracker_tui.screens.projects import ProjectsScreen
from tracker_tui.screens.save_view_dialog import SaveViewDialog
from tracker_tui.screens.sort_dialog import SortDialog
from tracker_tui.widgets.issue_list import IssueList
from tracker_tui.widgets.label_picker import LabelPicker

SMALL = (80, 24)
CONTROLS = (Button, Input, Checkbox, OptionList, SelectionList, LabelPicker)
"""What the user types into or presses: each must be whole on screen."""


def shown_whole(screen: Screen[Any], widget: Widget) -> bool:
    """Whether all of `widget` lies on the screen and inside every container around it, and
    the compositor draws it (not something else) at its middle."""
    region = widget.region
    if not region or not Region(0, 0, *SMALL).contains_region(region):
        return False
    for ancestor in widget.ancestors:
        if (
            isinstance(ancestor, Widget)
            and ancestor is not screen
            and not ancestor.region.contains_region(region)
        ):
            return False
    found, _ = screen.get_widget_at(*region.center)
    return found is widget or widget in found.ancestors


def cut_off(screen: Screen[Any]) -> list[str]:
    """The controls of `screen` that are not shown whole."""
    return [
        f"{type(widget).__name__}#{widget.id} at {widget.region}"
        for widget in screen.query("*")
        if isinstance(widget, CONTROLS) and widget.display and not shown_whole(screen, widget)
    ]


async def test_at_80x24_the_title_takes_the_slack(app_factory: AppFactory, cache: Cache) -> None:
    app = app_factory()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        issues = app.screen.query_one(IssueList)
        header = issues.render_line(0).text
        assert "Assignee" not in header and "Labels" not in header
        for name in ("Title", "Status", "Priority", "Updated ▼"):
            assert name in header
        title_width = header.index("Status") - header.index("Title") - 1
        assert title_width >= 35
        assert issues.scrollable_content_region.width >= 79
        titles = [row.title for row in cache.reads.window(IssueFilter(), IssueSort(), 0, 20)]
        longest = max((title for title in titles if len(title) <= title_width), key=len)
        assert len(longest) > 19
        lines = [issues.render_line(y).text for y in range(1, 21)]
        assert any(longest in line for line in lines)


async def test_the_filter_and_sort_dialogs_fit_80x24(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f")
        await settle(pilot)
        assert isinstance(app.screen, FilterDialog)
        assert cut_off(app.screen) == []
        assert {button.id for button in app.screen.query(Button)} == {
            "filter-clear",
            "filter-cancel",
            "filter-apply",
        }
        await pilot.press("escape", "o")
        await settle(pilot)
        assert isinstance(app.screen, SortDialog)
        assert cut_off(app.screen) == []
        await pilot.press("escape", "ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, SaveViewDialog)
        assert cut_off(app.screen) == []


async def test_bulk_edit_and_its_preview_fit_80x24(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("space", "j", "space", "b")
        await settle(pilot)
        assert isinstance(app.screen, BulkEditScreen)
        assert cut_off(app.screen) == []
        options = app.screen.query_one(OptionList)
        options.highlighted = 4
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.query(LabelPicker)
        assert cut_off(app.screen) == []
        await pilot.press(*"bug", "enter", "ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, BulkPreviewScreen)
        assert cut_off(app.screen) == []


async def test_projects_their_form_and_a_confirmation_fit_80x24(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("P")
        await settle(pilot)
        assert isinstance(app.screen, ProjectsScreen)
        assert cut_off(app.screen) == []
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, ProjectFormDialog)
        assert cut_off(app.screen) == []
        await pilot.press("escape")
        await settle(pilot)
        app.push_screen(
            ConfirmDialog(
                "Discard the changes to “Speed up the search index for admins under load”? "
                "They were never saved.",
                yes="Discard",
                no="Keep editing",
            )
        )
        await settle(pilot)
        assert cut_off(app.screen) == []
