"""What the user typed and has not sent yet is not thrown away.

Defect 7 of issue 14: in an issue's screen, `c`, a comment typed, `esc`, `esc`: the draft was
gone without a question (the issue form does ask), and no draft survived the app being closed
or killed.
"""

from __future__ import annotations

import signal

from terminal_reading import highlighted_issue
from terminal_screen import Terminal
from terminal_service import eventually
from terminal_user import focus_comment, on_list, open_issue
from terminal_world import Tracker


def reopened(tracker: Tracker, app: Terminal, key: str, typed: str) -> Terminal:
    """Kill the app as a closed laptop or an OOM killer would, once the draft under `key`
    holds all of `typed` (it is written within half a second of the typing; a user does not
    pull the plug that fast), and open it again (its cache holds every issue: no need to wait
    for a sync)."""
    eventually(lambda: typed in tracker.draft(key), timeout=10, what=f"the draft {key!r} kept")
    app.signal(signal.SIGKILL)
    app.wait_exit()
    app = tracker.open_app()
    app.wait_for(lambda _: highlighted_issue(app) is not None, what="the list")
    return app


def test_a_comment_draft_is_asked_about_and_survives_the_app_being_killed(
    tracker: Tracker,
) -> None:
    draft = "Half a thought about the"
    app = tracker.open_synced_app()
    open_issue(app, 58)
    focus_comment(app)
    app.type(draft)
    app.wait_for_text(draft)
    app.press("escape", "escape")
    shown = app.wait_for(
        lambda shown: on_list(shown) or "iscard" in shown,
        what="the list, or a question about the draft",
    )
    assert "iscard" in shown, f"the draft was dropped without a question:\n{app.dump()}"
    app.press("n")
    shown = app.wait_until_gone("iscard")
    assert draft in shown
    assert not on_list(shown)
    app = reopened(tracker, app, f"comment:{tracker.check.issue(58)['id']}", draft)
    open_issue(app, 58)
    app.press("c")
    app.wait_for_text(draft, timeout=10)


def test_a_new_issue_draft_survives_the_app_being_killed(tracker: Tracker) -> None:
    app = tracker.open_synced_app()
    app.press("c")
    app.wait_for_text("New issue", "^s Save")
    app.type("Export drops the last row")
    app.wait_for_text("Export drops the last row")
    app = reopened(tracker, app, "issue:new", "Export drops the last row")
    app.press("c")
    app.wait_for_text("Export drops the last row", timeout=10)
