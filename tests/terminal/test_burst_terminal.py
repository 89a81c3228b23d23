"""Keys typed ahead of the screen they are meant for, at terminal speed, in one read.

`c` only asks the app for the new-issue form, which reads its fields in a worker; `enter` only
asks for the issue's screen. The keys typed right after them went to the list meanwhile: a
title's `E`, `x` and `o` ran the list's own bindings, and the form opened empty
(`tracker_tui/key_order.py`). Here the keys arrive in one write to the terminal.
"""

from __future__ import annotations

from terminal_screen import Terminal
from terminal_service import eventually
from terminal_user import go_to, on_list
from terminal_world import Tracker


def quit_cleanly(app: Terminal) -> None:
    assert "Traceback" not in app.text(), app.dump()
    app.press("ctrl+q")
    assert app.wait_exit().status == 0


def test_a_new_issue_typed_ahead_of_its_form_is_made_with_its_title(tracker: Tracker) -> None:
    app = tracker.open_synced_app()
    app.wait_for(on_list, what="the list")
    app.burst(["c", *"Export crashes on typed-ahead titles", "ctrl+s"])
    made = eventually(
        lambda: [
            issue
            for issue in tracker.check.issues()
            if issue["title"] == "Export crashes on typed-ahead titles"
        ],
        what="the new issue on the server",
        explain=app.dump,
    )
    assert len(made) == 1
    app.wait_for(on_list, what="the list again")
    quit_cleanly(app)


def test_a_comment_typed_ahead_of_its_issue_goes_to_that_issue(tracker: Tracker) -> None:
    number = max(issue["number"] for issue in tracker.check.issues()) - 2
    target = tracker.check.issue(number)
    app = tracker.open_synced_app()
    go_to(app, number)
    app.burst(["enter", "c", *"typed ahead of the screen", "ctrl+s"])
    eventually(
        lambda: [
            comment
            for comment in tracker.check.comments(target["id"])
            if comment["body"] == "typed ahead of the screen"
        ],
        what="the comment on the issue that was highlighted",
        explain=app.dump,
    )
    assert app.text().lstrip().startswith(f"#{number} "), app.dump()
    quit_cleanly(app)
