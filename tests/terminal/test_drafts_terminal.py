"""What the user typed and has not sent yet is not thrown away.

Defect 7 of issue 14: in an issue's screen, `c`, a comment typed, `esc`, `esc`: the draft was
gone without a question (the issue form does ask), and no draft survived the app being closed
or killed.
"""

from __future__ import annotations

import signal
import time

from terminal_screen import Terminal
from terminal_user import LIST_FOOTER, focus_comment, open_issue
from terminal_world import Tracker

DRAFT_SETTLE = 1.0
"""Seconds between the last key and killing the app: a draft may be saved a moment after the
typing stops (a user does not pull the plug within a second of a keystroke)."""


def test_leaving_an_issue_with_a_comment_draft_asks_first(tracker: Tracker) -> None:
    app = tracker.open_synced_app()
    open_issue(app, 58)
    focus_comment(app)
    app.type("Half a thought about the")
    app.wait_for_text("Half a thought about the")
    app.press("escape", "escape")
    shown = app.wait_for(
        lambda shown: LIST_FOOTER in shown or "iscard" in shown,
        what="the list, or a question about the draft",
    )
    assert "iscard" in shown, f"the draft was dropped without a question:\n{app.dump()}"
    app.press("n")
    shown = app.wait_until_gone("iscard")
    assert "Half a thought about the" in shown
    assert LIST_FOOTER not in shown


def reopened(tracker: Tracker, app: Terminal) -> Terminal:
    """Kill the app as a closed laptop or an OOM killer would, and open it again."""
    time.sleep(DRAFT_SETTLE)
    app.signal(signal.SIGKILL)
    app.wait_exit()
    return tracker.open_synced_app()


def test_a_comment_draft_survives_the_app_being_killed(tracker: Tracker) -> None:
    app = tracker.open_synced_app()
    open_issue(app, 58)
    focus_comment(app)
    app.type("Reproduced on staging")
    app.wait_for_text("Reproduced on staging")
    app = reopened(tracker, app)
    open_issue(app, 58)
    app.press("c")
    app.wait_for_text("Reproduced on staging", timeout=10)


def test_a_new_issue_draft_survives_the_app_being_killed(tracker: Tracker) -> None:
    app = tracker.open_synced_app()
    app.press("c")
    app.wait_for_text("New issue", "^s Save")
    app.type("Export drops the last row")
    app.wait_for_text("Export drops the last row")
    app = reopened(tracker, app)
    app.press("c")
    app.wait_for_text("Export drops the last row", timeout=10)
