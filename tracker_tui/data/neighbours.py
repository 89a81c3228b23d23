"""Next and previous issue from the detail view: where the list the issue was opened from puts
the issue `step` places away, in that list's order, with its filter and search."""

from __future__ import annotations

from dataclasses import dataclass

from tracker_tui.data.cache_source import CacheIssueSource
from tracker_tui.data.source import IssueQuery


@dataclass(frozen=True)
class Step:
    """Where a step from `from_id` leads: `to_id`, or `why` it leads nowhere."""

    from_id: str
    to_id: str | None
    why: str = ""


def step_from(source: CacheIssueSource, order: IssueQuery, issue_id: str, step: int) -> Step:
    """The issue `step` places from `issue_id` in `order` (one read of the cache for both the
    position and the row, so they agree)."""
    with source.snapshot():
        position = source.position(order, issue_id, None)
        if position is None:
            why = "This issue is no longer in the list's filter (esc goes back to it)."
            return Step(issue_id, None, why)
        wanted = position + step
        rows = source.window(order, wanted, 1) if wanted >= 0 else []
    if not rows:
        end = "last" if step > 0 else "first"
        return Step(issue_id, None, f"This is the {end} issue of the list.")
    return Step(issue_id, rows[0].id)
