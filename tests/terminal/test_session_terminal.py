"""Ten minutes of a working day, compressed: triage while the server comes and goes.

The user searches, opens issues, changes priorities and statuses, comments, edits a title and
bulk-changes three issues, while a colleague edits other fields through the API and the server
goes down three times (stopped twice, killed once) and comes back on the same port with the
same database. The service runs on windows of half a second (a day's budget in twelve minutes),
so what a minute of rate limit or a day of polling means is compressed as well; the app runs
at its own pace. At the end, with nothing more typed, the app must have sent everything
(nothing pending, nothing failed, no conflict: the colleague never touched a field the user
changed) and its cache must equal the server, field for field; the app must quit with status 0.
"""

from __future__ import annotations

import contextlib
import signal
from typing import Any

import pytest
from terminal_reading import status_line
from terminal_screen import ScreenTimeout, Terminal
from terminal_service import Colleague, eventually
from terminal_user import (
    PRIORITY_VALUES,
    STATUS_VALUES,
    back_to_list,
    bulk_set,
    clear_search,
    comment,
    move_status,
    on_issue,
    on_list,
    open_issue,
    other_priority,
    rows_in_view,
    search,
    set_priority,
)
from terminal_world import Tracker

from cache import IssueFilter, IssueSort
from tracker_tui.commands.read import issue_json

COMPARED = ("title", "status", "priority", "assignee", "project_id", "labels", "updated_at")


class Session:
    """The user's side: the app, and every write the user made, to find on the server."""

    def __init__(self, tracker: Tracker, app: Terminal) -> None:
        self.tracker = tracker
        self.app = app
        self.expected: dict[tuple[int, str], Any] = {}
        self.comments: dict[int, list[str]] = {}

    def alive(self) -> None:
        shown = self.app.text()
        assert "Traceback" not in shown, self.app.dump()
        assert self.app.exit_now() is None, self.app.after_app()

    def triage(self, number: int, *, status: bool = False, note: str = "") -> None:
        """Open an issue, change its priority (and status), comment, come back."""
        open_issue(self.app, number)
        label = other_priority(self.app.text())
        set_priority(self.app, label)
        self.expected[(number, "priority")] = PRIORITY_VALUES[label]
        if status:
            moved = move_status(self.app)
            self.expected[(number, "status")] = STATUS_VALUES[moved]
        if note:
            comment(self.app, note)
            self.comments.setdefault(number, []).append(note)
        back_to_list(self.app)
        self.alive()

    def retitle(self, number: int, suffix: str) -> None:
        """Edit an issue's title in the form."""
        open_issue(self.app, number)
        title = self.app.text().lstrip().split("\n")[0].split(maxsplit=1)[1].strip()
        self.app.press("e")
        # The form fills its fields from a read, then focuses the title: keys typed before
        # that go elsewhere (see the report). Emptying the field is harmless to repeat, so the
        # user does it until the form says the title is required, then types the new one.
        self.app.wait_for_text(title[:30])
        for _ in range(20):
            self.app.press("ctrl+k", "ctrl+u")
            with contextlib.suppress(ScreenTimeout):
                self.app.wait_for_text("A title is required.", timeout=0.5)
                break
        self.app.wait_for_text("A title is required.")
        self.app.type(title + suffix)
        self.app.wait_for_text((title + suffix)[-40:])
        self.app.press("ctrl+s")
        self.app.wait_for(lambda shown: on_issue(shown, number), what="the issue again")
        self.expected[(number, "title")] = title + suffix
        back_to_list(self.app)
        self.alive()

    def outage(self, sig: int) -> None:
        """The server goes away (SIGTERM: shut down; SIGKILL: crashed)."""
        self.tracker.server.stop(sig)


def cache_issues(tracker: Tracker) -> dict[str, dict[str, Any]]:
    """Every issue of the app's cache, as `tracker-tui issues list --json` prints it."""
    with tracker.cache() as cache:
        rows = cache.reads.window(IssueFilter(), IssueSort(), 0, 1000)
    return {row.id: issue_json(row) for row in rows}


def differences(tracker: Tracker) -> list[str]:
    """Where the app's cache and the server disagree (empty when they agree)."""
    server = {issue["id"]: issue for issue in tracker.check.issues()}
    cache = cache_issues(tracker)
    found = [f"only on the server: #{server[i]['number']}" for i in server.keys() - cache.keys()]
    found += [f"only in the cache: {cache[i]['number']}" for i in cache.keys() - server.keys()]
    for issue_id in server.keys() & cache.keys():
        mine, theirs = cache[issue_id], server[issue_id]
        if mine["sync_state"] != "synced":
            found.append(f"#{mine['number']} is {mine['sync_state']}")
        found += [
            f"#{mine['number']} {name}: cache {mine[name]!r}, server {theirs[name]!r}"
            for name in COMPARED
            if mine[name] != theirs[name]
        ]
    return found


