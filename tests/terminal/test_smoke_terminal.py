"""The harness itself: the real app in a pty against the real service, read off the screen."""

from __future__ import annotations

from terminal_screen import highlighted_issue
from terminal_world import SEEDED_ISSUES, Tracker


def test_the_app_syncs_moves_and_quits_in_a_real_terminal(tracker: Tracker) -> None:
    app = tracker.open_synced_app(columns=80, rows=24)
    shown = app.wait_for_text("online", f"{SEEDED_ISSUES} issues")
    first = highlighted_issue(app)
    assert first is not None, app.dump()
    app.press("j")
    app.wait_for(lambda _: highlighted_issue(app) not in (None, first), what="the next row")
    assert "Traceback" not in shown
    app.press("ctrl+q")
    assert app.wait_exit().status == 0
