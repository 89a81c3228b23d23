"""The durable side of webhook delivery: subscriptions, events, deliveries and attempts in SQLite.

::

    webhook_subscriptions   one row per webhook (url, event filter, secret)
    webhook_events          each event body once, however many webhooks want it
    webhook_deliveries      one per (webhook, event); ``record_key`` groups a record's events
    webhook_attempts        one per attempt: pending, retrying, failed or succeeded

The queue is what makes delivery survive a restart; `server.webhook_delivery` decides when to
send and what became of each attempt. A connection is opened per call so the app's threads, the
worker's threads and other processes can all use the file; every write is one
``BEGIN IMMEDIATE`` transaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_BUSY_TIMEOUT_SECONDS = 10.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS webhook_subscriptions (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    secret TEXT NOT NULL,
    created_us INTEGER NOT NULL,
    updated_us INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_subscriptions_by_workspace
    ON webhook_subscriptions (workspace_id, created_us);
CREATE TABLE IF NOT EXISTS webhook_events (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    body BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    record_key TEXT NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    attempt INTEGER NOT NULL DEFAULT 1,
    due_us INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_open
    ON webhook_deliveries (webhook_id, record_key, seq) WHERE done = 0;
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_event ON webhook_deliveries (event_id);
CREATE TABLE IF NOT EXISTS webhook_attempts (
    delivery_seq INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    status TEXT NOT NULL,
    response_code INTEGER,
    error TEXT,
    scheduled_us INTEGER NOT NULL,
    attempted_us INTEGER,
    completed_us INTEGER,
    PRIMARY KEY (delivery_seq, attempt)
);
"""


def iso(micros: int | None) -> str | None:
    """The service's timestamp form: ISO 8601 UTC with microseconds and ``Z``
    (docs/service.md#timestamps)."""
    if micros is None:
        return None
    return (_EPOCH + timedelta(microseconds=micros)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _attempt_dict(
    event_id: str,
    event_type: str,
    attempt: int,
    status: str,
    response_code: int | None,
    error: str | None,
    scheduled_us: int,
    attempted_us: int | None,
    completed_us: int | None,
) -> dict[str, Any]:
    return {
        "event_id": event_id,
        "event_type": event_type,
        "attempt": attempt,
        "status": status,
        "response_code": response_code,
        "error": error,
        "scheduled_at": iso(scheduled_us),
        "attempted_at": iso(attempted_us),
        "completed_at": iso(completed_us),
    }


Within = Callable[[sqlite3.Connection, dict[str, Any]], None]
"""Work done in a write's own transaction, given its connection and the record it wrote."""


def _webhooks(
    conn: sqlite3.Connection, workspace_id: str, webhook_id: str | None
) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT id, workspace_id, url, events, created_us, updated_us"
        " FROM webhook_subscriptions WHERE workspace_id = ?1 AND (?2 IS NULL OR id = ?2)"
        " ORDER BY created_us, id",
        (workspace_id, webhook_id),
    ).fetchall()
    return [
        {
            "id": hook_id,
            "workspace_id": workspace,
            "url": url,
            "events": json.loads(events),
            "created_at": iso(created),
            "updated_at": iso(updated),
        }
        for hook_id, workspace, url, events, created, updated in rows
    ]


@dataclass(frozen=True)
class Head:
    """The oldest unfinished delivery of one (webhook, record) queue."""

    seq: int
    webhook_id: str
    attempt: int
    due_us: int


@dataclass(frozen=True)
class Job:
    """What one attempt sends, read when it starts so a changed URL or secret takes effect."""

    url: str
    secret: str
    event_id: str
    event_type: str
    body: bytes


@dataclass(frozen=True)
class Outcome:
    """What became of one attempt: a response code, or an error saying why there was none."""

    attempted_us: int
    completed_us: int
    response_code: int | None
    error: str | None

    @property
    def succeeded(self) -> bool:
        return self.response_code is not None and 200 <= self.response_code < 300


