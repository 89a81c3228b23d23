"""Write transactions scoped to one workspace, with its clock and its events.

A `Transaction` hands out stamps that are strictly increasing per workspace
(docs/service.md#timestamps: every write bumps `updated_at` to a value never seen before, even when
the clock stands still or goes back), and it collects events that `Store.transaction` passes to the
sink only once the transaction has committed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from server.db import Database
from server.events import EventSink
from server.timestamps import Clock, to_micros


@dataclass(frozen=True)
class Event:
    type: str
    obj: dict[str, Any]
    previous: dict[str, Any] | None


@dataclass
class Transaction:
    conn: sqlite3.Connection
    workspace_id: str
    clock: Clock
    events: list[Event] = field(default_factory=list)

    def stamp(self) -> int:
        """The next stamp of the workspace: now, or just after the last one if that is later.

        The workspace row is read and written inside the transaction, and writers hold the
        database's write lock, so two writers can never draw the same stamp.
        """
        now = to_micros(self.clock())
        (last,) = self.conn.execute(
            "SELECT last_stamp FROM workspaces WHERE id = ?", (self.workspace_id,)
        ).fetchone()
        stamp: int = max(now, last + 1)
        self.conn.execute(
            "UPDATE workspaces SET last_stamp = ? WHERE id = ?", (stamp, self.workspace_id)
        )
        return stamp

    def emit(
        self, event_type: str, obj: dict[str, Any], previous: dict[str, Any] | None = None
    ) -> None:
        self.events.append(Event(event_type, obj, previous))

    @contextmanager
    def step(self) -> Iterator[None]:
        """A part of the transaction that fails alone: an exception undoes its changes and
        drops its events, and the transaction goes on with what came before it."""
        kept = len(self.events)
        self.conn.execute("SAVEPOINT step")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK TO step")
            self.conn.execute("RELEASE step")
            del self.events[kept:]
            raise
        self.conn.execute("RELEASE step")


class Store:
    """The database, the clock and the event sink that every request shares."""

    def __init__(self, db: Database, clock: Clock, events: EventSink) -> None:
        self.db = db
        self.clock = clock
        self.events = events

    def reading(self) -> AbstractContextManager[sqlite3.Connection]:
        return self.db.reading()

    @contextmanager
    def transaction(self, workspace_id: str) -> Iterator[Transaction]:
        with self.db.writing() as conn:
            tx = Transaction(conn, workspace_id, self.clock)
            yield tx
        for event in tx.events:
            self.events.emit(workspace_id, event.type, event.obj, event.previous)

    def now(self) -> int:
        return to_micros(self.clock())
