"""The highlight stays on the issue the user chose while the list changes under it.

Defect 4 of issue 14: with a colleague editing, the list re-sorts by update time and the
highlight stayed on the same row, so it moved to another issue (#13 became #74) and `enter`,
`e` or `space` then acted on an issue the user never chose; after editing an issue and coming
back, the cursor landed on its neighbour.
"""

from __future__ import annotations

from terminal_reading import marked_issues, shown_highlight, status_line, visible_issues
from terminal_user import go_to, on_issue, pick, rows_in_view
from terminal_world import Tracker


def test_the_highlight_and_marks_follow_their_issues_when_a_colleague_resorts_the_list(
    tracker: Tracker,
) -> None:
    app = tracker.open_synced_app()
    rows = rows_in_view(app)
    chosen, marked, moved = rows[5], rows[3], rows[12]
    go_to(app, marked)
    app.press("space")
    go_to(app, chosen)
    # The colleague edits an issue below the cursor: on the next poll it jumps to the top
    # (newest update first), above the rows in view or as the first of them.
    tracker.colleague.edit(moved, priority="urgent")
    app.wait_for(
        lambda shown: visible_issues(shown)[:1] == [moved] or moved not in visible_issues(shown),
        timeout=30,
        what=f"#{moved} moved to the top",
    )
    assert marked_issues(app.text()) == {marked}, app.dump()
    assert shown_highlight(app) == chosen, app.dump()
    # What the user then does acts on the issue they chose.
    app.press("enter")
    app.wait_for(on_issue, what="the issue")
    assert app.text().lstrip().startswith(f"#{chosen} "), app.dump()


def test_the_highlight_stays_on_an_issue_edited_and_returned_from(tracker: Tracker) -> None:
    app = tracker.open_synced_app()
    rows = rows_in_view(app)
    chosen = rows[6]
    go_to(app, chosen)
    app.press("enter")
    app.wait_for(on_issue, what="the issue")
    app.press("p")
    pick(app, "Priority", "Urgent" if "Urgent" not in app.text().split("\n")[1] else "Low")
    app.wait_until_gone("enter picks")
    app.press("escape")
    # Once sent, the edit makes the issue the newest: it moves to the top of the list.
    app.wait_for(
        lambda shown: visible_issues(shown)[:1] == [chosen] and "0 pending" in status_line(shown),
        timeout=30,
        what=f"#{chosen} sent and at the top",
    )
    assert shown_highlight(app) == chosen, app.dump()
