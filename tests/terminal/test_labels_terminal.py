"""The label picker at terminal speed: keys in one burst, and enter on a partial name.

Defect 1 of issue 14: two letters arriving in one read narrow the list to nothing while a
highlight is still queued for it; the app died (`NoMatches: No nodes match 'LabelList'`) and
exited 0. Defect 15: `reg` + enter made a new label "reg" when "regression" was the only match.
"""

from __future__ import annotations

from terminal_screen import Terminal
from terminal_service import eventually
from terminal_user import go_to, on_issue, on_list, open_issue, pick
from terminal_world import Tracker

CRASH_WORDS = ("Traceback", "NoMatches", "OptionDoesNotExist", "Something went wrong")


def label_issue(tracker: Tracker, *, without: str) -> int:
    """An issue the seed gave no `without` label, near the top of the list."""
    issues = sorted(tracker.check.issues(), key=lambda issue: -issue["number"])
    return next(issue["number"] for issue in issues[:15] if without not in issue["labels"])


def still_up(app: Terminal) -> None:
    """Nothing on screen says the app failed, and it is still running."""
    shown = app.text()
    assert not any(word in shown for word in CRASH_WORDS), app.dump()
    assert app.exit_now() is None, f"the app ended: {app.exit_now()}\n{app.after_app()}"


def test_a_burst_that_matches_no_label_does_not_end_the_app(tracker: Tracker) -> None:
    # The smallest terminal the app supports: every dialog on the way must fit it.
    app = tracker.open_synced_app(columns=80, rows=24)
    number = label_issue(tracker, without="cr")
    open_issue(app, number)
    app.press("l")
    app.wait_for_text("Ticked:")
    # "c" matches docs, security, tech-debt; "cr" matches nothing: in one read, the list
    # empties while the highlight "c" queued is still to come.
    app.burst("cr")
    app.press("enter")
    # The picker is still open (it holds "cr", ticked or offered for creation); leave it.
    app.press("escape")
    app.wait_for(
        lambda shown: "Ticked:" not in shown and on_issue(shown),
        what="the issue again, the label dialog closed",
    )
    still_up(app)
    # The same picker in bulk "Add labels".
    app.press("escape")
    go_to(app, number)
    app.press("space", "b")
    pick(app, "Change 1 marked issue", "Add labels")
    app.wait_for_text("Ticked:")
    app.burst("cr")
    app.press("enter")
    app.press("escape")
    app.wait_for(
        lambda shown: "Ticked:" not in shown and on_list(shown),
        what="the list again, the bulk dialog closed",
    )
    still_up(app)
    app.press("ctrl+q")
    assert app.wait_exit().status == 0


def test_enter_on_a_partial_name_ticks_the_one_label_it_matches(tracker: Tracker) -> None:
    number = label_issue(tracker, without="regression")
    before = tracker.check.issue(number)["labels"]
    app = tracker.open_synced_app()
    open_issue(app, number)
    app.press("l")
    app.wait_for_text("Ticked:")
    app.type("reg")
    app.wait_for_text("regression")
    app.press("enter")
    ticked = app.wait_for(
        lambda shown: "regression" in ticked_line(shown) or "reg" in ticked_line(shown),
        what="a label ticked",
    )
    assert ticked_line(ticked).removeprefix("Ticked:").strip().split(", ")[-1] == "regression", (
        app.dump()
    )
    app.press("ctrl+s")
    app.wait_until_gone("Ticked:")
    labels = eventually(
        lambda: (found := tracker.check.issue(number)["labels"]) != before and found,
        what="the labels changed on the server",
    )
    assert "reg" not in labels
    assert sorted(labels) == sorted([*before, "regression"])


def ticked_line(shown: str) -> str:
    for line in shown.split("\n"):
        if "Ticked:" in line:
            return line.strip(" │")
    return ""
