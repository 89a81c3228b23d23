"""What a user does in the app, as keys and what they wait to see before the next key.

A person looks before typing on: after `c` they see the comment field take the cursor, after
`p` the priority dialog. These helpers do the same, so a scenario reads as the user's steps and
no key is typed into a screen that is not there yet (which would test the typist, not the app).
"""

from __future__ import annotations

import contextlib
import re
import time

from terminal_reading import dialog_options, highlighted_issue, marked_issues, visible_issues
from terminal_screen import ScreenTimeout, Terminal

MOVE_WAIT = 3.0
"""Seconds a move of the highlight may take to show before it is looked at again."""
LIST_FOOTER = "/ Search"
"""In the list's footer (and no other's), even cut short at 80 columns."""
DETAIL_FOOTER = "s Status"
"""In an issue's footer (and no other's), even cut short at 80 columns."""
PRIORITY_LABELS = {
    "urgent": "Urgent",
    "high": "High",
    "medium": "Medium",
    "low": "Low",
    "none": "No priority",
}
STATUS_LABELS = {
    "backlog": "Backlog",
    "todo": "Todo",
    "in_progress": "In progress",
    "in_review": "In review",
    "done": "Done",
    "canceled": "Canceled",
}
PRIORITY_VALUES = {label: value for value, label in PRIORITY_LABELS.items()}
STATUS_VALUES = {label: value for value, label in STATUS_LABELS.items()}


def footer(shown: str) -> str:
    return shown.split("\n")[-1]


def on_list(shown: str) -> bool:
    """The list screen, with nothing over it (its footer shows its own keys)."""
    return LIST_FOOTER in footer(shown)


def on_issue(shown: str, number: int | None = None) -> bool:
    """An issue's screen (issue `number`'s), with nothing over it."""
    if DETAIL_FOOTER not in footer(shown):
        return False
    return number is None or shown.lstrip().startswith(f"#{number} ")


def pick(app: Terminal, title: str, label: str, *, timeout: float = 30.0) -> None:
    """In the open list dialog titled `title`, choose the option whose text starts with
    `label`: go to the first option, down to it, enter. Options are read off the screen,
    since some dialogs order them differently from one run to the next."""
    found: list[list[str]] = []

    def listed(shown: str) -> bool:
        found[:] = [dialog_options(shown, title)]
        return any(option.startswith(label) for option in found[0])

    app.wait_for(listed, timeout=timeout, what=f"{label!r} in the dialog {title!r}")
    index = next(i for i, option in enumerate(found[0]) if option.startswith(label))
    app.press("home", *["down"] * index, "enter")


def go_to(app: Terminal, number: int, *, timeout: float = 60.0) -> None:
    """Move the list's highlight onto issue `number`: row by row when it is on screen (keys in
    one burst), else from the top a screenful at a time; each move waits for the highlight to
    land, and a move the list re-sorted under is made again from where the highlight is."""
    deadline = time.monotonic() + timeout
    paged = False
    while time.monotonic() < deadline:
        current = highlighted_issue(app)
        rows = visible_issues(app.text())
        if current == number:
            # The highlight follows its issue through re-sorts (while in view, until the
            # user moves), so what is highlighted now is what space or enter acts on.
            return
        if current is not None and number in rows and current in rows:
            steps = rows.index(number) - rows.index(current)
            app.burst(("down" if steps > 0 else "up") for _ in range(abs(steps)))
            with contextlib.suppress(ScreenTimeout):
                app.wait_for(lambda _: highlighted_issue(app) == number, timeout=MOVE_WAIT)
            continue
        if current is None or not paged:
            # No highlight in view (it may be on a row scrolled away): start from the top.
            app.press("home")
            with contextlib.suppress(ScreenTimeout):
                app.wait_for(
                    lambda shown: highlighted_issue(app) == visible_issues(shown)[:1][0],
                    timeout=MOVE_WAIT,
                )
            paged = True
            continue
        app.press("pagedown")
        with contextlib.suppress(ScreenTimeout):
            app.wait_for(lambda _, was=current: highlighted_issue(app) != was, timeout=MOVE_WAIT)
    raise AssertionError(f"the highlight never reached #{number}:\n{app.dump()}")


def rows_in_view(app: Terminal, at_least: int = 20) -> list[int]:
    """The issue numbers in the list's view, top to bottom, once at least `at_least` show (a
    look in the middle of a redraw may catch part of a frame)."""
    shown = app.wait_for(
        lambda shown: len(visible_issues(shown)) >= at_least, what=f"{at_least} rows in view"
    )
    return visible_issues(shown)