def unsent_writes(tracker: Tracker) -> list[str]:
    """Every outbox entry not yet sent, and the server's record it is about: what a failure of
    this test needs to be understood (a refused write says why in `last_error`)."""
    with tracker.cache() as cache:
        unsent = [entry for entry in cache.outbox.entries() if entry.state.value != "done"]
    server = {issue["id"]: issue for issue in tracker.check.issues()}
    lines = []
    for entry in unsent:
        lines.append(
            f"outbox {entry.id} {entry.operation.value} {entry.resource.value} "
            f"{entry.server_id or entry.record_id} {entry.state.value} "
            f"attempts {entry.attempts}: base {entry.base!r} changes {entry.changes!r} "
            f"error {entry.last_error!r}"
        )
        theirs = server.get(entry.server_id or "")
        if theirs is not None:
            lines.append(f"  server: { ({name: theirs[name] for name in COMPARED})!r}")
    return lines


@pytest.mark.parametrize("own_tracker", [0.5], indirect=True, ids=["windows of 0.5 s"])
def test_ten_minutes_of_triage_while_the_server_goes_down_three_times(own_tracker: Tracker) -> None:
    tracker = own_tracker
    app = tracker.open_synced_app()
    rows = rows_in_view(app)
    own = rows[14:20]
    retitled = rows[6]
    titles = [number for number in rows[:14] if number != retitled]
    colleague = Colleague(tracker.colleague, numbers=titles, own=own, every=1.0).start()
    user = Session(tracker, app)
    try:
        # Morning triage, online: a search, an issue triaged in full.
        found = [n for n in search(app, "Crash") if n not in own]
        assert found, app.dump()
        user.triage(found[0], status=True, note="Looking at this first.")
        clear_search(app)

        # The server is shut down: keep working.
        user.outage(signal.SIGTERM)
        user.triage(rows[4], note="Noted while the server was away.")
        # Down long enough for the app to notice and give up its first tries.
        app.wait_for(
            lambda shown: "offline" in status_line(shown), timeout=60, what="the app offline"
        )
        tracker.server.start()

        # Back: a bulk change of three issues.
        bulk = rows[10:13]
        bulk_set(app, bulk, "Set priority", "Low")
        for number in bulk:
            user.expected[(number, "priority")] = "low"
        app.press("x")
        app.wait_for(lambda shown: " marked" not in shown.split("\n")[0], what="no marks left")

        # The server crashes: a title edited in the form, an issue triaged.
        user.outage(signal.SIGKILL)
        user.retitle(retitled, " (seen)")
        user.triage(rows[7], status=True)
        tracker.server.start()

        # The colleague's renames, found by a search, one of them moved on.
        app.wait_for(lambda _: colleague.edits >= 3, what="the colleague at work")
        renamed = eventually(lambda: search_found(app, "Colleague"), what="renamed issues found")
        user.triage(renamed[0], status=True)
        clear_search(app)

        # A last outage, a last comment.
        user.outage(signal.SIGTERM)
        user.triage(rows[8], note="Last one before lunch.")
        tracker.server.start()
    finally:
        colleague.stop()
    assert colleague.edits >= 5, "the colleague worked through the session"
    user.alive()

    # Nothing more is typed: the app sends everything and catches up by itself.
    app.wait_for(
        lambda shown: "online" in status_line(shown) and "0 pending" in status_line(shown),
        timeout=90,
        what="online, nothing pending",
    )
    eventually(
        lambda: not differences(tracker),
        timeout=60,
        what="the cache equal to the server",
        explain=lambda: "\n".join([*differences(tracker), *unsent_writes(tracker), app.dump()]),
    )
    app.wait_for(on_list, what="the list")
    app.press("ctrl+q")
    assert app.wait_exit().status == 0
    assert "Traceback" not in app.after_app()

    assert differences(tracker) == []
    for (number, name), value in user.expected.items():
        assert tracker.check.issue(number)[name] == value, (number, name)
    for number, notes in user.comments.items():
        issue = tracker.check.issue(number)
        bodies = [c["body"] for c in tracker.check.comments(issue["id"])]
        assert all(bodies.count(note) == 1 for note in notes), (number, bodies)
        cached = tracker.cached(number)
        assert cached is not None
        assert sorted(c.body for c in cached.comments) == sorted(bodies), number
    # What the user would ask last: is anything waiting, failed or in conflict?
    for listing in ("outbox", "conflicts"):
        code, out, err = tracker.cli(listing, "--json")
        assert (code, out.strip()) == (0, ""), f"{listing}: {out}{err}"


def search_found(app: Terminal, words: str) -> list[int] | None:
    """Search; the rows found, or None (search cleared again) when there are none yet."""
    rows = search(app, words)
    if rows:
        return rows
    clear_search(app)
    return None
