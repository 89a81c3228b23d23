"""The screens and dialogs of the issue screen fit a terminal of 80 by 24 (issue 14, defect
20): every box whole, every hint and value on screen, nothing wrapped that should not be.
(The choice dialog, help and login have their own checks beside their other tests.)"""

from __future__ import annotations

from test_bulk_edit import choose
from textual.widgets import Select
from tui_support import AppFactory, box_text, dialog_box, screen_lines, settle

from cache import Cache, Resource
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.screens.issue_form import IssueFormScreen
from tracker_tui.widgets.label_picker import LabelInput

SIZE = (80, 24)
TOP = "iss_000000"


async def test_the_labels_dialog_fits_with_many_labels(
    app_factory: AppFactory, cache: Cache
) -> None:
    """Twenty labels ticked: the line naming them wraps instead of being cut."""
    ticked = [f"area-{n:02d}" for n in range(20)]
    cache.outbox.update(Resource.ISSUES, TOP, {"labels": ticked})
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        text = box_text(dialog_box(screen_lines(app)))
        assert "Labels" in text and f"Ticked: {', '.join(ticked)}" in text
        assert "enter ticks · ↓ list · ctrl+s saves · esc cancels" in text


async def test_bulk_add_labels_fits(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("space", "b")
        await settle(pilot)
        await choose(pilot, "Add labels")
        text = box_text(dialog_box(screen_lines(app)))
        assert "Delete" in text and "Ticked: none" in text
        assert "ctrl+s previews · esc cancels" in text


async def test_the_issue_screen_fits(app_factory: AppFactory, cache: Cache) -> None:
    detail = cache.reads.issue(TOP)
    assert detail is not None
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)
        lines = screen_lines(app)
        assert lines[0].strip().startswith(f"#{detail.issue.number}")
        assert any("Status" in line and "Priority" in line for line in lines[:3])
        assert any("Write a comment" in line for line in lines)
        assert lines[-1].lstrip().startswith("esc Back")


async def test_the_issue_form_fits_and_scrolls_to_the_labels(app_factory: AppFactory) -> None:
    """Four pickers share the width, each one row; the form scrolls to the label picker."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, IssueFormScreen)
        for select in app.screen.query(Select):
            assert select.region.height == 1
            assert select.region.right <= SIZE[0]
        lines = screen_lines(app)
        assert any(line.split() == ["Status", "Priority", "Assignee", "Project"] for line in lines)
        app.screen.query_one(LabelInput).focus()
        await settle(pilot)
        field = app.screen.query_one(LabelInput)
        assert 0 <= field.region.y < SIZE[1] - 1


async def test_the_issue_screens_footer_keeps_its_most_used_keys(app_factory: AppFactory) -> None:
    """At 80 columns back, comment, edit and the three fields most set; at 120 the labels and
    the app's sync panel too (cut once `E` joined the footer). The rest is in `?` and ctrl+p."""
    for size, shown in (
        ((80, 24), ("esc Back", "c Comment", "e Edit", "s Status", "p Priority", "a Assignee")),
        ((120, 36), ("l Labels", "y Sync panel")),
    ):
        app = app_factory()
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await pilot.press("enter")
            await settle(pilot)
            footer = screen_lines(app)[-1]
            assert footer.rstrip().endswith("^p palette")
            for key in shown:
                assert f" {key} " in footer, (size, key, footer)
