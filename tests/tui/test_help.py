"""The help screen's groups are named by what they are about (issue 14, defect 20: a heading
read "VerticalScroll"), the screen's own keys first, and the help fits 80 by 24."""

from __future__ import annotations

import re

from textual.binding import Binding
from textual.widgets import DataTable, Markdown, MarkdownViewer, TextArea
from tui_support import AppFactory, box_text, dialog_box, screen_lines, settle

from tracker_tui.screens.help import HelpScreen, help_title
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.screens.issue_form import IssueFormScreen

SIZE = (120, 36)


async def test_help_groups_are_named_for_people_not_classes(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        titles = [group.title for group in app.screen.groups]
        assert not [title for title in titles if re.search(r"[a-z][A-Z]", title)]
        assert {"Issue screen", "Scrolling", "Everywhere"} == set(titles)
        everywhere = next(group for group in app.screen.groups if group.title == "Everywhere")
        assert {"Focus Next", "Quit", "Help"} <= {e.description for e in everywhere.entries}
        issue = next(group for group in app.screen.groups if group.title == "Issue screen")
        assert "Focus Next" not in {entry.description for entry in issue.entries}
        await pilot.press("escape", "e")
        await settle(pilot)
        assert isinstance(app.screen, IssueFormScreen)
        await pilot.press("question_mark")  # in the title field: typed, not help
        app.screen.set_focus(None)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert "Issue form" in [group.title for group in app.screen.groups]


async def test_help_fits_80_by_24_with_the_screens_keys_on_top(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("question_mark")
        box = dialog_box(screen_lines(app))
        text = box_text(box)
        assert "Issue screen" in box[3]
        for key in ("Back", "Status", "Priority", "Assignee", "Labels", "Edit", "Comment"):
            assert f" {key} " in f" {text} "
        assert "Focus Previous" in text  # not wrapped onto two rows
        assert "esc, q or ? to close" in text


def test_the_keys_of_kinds_named_by_path_are_grouped_as_those_kinds() -> None:
    """The text editor, the table and Markdown are named by their path in the help's kinds (so
    that the help screen, imported with the app, does not bring them and the markdown parser:
    tests/tui/test_start_imports.py); their keys are still grouped as theirs, and only theirs."""
    binding = Binding("x", "scroll_home", "Top")
    assert help_title(Markdown(), binding) == "Document"
    assert help_title(TextArea(), binding) == "Text editor"
    assert help_title(DataTable(), binding) == "Table"
    assert help_title(MarkdownViewer(), binding) == "Scrolling"


async def test_a_narrow_terminal_gets_one_column_with_every_description(
    app_factory: AppFactory,
) -> None:
    """At 50 columns two columns left the list's keys without what they do (seen by hand)."""
    app = app_factory()
    async with app.run_test(size=(50, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        text = box_text(dialog_box(screen_lines(app)))
        for key in ("Search", "Filter", "Sort", "Edit"):
            assert f" {key} " in f" {text} "
        assert isinstance(app.screen, HelpScreen) and app.screen.column_count == 1
        await pilot.resize_terminal(100, 30)
        await settle(pilot)
        assert app.screen.column_count == 2
        text = box_text(dialog_box(screen_lines(app)))
        assert "Issue list" in text and "esc, q or ? to close" in text
