"""`$EDITOR` from the real app in a terminal (issue 17, Writing): `E` on an issue suspends the
app (the editor gets the terminal: it draws there, and the keys typed reach it, a line at a
time as a terminal in its usual mode gives them), and once the editor exits the app takes the
terminal back and draws the issue again, with the change typed."""

from __future__ import annotations

from pathlib import Path

from stub_editor import StubEditor
from terminal_user import DETAIL_FOOTER, PRIORITY_LABELS, field, footer, open_issue
from terminal_world import Tracker


def test_E_hands_the_terminal_to_the_editor_and_the_app_draws_again(
    tracker: Tracker, tmp_path: Path
) -> None:
    editor = StubEditor(tmp_path / "editor")
    before = tracker.check.issue(12)
    target = "urgent" if before["priority"] != "urgent" else "low"
    editor.steps(
        [
            {
                "say": "STUB EDITOR has the terminal\r\n",
                "ask": "Priority? ",
                "replace": [f"Priority: {before['priority']}", "Priority: {answer}"],
            }
        ]
    )
    app = tracker.open_synced_app(env=tracker.env(EDITOR=str(editor.path), VISUAL=""))
    open_issue(app, 12)
    app.press("E")
    shown = app.wait_for_text("STUB EDITOR has the terminal", "Priority?")
    assert DETAIL_FOOTER not in footer(shown), f"the app drew over the editor:\n{app.dump()}"
    app.type(target)
    app.press("enter")
    shown = app.wait_for(
        lambda shown: (
            DETAIL_FOOTER in footer(shown)
            and field(shown, "Priority").startswith(PRIORITY_LABELS[target])
        ),
        what="the issue drawn again with the priority from the editor",
    )
    assert "STUB EDITOR" not in shown
    [given] = editor.seen
    assert given.startswith(f"Title: {before['title']}\n")


def test_an_editor_that_fails_gives_the_terminal_back_and_says_the_text_is_kept(
    tracker: Tracker, tmp_path: Path
) -> None:
    """`:cq` in vim: the app draws again and says so (found in tmux with a real vi: the app
    stayed suspended, the keys echoed by the terminal and nothing drawn)."""
    editor = StubEditor(tmp_path / "editor")
    before = tracker.check.issue(13)
    editor.steps([{"replace": [f"Title: {before['title']}", "Title: Half typed"], "exit": 1}])
    app = tracker.open_synced_app(env=tracker.env(EDITOR=str(editor.path), VISUAL=""))
    open_issue(app, 13)
    app.press("E")
    app.wait_for(
        lambda shown: DETAIL_FOOTER in footer(shown) and "kept as a draft" in shown,
        what="the issue drawn again, saying the text is kept",
    )
    app.press("p")
    app.wait_for_text("No priority")  # the priority dialog: the app reads keys again
    assert "Half typed" in tracker.draft(f"editor:issue:{before['id']}")
