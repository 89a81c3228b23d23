"""Turning record values into the short text a list cell or a status bar shows.

Pure functions of their arguments (the current time is passed in), so the same data always draws
the same screen: snapshot tests and screenshots depend on it.
"""

from __future__ import annotations

from datetime import datetime

from rich.cells import cell_len, set_cell_size

ELLIPSIS = "…"


def relative_time(moment: datetime, now: datetime) -> str:
    """How long before `now` the `moment` was, in the coarsest unit that fits ("3h ago").

    A moment in the future (a server clock ahead of ours) reads "just now" rather than a
    confusing negative age.
    """
    seconds = int((now - moment).total_seconds())
    if seconds < 60:
        return "just now"
    for size, unit in ((31_536_000, "y"), (2_592_000, "mo"), (86_400, "d"), (3_600, "h")):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds // 60}m ago"


def fit(text: str, width: int) -> str:
    """`text` padded or cut to exactly `width` cells, a cut marked with an ellipsis.

    Works in terminal cells, not characters, so wide (CJK, emoji) titles keep columns aligned.
    """
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return set_cell_size(text, width)
    return set_cell_size(text, width - 1) + ELLIPSIS


def issue_reference(number: int | None, issue_id: str) -> str:
    """`#42` when the server numbers issues, else the opaque id (cut to fit by the caller)."""
    return f"#{number}" if number is not None else issue_id


def count_label(count: int, noun: str) -> str:
    """ "1 issue", "12,345 issues": a count with a naively pluralised noun and separators."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"
