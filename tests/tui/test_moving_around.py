"""Issue 17's moving around: sorting by a click on a heading, jumping to an issue by number,
next and previous issue from the detail view, copying and opening an issue."""

from __future__ import annotations

from typing import Any

from tui_support import AppFactory, settle

from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.widgets.issue_columns import GUTTER, layout_columns
from tracker_tui.widgets.issue_list import IssueList

SIZE = (120, 36)


def list_screen(app: Any) -> IssueListScreen:
    assert isinstance(app.screen, IssueListScreen)
    return app.screen


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
