"""Test support for the app: a stand-in `IssueSource` for tests whose source must fail, stall
or count its reads (everything else runs on a real cache, see conftest), and helpers.

`FakeIssueSource` computes issue `i` from `i` alone (no table is built), so 100,000 issues cost
nothing until a filter or a sort other than the default forces it to walk them. The default order
(updated, newest first) is the index order, which makes the common case O(rows asked for).
It counts what it is asked, so tests can check the list reads only what it shows.

A plain module (not conftest) so test modules can import it by its unique name.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from textual.message import Message
from textual.worker import WorkerCancelled

from cache import IssueRow, SyncState
from issuefields import PRIORITY, STATUS, Field
from tracker_tui.app import TrackerApp
from tracker_tui.data.source import FilterValue, IssueQuery
from tracker_tui.widgets.issue_list import IssueList

STATUSES = STATUS.values
PRIORITIES = PRIORITY.values

NOW = datetime(2026, 11, 21, 15, 30, tzinfo=UTC)
"""The fixed "now" of every test, so relative times and snapshots never drift."""

ME = "usr_ada"
USERS: list[tuple[str, str]] = [
    ("usr_ada", "Ada Lovelace"),
    ("usr_grace", "Grace Hopper"),
    ("usr_alan", "Alan Turing"),
    ("usr_edsger", "Edsger Dijkstra"),
    ("usr_barbara", "Barbara Liskov"),
]
PROJECTS: list[tuple[str, str]] = [("prj_web", "WEB"), ("prj_api", "API"), ("prj_ops", "OPS")]
LABELS = ["bug", "feature", "ux", "perf", "docs", "security"]
VERBS = ["Fix", "Add", "Remove", "Speed up", "Document", "Refactor", "Test", "Migrate"]
NOUNS = ["login form", "rate limiter", "search index", "webhook retries", "export", "sync"]
TAILS = ["on Safari", "for admins", "after upgrade", "in dark mode", "under load", ""]


AppFactory = Callable[..., TrackerApp]
"""Builds the app over the test's source with the fixed clock; kwargs go to `make_app`."""


def fixed_clock() -> datetime:
    """The clock every test app runs on."""
    return NOW


class FakeIssueSource:
    """A deterministic in-memory `IssueSource` of `size` issues that can fail, stall at a gate,
    and counts what it is asked (a stand-in for the cache where those are the point)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.rows_read = 0
        self.counts = 0
        self.fail: Exception | None = None
        self.gate: threading.Event | None = None
        self._lock = threading.Lock()
        self._ordered = lru_cache(maxsize=8)(self._order)

    def count(self, query: IssueQuery, stop: Callable[[], bool] | None = None) -> int:
        self._enter()
        with self._lock:
            self.counts += 1
        if query.filter_key == IssueQuery():
            return self.size
        return len(self._ordered(query.filter_key))

    def window(self, query: IssueQuery, offset: int, limit: int) -> list[IssueRow]:
        self._enter()
        if query.filter_key == IssueQuery() and query.sort.key == "updated":
            stop = min(offset + limit, self.size)
            indices: list[int] | range = range(offset, stop)
            if not query.sort.descending:
                indices = [self.size - 1 - index for index in indices]
        else:
            indices = self._ordered(query)[offset : offset + limit]
        rows = [self.row(index) for index in indices]
        with self._lock:
            self.rows_read += len(rows)
        return rows

    def position(self, query: IssueQuery, issue_id: str, near: int | None) -> int | None:
        self._enter()
        index = int(issue_id.removeprefix("iss_"))
        if query.filter_key == IssueQuery() and query.sort.key == "updated":
            if not 0 <= index < self.size:
                return None
            return index if query.sort.descending else self.size - 1 - index
        ordered = self._ordered(query)
        return ordered.index(index) if index in ordered else None

    def snapshot(self) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()

    def names(self) -> dict[str, str]:
        return dict(USERS) | dict(PROJECTS)

    def distinct_values(self, field: Field) -> list[tuple[FilterValue, str]]:
        self._enter()
        values: dict[str, list[tuple[FilterValue, str]]] = {
            "status": [(status, status.replace("_", " ").capitalize()) for status in STATUSES],
            "priority": [(priority, priority.capitalize()) for priority in PRIORITIES],
            "assignee": list(USERS),
            "project": list(PROJECTS),
            "label": [(label, label) for label in LABELS],
        }
        return values[field.word]

    def row(self, index: int) -> IssueRow:
        """Issue `index` in the default order: newest first."""
        assignee = self._assignee(index)
        project = self._project(index)
        labels = tuple(LABELS[(index + step) % len(LABELS)] for step in range(index % 3))
        sync = SyncState.SYNCED
        if index % 50 == 3:
            sync = SyncState.PENDING
        if index % 333 == 7:
            sync = SyncState.CONFLICT
        if index % 997 == 11:
            sync = SyncState.FAILED
        title = " ".join(
            part
            for part in (VERBS[index % 8], NOUNS[(index // 8) % 6], TAILS[(index // 48) % 6])
            if part
        )
        updated = NOW - timedelta(minutes=7 * index + 1)
        cells = {
            "number": self.size - index,
            "title": title,
            "status": STATUSES[(index * 7) % len(STATUSES)],
            "priority": PRIORITIES[(index * 3) % len(PRIORITIES)],
            "assignee": assignee,
            "project_id": project,
            "updated_at": updated.isoformat().replace("+00:00", "Z"),
            "created_at": None,
        }
        return IssueRow(f"iss_{index:06d}", cells, labels, sync)

    def _assignee(self, index: int) -> str | None:
        return None if index % 6 == 5 else USERS[index % len(USERS)][0]

    def _project(self, index: int) -> str | None:
        return None if index % 4 == 3 else PROJECTS[index % len(PROJECTS)][0]

    def _matches(self, query: IssueQuery, index: int) -> bool:
        row = self.row(index)
        f = query.filter
        return (
            (not f.status or row.status in f.status)
            and (not f.priority or row.priority in f.priority)
            and (not f.assignee or self._assignee(index) in f.assignee)
            and (not f.project or self._project(index) in f.project)
            and (not f.label or bool(f.label & set(row.labels)))
            and (not query.mine or self._assignee(index) == ME)
            and f.text.lower() in row.title.lower()
        )

    def _order(self, query: IssueQuery) -> list[int]:
        """Matching indices in the query's order (crude: walks every issue once per query)."""
        indices = [index for index in range(self.size) if self._matches(query, index)]
        keys: dict[str, Callable[[int], Any]] = {
            "updated": lambda index: -index,  # index 0 is the most recently updated
            "created": lambda index: -index + (index % 40) * 200,
            "priority": lambda index: -PRIORITIES.index(self.row(index).priority or ""),
            "status": lambda index: STATUSES.index(self.row(index).status or ""),
            "title": lambda index: self.row(index).title.lower(),
            "number": lambda index: self.size - index,
        }
        ordered = sorted(indices, key=lambda index: (keys[query.sort.key](index), index))
        return ordered[::-1] if query.sort.descending else ordered

    def _enter(self) -> None:
        """Wait at the gate if one is set (to hold a read in flight), then fail if told to."""
        if self.gate is not None:
            self.gate.wait(timeout=5)
        if self.fail is not None:
            raise self.fail