class WebhookQueue:
    """Subscriptions, events, and the deliveries and attempts of each, in one SQLite file."""

    def __init__(self, path: Path) -> None:
        self._path = str(path)
        with closing(self._connect()) as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, timeout=_BUSY_TIMEOUT_SECONDS, isolation_level=None)
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with closing(self._connect()) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with closing(self._connect()) as conn:
            return conn.execute(sql, params).fetchall()

    def insert_webhook(
        self, row: tuple[str, str, str, str, str, int, int], within: Within | None = None
    ) -> dict[str, Any]:
        """Store the webhook and return it as listed; ``within`` is given the connection and
        that record before the transaction commits, to write what must commit with it."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO webhook_subscriptions"
                " (id, workspace_id, url, events, secret, created_us, updated_us)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            (made,) = _webhooks(conn, row[1], row[0])
            if within is not None:
                within(conn, made)
        return made

    def webhooks(self, workspace_id: str, webhook_id: str | None = None) -> list[dict[str, Any]]:
        with closing(self._connect()) as conn:
            return _webhooks(conn, workspace_id, webhook_id)

    def update_webhook(
        self, workspace_id: str, webhook_id: str, changes: dict[str, str], now_us: int
    ) -> bool:
        """Apply ``changes`` (column to value); ``updated_at`` moves strictly forward."""
        assignments = "".join(f"{column} = :{column}, " for column in changes)
        with self._write() as conn:
            cursor = conn.execute(
                f"UPDATE webhook_subscriptions SET {assignments}"
                " updated_us = max(:now, updated_us + 1)"
                " WHERE id = :id AND workspace_id = :workspace",
                {**changes, "now": now_us, "id": webhook_id, "workspace": workspace_id},
            )
            return cursor.rowcount == 1

    def delete_webhook(self, workspace_id: str, webhook_id: str) -> bool:
        """Forget the webhook with its queue and history, and events no webhook still needs."""
        with self._write() as conn:
            cursor = conn.execute(
                "DELETE FROM webhook_subscriptions WHERE id = ? AND workspace_id = ?",
                (webhook_id, workspace_id),
            )
            if cursor.rowcount == 0:
                return False
            conn.execute(
                "DELETE FROM webhook_attempts WHERE delivery_seq IN"
                " (SELECT seq FROM webhook_deliveries WHERE webhook_id = ?)",
                (webhook_id,),
            )
            conn.execute("DELETE FROM webhook_deliveries WHERE webhook_id = ?", (webhook_id,))
            conn.execute(
                "DELETE FROM webhook_events WHERE NOT EXISTS"
                " (SELECT 1 FROM webhook_deliveries AS d WHERE d.event_id = webhook_events.id)"
            )
            return True

    def enqueue(
        self,
        workspace_id: str,
        event: tuple[str, str, bytes],
        record_key: str,
        now_us: int,
    ) -> int:
        """Queue ``event`` (id, type, body) for each webhook that wants it; how many did."""
        event_id, event_type, _ = event
        if not self._wanted(workspace_id, event_type):
            return 0
        with self._write() as conn:
            rows = conn.execute(
                "SELECT id, events FROM webhook_subscriptions WHERE workspace_id = ?",
                (workspace_id,),
            ).fetchall()
            targets = [
                hook_id for hook_id, events in rows if {"*", event_type} & set(json.loads(events))
            ]
            if not targets:
                return 0
            conn.execute("INSERT INTO webhook_events (id, type, body) VALUES (?, ?, ?)", event)
            for hook_id in targets:
                cursor = conn.execute(
                    "INSERT INTO webhook_deliveries (webhook_id, event_id, record_key, due_us)"
                    " VALUES (?, ?, ?, ?)",
                    (hook_id, event_id, record_key, now_us),
                )
                conn.execute(
                    "INSERT INTO webhook_attempts (delivery_seq, attempt, status, scheduled_us)"
                    " VALUES (?, 1, 'pending', ?)",
                    (cursor.lastrowid, now_us),
                )
            return len(targets)

    def _wanted(self, workspace_id: str, event_type: str) -> bool:
        """Whether any webhook of the workspace may want the event, read without the write lock.

        Most writes happen in workspaces without webhooks; this keeps them from queueing for
        the write lock a second time. The answer is checked again inside the transaction.
        """
        rows = self._read(
            "SELECT events FROM webhook_subscriptions WHERE workspace_id = ?", (workspace_id,)
        )
        return any({"*", event_type} & set(json.loads(events)) for (events,) in rows)

    def heads(self) -> list[Head]:
        # With a lone min() aggregate, SQLite takes the bare columns from the row holding it.
        rows = self._read(
            "SELECT min(seq), webhook_id, attempt, due_us FROM webhook_deliveries"
            " WHERE done = 0 GROUP BY webhook_id, record_key",
            (),
        )
        return [Head(*row) for row in rows]

    def job(self, head: Head) -> Job | None:
        """What to send for ``head``, or None if it is no longer that attempt's turn."""
        rows = self._read(
            "SELECT s.url, s.secret, e.id, e.type, e.body FROM webhook_deliveries AS d"
            " JOIN webhook_subscriptions AS s ON s.id = d.webhook_id"
            " JOIN webhook_events AS e ON e.id = d.event_id"
            " WHERE d.seq = ? AND d.attempt = ? AND d.done = 0",
            (head.seq, head.attempt),
        )
        return Job(*rows[0]) if rows else None

    def record(self, head: Head, outcome: Outcome, retry_at_us: int | None) -> None:
        """Close the attempt; schedule the next one at ``retry_at_us``, or finish the delivery."""
        status = "retrying" if retry_at_us is not None else "failed"
        if outcome.succeeded:
            status = "succeeded"
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE webhook_attempts SET status = ?, response_code = ?, error = ?,"
                " attempted_us = ?, completed_us = ?"
                " WHERE delivery_seq = ? AND attempt = ? AND status = 'pending'",
                (
                    status,
                    outcome.response_code,
                    outcome.error,
                    outcome.attempted_us,
                    outcome.completed_us,
                    head.seq,
                    head.attempt,
                ),
            )
            if cursor.rowcount == 0:
                return
            if status != "retrying":
                conn.execute("UPDATE webhook_deliveries SET done = 1 WHERE seq = ?", (head.seq,))
                return
            conn.execute(
                "UPDATE webhook_deliveries SET attempt = ?, due_us = ? WHERE seq = ?",
                (head.attempt + 1, retry_at_us, head.seq),
            )
            conn.execute(
                "INSERT INTO webhook_attempts (delivery_seq, attempt, status, scheduled_us)"
                " VALUES (?, ?, 'pending', ?)",
                (head.seq, head.attempt + 1, retry_at_us),
            )

    def attempts(self, webhook_id: str) -> list[dict[str, Any]]:
        rows = self._read(
            "SELECT d.event_id, e.type, a.attempt, a.status, a.response_code, a.error,"
            " a.scheduled_us, a.attempted_us, a.completed_us"
            " FROM webhook_attempts AS a"
            " JOIN webhook_deliveries AS d ON d.seq = a.delivery_seq"
            " JOIN webhook_events AS e ON e.id = d.event_id"
            " WHERE d.webhook_id = ? ORDER BY a.delivery_seq, a.attempt",
            (webhook_id,),
        )
        return [_attempt_dict(*row) for row in rows]
