"""A bulk change's preview names the issues it leaves out, not only how many (seen by hand:
"2 cannot move: Canceled → In progress not allowed" left the user to find which two)."""

from __future__ import annotations

from cache import IssueRow, SyncState
from issuefields import LABELS
from tracker_tui.data.bulk import ADD_LABEL, BulkChange, plan


def row(number: int, status: str, labels: tuple[str, ...] = ()) -> IssueRow:
    cells = {"number": number, "title": f"issue {number}", "status": status}
    return IssueRow(f"iss_{number}", cells, labels, SyncState.SYNCED)  # type: ignore[arg-type]


def test_issues_that_cannot_make_the_move_are_named() -> None:
    rows = [row(1, "todo"), row(2, "canceled"), row(3, "done"), row(4, "canceled")]
    summary = plan(rows, BulkChange("status", "in_progress")).summary({})
    assert summary == [
        "1 issue: status Todo → In progress",
        "2 cannot move (#2, #4): Canceled → In progress not allowed",
        "1 cannot move (#3): Done → In progress not allowed",
    ]


def test_past_five_the_rest_are_counted() -> None:
    rows = [row(number, "done") for number in range(10, 18)]
    [line] = plan(rows, BulkChange("status", "in_progress")).summary({})[1:]
    assert (
        line == "8 cannot move (#10, #11, #12, #13, #14 and 3 more): Done → In progress not allowed"
    )


def test_issues_full_of_labels_are_left_out_by_name() -> None:
    most = LABELS.check.max_items
    assert most is not None
    full = tuple(f"l{index}" for index in range(most))
    summary = plan([row(7, "todo", full), row(8, "todo")], BulkChange(ADD_LABEL, ["new"])).summary(
        {}
    )
    assert summary[1:] == [f"1 left out (#7): already has {most} labels"]