def open_issue(app: Terminal, number: int) -> None:
    """Open issue `number` from the list and wait for its screen."""
    go_to(app, number)
    app.press("enter")
    app.wait_for(lambda shown: on_issue(shown, number), what=f"the screen of #{number}")


def back_to_list(app: Terminal) -> None:
    app.press("escape")
    app.wait_for(on_list, what="the list")


def field(shown: str, name: str) -> str:
    """A field's value on an issue's screen ("Priority High    Assignee ...")."""
    found = re.search(rf"\b{name} (.+?)(?:\s{{3,}}|$)", shown, re.MULTILINE)
    return found.group(1).strip() if found else ""


def set_priority(app: Terminal, label: str) -> None:
    """On an issue's screen, pick the priority shown as `label`."""
    app.press("p")
    pick(app, "Priority", label)
    app.wait_for(lambda shown: on_issue(shown) and "enter picks" not in shown, what="the issue")


def other_priority(shown: str) -> str:
    """A priority label other than the one the issue's screen shows."""
    current = field(shown, "Priority")
    return "Low" if current != "Low" else "High"


def move_status(app: Terminal) -> str:
    """On an issue's screen, move to the first status the workflow offers; its label."""
    app.press("s")
    found: list[str] = []

    def offered(shown: str) -> bool:
        options = dialog_options(shown, "Status")
        found[:] = [option for option in options if "(current)" not in option]
        return bool(found)

    app.wait_for(offered, what="the allowed moves")
    target = sorted(found)[0]
    pick(app, "Status", target)
    app.wait_for(lambda shown: on_issue(shown) and "enter picks" not in shown, what="the issue")
    return target


def focus_comment(app: Terminal) -> None:
    """On an issue's screen, `c`, then wait for the comment field to take the keys: the footer
    drops the issue's keys. (Letters typed before that moment go to the screen's bindings or
    nowhere: see the report.)"""
    app.press("c")
    app.wait_for(
        lambda shown: "^q Quit" in footer(shown) and "p Priority" not in footer(shown),
        what="the comment field focused",
    )


def comment(app: Terminal, text: str) -> None:
    """On an issue's screen, write and send a comment."""
    focus_comment(app)
    app.type(text)
    app.wait_for_text(text)
    app.press("ctrl+s")
    app.wait_for(
        lambda shown: DETAIL_FOOTER in footer(shown) and text in shown.split("Local changes")[0],
        what="the comment in the issue's comments",
    )


def search(app: Terminal, words: str) -> list[int]:
    """On the list, search for `words` (kept, the list focused again); the rows found."""
    app.press("/")
    app.wait_for(lambda shown: "Search titles" in shown, what="the search field")
    app.type(words)
    app.wait_for(lambda shown: f"“{words}”" in shown.split("\n")[0], what="the search applied")
    app.press("enter")
    shown = app.wait_for(on_list, what="the list focused")
    return visible_issues(shown)


def clear_search(app: Terminal) -> None:
    app.press("escape")
    app.wait_for(lambda shown: "“" not in shown.split("\n")[0], what="the search cleared")


def mark(app: Terminal, numbers: list[int]) -> None:
    """Mark `numbers` (none marked before), each seen marked before the next, then the count
    in the header. They need not all be in view at the end: the list may have scrolled."""
    for number in numbers:
        go_to(app, number)
        app.press("space")
        app.wait_for(lambda shown, n=number: n in marked_issues(shown), what=f"#{number} marked")
    app.wait_for(
        lambda shown: (
            f"{len(numbers)} marked" in shown.split("\n")[0]
            and marked_issues(shown) <= set(numbers)
        ),
        what=f"exactly {numbers} marked",
    )


def bulk_set(app: Terminal, numbers: list[int], action: str, label: str) -> None:
    """Mark `numbers`, bulk-apply `action` ("Set priority", "Set status"...) with the value
    shown as `label`, queue it from the preview, and come back to the list."""
    mark(app, numbers)
    app.press("b")
    title = f"Change {len(numbers)} marked issue" + ("s" if len(numbers) != 1 else "")
    pick(app, title, action)
    pick(app, action, label)
    app.wait_for_text("Bulk change: preview")
    app.press("enter")
    app.wait_for_text("Bulk change: queued")
    app.press("escape")
    app.wait_for(on_list, what="the list")