class Notices:
    """Records every notification an app shows (wraps the public `App.notify`)."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []

    def texts(self) -> list[str]:
        return [message for message, _severity in self.messages]


def issue_list(app: TrackerApp) -> IssueList:
    """The issue list of the screen on top."""
    return app.screen.query_one(IssueList)


async def settle(pilot: Any) -> None:
    """Wait until no worker runs, every message they posted has been handled, and every key
    typed has been (`KeyOrderApp` takes a burst's keys one after the other).

    A handled answer can start another read (rows near the viewport), hence the loop; a worker
    superseded by a newer one (exclusive groups) ends cancelled, which is not an error here. A
    message posted to the app reaches the widget whose worker it starts a few hops later, so no
    worker is taken to mean done only when it is seen twice, a pause apart (seen once, under
    load, a reload's worker had not started yet).
    """
    idle = 0
    for _ in range(20):
        await pilot.pause()
        running = [worker for worker in pilot.app.workers if not worker.is_finished]
        if not running:
            idle += 1
            if idle == 2:
                break
            continue
        idle = 0
        with contextlib.suppress(WorkerCancelled):
            await pilot.app.workers.wait_for_complete(running)
    if getattr(pilot.app, "keys_waiting", 0):
        for _ in range(300):
            await pilot.pause(0.01)
            if not pilot.app.keys_waiting:
                await settle(pilot)
                return


def unique(messages: list[Message]) -> list[Message]:
    """Messages as posted once each: a bubbling message reaches the message hook per hop."""
    once: dict[int, Message] = {}
    for message in messages:
        once.setdefault(id(message), message)
    return list(once.values())


def screen_lines(app: Any) -> list[str]:
    """The screen as a terminal shows it, one string per row (what a user reads, for checks
    that text is wrapped rather than cut and that dialogs fit)."""
    strips = app.screen._compositor.render_strips()
    return ["".join(segment.text for segment in strip).rstrip() for strip in strips]


def box_text(lines: list[str]) -> str:
    """The text inside a bordered box drawn on `lines`, joined into one paragraph."""
    inner = [line.strip("│ ╭╮╰╯─") for line in lines]
    return " ".join(part for part in inner if part)


def dialog_box(lines: list[str]) -> list[str]:
    """The rows of the topmost box drawn on `lines` (a dialog over a screen), cut at its
    borders; fails when the box is not whole (a border missing, the bottom off the screen)."""
    top = next(row for row, line in enumerate(lines) if "╭" in line and "╮" in line)
    left, right = lines[top].index("╭"), lines[top].index("╮")
    box = []
    for line in lines[top:]:
        row = line[left : right + 1].ljust(right + 1 - left)
        box.append(row)
        if row.startswith("╰"):
            break
    assert box[-1].startswith("╰") and box[-1].endswith("╯"), "the box's bottom is cut off"
    assert all(row.startswith("│") and row.endswith("│") for row in box[1:-1]), "a side is cut"
    return box
