"""Undoing a bulk status change follows the workflow, as the bulk change itself did.

Defect 5 of issue 14: Todo, Backlog and Done issues bulk-set to In progress (the Done one is
left out: the workflow forbids it), then `u`: the inverse In progress -> Backlog is not an
allowed move, so it became a failed write and the row showed `●✗ Backlog`, a value the server
never had.
"""

from __future__ import annotations

import json

from terminal_reading import status_line
from terminal_service import eventually
from terminal_user import mark, on_list, pick, rows_in_view
from terminal_world import Tracker


def outbox(tracker: Tracker) -> list[dict[str, object]]:
    """The app's outbox, read by the CLI from the same cache (pending, sending, failed...)."""
    code, out, err = tracker.cli("outbox", "--json")
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_undo_of_a_bulk_status_change_restores_every_issue_the_workflow_allows(
    tracker: Tracker,
) -> None:
    app = tracker.open_synced_app()
    on_screen = set(rows_in_view(app))
    before = {issue["number"]: issue["status"] for issue in tracker.check.issues()}
    chosen = {
        status: next(n for n in sorted(on_screen, reverse=True) if before[n] == status)
        for status in ("todo", "backlog", "done")
    }
    mark(app, list(chosen.values()))
    app.press("b")
    pick(app, "Change 3 marked issues", "Set status")
    pick(app, "Set status", "In progress")
    app.wait_for_text("Bulk change: preview")
    app.press("enter")
    app.wait_for_text("Bulk change: queued")
    moved = (chosen["todo"], chosen["backlog"])
    app.wait_for(
        lambda shown: (
            "0 pending" in status_line(shown)
            and all(tracker.check.issue(n)["status"] == "in_progress" for n in moved)
        ),
        what="the bulk change on the server",
    )
    app.press("escape")
    app.wait_for(on_list, what="the list")
    app.press("u")
    # Every issue goes back where it was, by allowed moves (Backlog by way of Todo); the one
    # the bulk change left alone is not touched.
    expected = {n: before[n] for n in chosen.values()}

    def restored() -> bool:
        sent = "0 pending" in status_line(app.text())
        return sent and {n: tracker.check.issue(n)["status"] for n in expected} == expected

    try:
        eventually(restored, what="every issue restored on the server, nothing pending")
    except AssertionError as error:
        raise AssertionError(f"{error}; outbox: {outbox(tracker)}") from None
    # Nothing failed, nothing waits, and the app shows what the server has.
    assert outbox(tracker) == []
    code, out, err = tracker.cli("issues", "list", "--json", "--limit", "100")
    assert code == 0, err
    cached = {issue["number"]: issue["status"] for issue in json.loads(out)}
    assert {n: cached[n] for n in expected} == expected
    assert "✗" not in app.text(), app.dump()
