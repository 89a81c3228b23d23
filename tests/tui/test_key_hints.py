"""Hints name the keys the user's keymap binds (issue 17, configuring): a dialog's hint line, the
comment box's placeholder, an empty state or a notice that says "ctrl+s sends" says the key
`[keymap]` moved the binding to, as the footer and the help already did."""

from __future__ import annotations

import pytest
from textual.widgets import Static
from tui_support import AppFactory, Notices, screen_lines, settle

from tracker_tui.data.keymap import parse_keymap
from tracker_tui.key_names import hint_keys, key_text, keys_text
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.widgets.comment_box import CommentBox

SIZE = (120, 36)


def hints(app: object) -> str:
    """Every hint line of the screen in front, as one text."""
    screen = app.screen  # type: ignore[attr-defined]
    return "\n".join(str(hint.content) for hint in screen.query(".dialog-hint").results(Static))


def test_keys_are_written_as_hints_write_them() -> None:
    assert [key_text(k) for k in ("ctrl+s", "escape", "question_mark", "enter", "f5")] == [
        "ctrl+s",
        "esc",
        "?",
        "enter",
        "f5",
    ]
    assert keys_text(["escape", "q", "question_mark"]) == "esc, q or ?"


@pytest.mark.parametrize(
    ("keymap", "placeholder", "empty"),
    [
        (
            {},
            "Write a comment (Markdown; ctrl+s sends, ctrl+e opens $EDITOR, esc leaves)",
            "No comments yet (c to write one).",
        ),
        (
            {"comment": {"send": "f5", "editor": "f6"}, "detail": {"comment": "w", "back": "q"}},
            "Write a comment (Markdown; f5 sends, f6 opens $EDITOR, q leaves)",
            "No comments yet (w to write one).",
        ),
    ],
)
async def test_the_comment_box_and_the_empty_thread_name_the_keymaps_keys(
    app_factory: AppFactory, keymap: dict[str, dict[str, str]], placeholder: str, empty: str
) -> None:
    app = app_factory(keymap=parse_keymap(keymap))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)
        assert app.screen.query_one(CommentBox).placeholder == placeholder
        shown = [str(s.content) for s in app.screen.query(".comment-empty").results(Static)]
        assert shown == [empty]


async def test_dialog_hints_name_the_remapped_keys(app_factory: AppFactory) -> None:
    keymap = {
        "jump": {"cancel": "f8"},
        "filter": {"apply": "f9"},
        "views": {"rename": "R", "close": "q"},
    }
    app = app_factory(keymap=parse_keymap(keymap))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("colon")
        await settle(pilot)
        assert hints(app) == "enter opens it · f8 cancels"
        await pilot.press("f8", "f")
        await settle(pilot)
        assert "· f9 applies · esc cancels" in hints(app)
        await pilot.press("escape", "v")
        await settle(pilot)
        assert "enter shows · R renames · d deletes · q closes" in hints(app)
        assert "J/K or shift+↓/shift+↑ move" in hints(app)
        assert "(ctrl+s on the list saves one)" in "\n".join(screen_lines(app))


async def test_notices_name_the_remapped_keys(app_factory: AppFactory, notices: Notices) -> None:
    keymap = {"list": {"mark": "t", "mark_all": "A", "save_view": "f4"}}
    app = app_factory(keymap=parse_keymap(keymap))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("b", "7")
        await settle(pilot)
    assert "Nothing is marked (t marks, A marks all)." in notices.texts()
    assert "No view saved on 7 (f4 saves one)." in notices.texts()


async def test_the_sync_panel_headings_name_the_remapped_keys(app_factory: AppFactory) -> None:
    app = app_factory(keymap=parse_keymap({"sync": {"retry": "R", "take_theirs": "T"}}))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        shown = "\n".join(screen_lines(app))
        assert "Failed writes (R retry · x discard · e edit)" in shown
        assert "Conflicts (m keep mine · T take theirs)" in shown


async def test_a_hint_naming_no_binding_is_a_bug_not_a_guess(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
        assert hint_keys(app.screen, "list.mark") == "space"
        assert hint_keys(app.screen, "app.sync_now") == "ctrl+r"
        with pytest.raises(LookupError, match=r"list\.nothing"):
            hint_keys(app.screen, "list.nothing")
