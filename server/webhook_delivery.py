"""Webhook delivery: a durable queue per webhook in SQLite, drained by an asyncio worker.

::

    emit() ─► webhook_events + webhook_deliveries + a pending webhook_attempts row ─► wake
    scheduler: oldest unfinished delivery of each (webhook, record), if due ─► one task each
    attempt task: signed POST ─► attempt succeeded | retrying (+ next pending row) | failed

Why this shape:

- ``emit`` only writes SQLite and wakes the worker, so an API request never waits on a receiver.
- The queue is durable, so a restart resumes what was pending. Delivery is at-least-once: an
  attempt cut short by ``stop`` is made again, and ``X-Tracker-Delivery`` (the event id) lets a
  receiver drop the duplicate.
- Only the oldest unfinished delivery of a (webhook, record) pair is eligible, so one record's
  events arrive in order; different records and webhooks proceed concurrently, and each webhook
  has at most ``MAX_IN_FLIGHT_PER_WEBHOOK`` requests open, so a dead receiver holds a bounded
  number of connections and never delays the others.
- Anything but a 2xx (redirects included: they are not followed) is retried after
  ``RETRY_DELAYS_SECONDS``, then the delivery is marked failed and the record's next event goes.

Time scale: retry delays scale by ``window_seconds / 60`` like the rate limits. The 10 s timeout
scales the same way when ``window_seconds < 60``, so a hanging receiver in a fast test times out
in proportion, but it never grows past 10 s. It bounds the whole attempt (URL check, connection,
response status); the response body is never read.

One dispatcher per database file: which attempts are in flight is known only in memory.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from server.webhook_signing import sign
from server.webhook_urls import WebhookURLError, check_webhook_url

Clock = Callable[[], datetime]

EVENT_TYPES = frozenset(
    f"{kind}.{change}"
    for kind in ("issue", "project", "comment")
    for change in ("created", "updated", "deleted")
)
RETRY_DELAYS_SECONDS = (1, 5, 25, 125, 625)
TIMEOUT_SECONDS = 10.0
MAX_IN_FLIGHT_PER_WEBHOOK = 8
USER_AGENT = "tracker-server-webhooks/1"

_MICROS = 1_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_BUSY_TIMEOUT_SECONDS = 10.0

log = logging.getLogger(__name__)

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


class WebhookConfigError(ValueError):
    """Events or a secret the service will not store for a webhook; the message says why."""


def _iso(micros: int | None) -> str | None:
    """CONTRACT timestamp form: ISO 8601 UTC with microseconds and ``Z``."""
    if micros is None:
        return None
    return (_EPOCH + timedelta(microseconds=micros)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _checked_events(events: list[str]) -> str:
    """The event filter as stored (a JSON list), refusing anything but known types or ``*``."""
    if not events:
        raise WebhookConfigError("events must list event types, or be ['*'] for all of them")
    unknown = sorted({e for e in events if e != "*" and e not in EVENT_TYPES})
    if unknown:
        raise WebhookConfigError(
            f"unknown event types {unknown}; expected ['*'] or some of {sorted(EVENT_TYPES)}"
        )
    return json.dumps(["*"] if "*" in events else list(dict.fromkeys(events)))


def _checked_secret(secret: str) -> str:
    if not secret:
        raise WebhookConfigError("a webhook secret must not be empty")
    return secret


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
        "scheduled_at": _iso(scheduled_us),
        "attempted_at": _iso(attempted_us),
        "completed_at": _iso(completed_us),
    }


@dataclass(frozen=True)
class _Head:
    """The oldest unfinished delivery of one (webhook, record) queue."""

    seq: int
    webhook_id: str
    attempt: int
    due_us: int


@dataclass(frozen=True)
class _Job:
    """What one attempt sends, read when it starts so a changed URL or secret takes effect."""

    url: str
    secret: str
    event_id: str
    event_type: str
    body: bytes


@dataclass(frozen=True)
class _Outcome:
    """What became of one attempt: a response code, or an error saying why there was none."""

    attempted_us: int
    completed_us: int
    response_code: int | None
    error: str | None

    @property
    def succeeded(self) -> bool:
        return self.response_code is not None and 200 <= self.response_code < 300


class _Queue:
    """The SQLite side: subscriptions, events, and the deliveries and attempts of each.

    A connection is opened per call so the app's threads, the worker's threads and other
    processes can all use the file; every write is one ``BEGIN IMMEDIATE`` transaction.
    """

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

    def insert_webhook(self, row: tuple[str, str, str, str, str, int, int]) -> None:
        with self._write() as conn:
            conn.execute(
                "INSERT INTO webhook_subscriptions"
                " (id, workspace_id, url, events, secret, created_us, updated_us)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                row,
            )

    def webhooks(self, workspace_id: str, webhook_id: str | None = None) -> list[dict[str, Any]]:
        rows = self._read(
            "SELECT id, workspace_id, url, events, created_us, updated_us"
            " FROM webhook_subscriptions WHERE workspace_id = ?1 AND (?2 IS NULL OR id = ?2)"
            " ORDER BY created_us, id",
            (workspace_id, webhook_id),
        )
        return [
            {
                "id": hook_id,
                "workspace_id": workspace,
                "url": url,
                "events": json.loads(events),
                "created_at": _iso(created),
                "updated_at": _iso(updated),
            }
            for hook_id, workspace, url, events, created, updated in rows
        ]

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

    def heads(self) -> list[_Head]:
        # With a lone min() aggregate, SQLite takes the bare columns from the row holding it.
        rows = self._read(
            "SELECT min(seq), webhook_id, attempt, due_us FROM webhook_deliveries"
            " WHERE done = 0 GROUP BY webhook_id, record_key",
            (),
        )
        return [_Head(*row) for row in rows]

    def job(self, head: _Head) -> _Job | None:
        """What to send for ``head``, or None if it is no longer that attempt's turn."""
        rows = self._read(
            "SELECT s.url, s.secret, e.id, e.type, e.body FROM webhook_deliveries AS d"
            " JOIN webhook_subscriptions AS s ON s.id = d.webhook_id"
            " JOIN webhook_events AS e ON e.id = d.event_id"
            " WHERE d.seq = ? AND d.attempt = ? AND d.done = 0",
            (head.seq, head.attempt),
        )
        return _Job(*rows[0]) if rows else None

    def record(self, head: _Head, outcome: _Outcome, retry_at_us: int | None) -> None:
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


def _log_crash(task: asyncio.Task[None]) -> None:
    """Report a background task that died of an unexpected error, which would go unseen."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.error("%s crashed", task.get_name(), exc_info=exc)


class _Worker:
    """The running half of a dispatcher: one scheduler task, plus one task per attempt."""

    def __init__(
        self,
        queue: _Queue,
        client: httpx.AsyncClient,
        *,
        now_us: Callable[[], int],
        retry_delays_us: tuple[int, ...],
        timeout: float,
        allow_private: bool,
    ) -> None:
        self._queue = queue
        self._client = client
        self._now_us = now_us
        self._retry_delays_us = retry_delays_us
        self._timeout = timeout
        self._allow_private = allow_private
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._progress = asyncio.Event()
        self._in_flight: dict[int, str] = {}
        self._attempts: set[asyncio.Task[None]] = set()
        self._scheduler = asyncio.create_task(self._schedule(), name="webhook-scheduler")
        self._scheduler.add_done_callback(_log_crash)

    def wake_threadsafe(self) -> None:
        """Have the scheduler look at the queue again; callable from any thread."""
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._wake.set)

    async def close(self) -> None:
        """Cancel everything; an attempt cut short stays pending and is made again later."""
        tasks = [self._scheduler, *self._attempts]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._client.aclose()

    async def settle(self) -> None:
        """Return once no attempt is in flight and none is due."""
        while True:
            self._progress.clear()
            self._wake.set()
            await self._progress.wait()
            while self._in_flight:
                self._progress.clear()
                await self._progress.wait()
            if not await asyncio.to_thread(self._due_now):
                return

    def _due_now(self) -> bool:
        now_us = self._now_us()
        return any(head.due_us <= now_us for head in self._queue.heads())

    async def _schedule(self) -> None:
        while True:
            self._wake.clear()
            now_us = self._now_us()
            try:
                next_due_us = await self._start_due_heads(now_us)
            except sqlite3.Error:
                log.exception("webhook queue unreadable; looking again in a second")
                next_due_us = now_us + _MICROS
            self._progress.set()
            sleep = None if next_due_us is None else (next_due_us - now_us) / _MICROS
            with suppress(TimeoutError):
                async with asyncio.timeout(sleep):
                    await self._wake.wait()

    async def _start_due_heads(self, now_us: int) -> int | None:
        """Start an attempt for every due head that may go now; when the next one falls due."""
        heads = await asyncio.to_thread(self._queue.heads)
        busy = Counter(self._in_flight.values())
        later = [head.due_us for head in heads if head.due_us > now_us]
        for head in heads:
            if head.seq in self._in_flight or head.due_us > now_us:
                continue
            if busy[head.webhook_id] < MAX_IN_FLIGHT_PER_WEBHOOK:
                busy[head.webhook_id] += 1
                self._start(head)
        return min(later, default=None)

    def _start(self, head: _Head) -> None:
        self._in_flight[head.seq] = head.webhook_id
        task = asyncio.create_task(self._attempt(head), name=f"webhook-attempt-{head.seq}")
        self._attempts.add(task)
        task.add_done_callback(self._attempts.discard)
        task.add_done_callback(_log_crash)

    async def _attempt(self, head: _Head) -> None:
        try:
            job = await asyncio.to_thread(self._queue.job, head)
            if job is None:
                return
            outcome = await self._send(job)
            retry_at_us = None
            if not outcome.succeeded and head.attempt <= len(self._retry_delays_us):
                retry_at_us = outcome.completed_us + self._retry_delays_us[head.attempt - 1]
            await asyncio.to_thread(self._queue.record, head, outcome, retry_at_us)
        finally:
            del self._in_flight[head.seq]
            self._wake.set()
            self._progress.set()

    async def _send(self, job: _Job) -> _Outcome:
        attempted_us = self._now_us()
        code: int | None = None
        error: str | None = None
        headers = {
            "Content-Type": "application/json",
            "X-Tracker-Event": job.event_type,
            "X-Tracker-Delivery": job.event_id,
            "X-Tracker-Signature": sign(job.secret, attempted_us // _MICROS, job.body),
        }
        try:
            async with asyncio.timeout(self._timeout):
                await asyncio.to_thread(
                    check_webhook_url, job.url, allow_private=self._allow_private
                )
                async with self._client.stream(
                    "POST", job.url, content=job.body, headers=headers
                ) as response:
                    code = response.status_code
        except WebhookURLError as exc:
            error = str(exc)
        except (TimeoutError, httpx.TimeoutException):
            error = f"no response within {self._timeout:g} s"
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return _Outcome(attempted_us, self._now_us(), code, error)


class WebhookDispatcher:
    """Stores a workspace's webhooks and delivers its events to them, in the background.

    The app owns the lifecycle: ``start`` and ``stop`` in its lifespan, ``emit`` after each
    write commits. Until ``start``, emitted events wait in the queue. ``transport`` stands in
    for the network (as ``httpx.ASGITransport`` does); ``stop`` closes it with the client.
    """

    def __init__(
        self,
        db_path: str | Path,
        *,
        window_seconds: float = 60,
        clock: Clock | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        allow_private: bool = False,
    ) -> None:
        if window_seconds <= 0:
            raise ValueError(f"window_seconds must be positive, not {window_seconds!r}")
        scale = window_seconds / 60
        self._queue = _Queue(Path(db_path))
        self._clock = clock or (lambda: datetime.now(UTC))
        self._transport = transport
        self._allow_private = allow_private
        self._retry_delays_us = tuple(round(d * scale * _MICROS) for d in RETRY_DELAYS_SECONDS)
        self._timeout = TIMEOUT_SECONDS * min(1.0, scale)
        self._worker: _Worker | None = None

    def add_webhook(
        self, workspace_id: str, url: str, events: list[str], secret: str
    ) -> dict[str, Any]:
        """Store a webhook; the answer is the only one that includes ``secret``.

        Raises :class:`WebhookURLError` or :class:`WebhookConfigError` (both ``ValueError``).
        """
        check_webhook_url(url, allow_private=self._allow_private)
        stored_events = _checked_events(events)
        now_us = self._now_us()
        webhook_id = f"whk_{secrets.token_hex(12)}"
        row = (webhook_id, workspace_id, url, stored_events, _checked_secret(secret))
        self._queue.insert_webhook((*row, now_us, now_us))
        return {**self._queue.webhooks(workspace_id, webhook_id)[0], "secret": secret}

    def list_webhooks(self, workspace_id: str) -> list[dict[str, Any]]:
        """The workspace's webhooks, oldest first, without their secrets."""
        return self._queue.webhooks(workspace_id)

    def get_webhook(self, workspace_id: str, webhook_id: str) -> dict[str, Any] | None:
        """The webhook, or None if the workspace has no such webhook."""
        found = self._queue.webhooks(workspace_id, webhook_id)
        return found[0] if found else None

    def update_webhook(
        self,
        workspace_id: str,
        webhook_id: str,
        *,
        url: str | None = None,
        events: list[str] | None = None,
        secret: str | None = None,
    ) -> dict[str, Any] | None:
        """Change the given fields; pending deliveries go to the new URL with the new secret.

        A new event filter applies to events emitted from now on. Returns None if the workspace
        has no such webhook; raises like :meth:`add_webhook`.
        """
        changes: dict[str, str] = {}
        if url is not None:
            check_webhook_url(url, allow_private=self._allow_private)
            changes["url"] = url
        if events is not None:
            changes["events"] = _checked_events(events)
        if secret is not None:
            changes["secret"] = _checked_secret(secret)
        if not self._queue.update_webhook(workspace_id, webhook_id, changes, self._now_us()):
            return None
        return self.get_webhook(workspace_id, webhook_id)

    def delete_webhook(self, workspace_id: str, webhook_id: str) -> dict[str, Any] | None:
        """Delete the webhook with its pending deliveries; the deleted webhook, or None."""
        found = self.get_webhook(workspace_id, webhook_id)
        if found is None or not self._queue.delete_webhook(workspace_id, webhook_id):
            return None
        return found

    def deliveries(self, webhook_id: str) -> list[dict[str, Any]]:
        """Every attempt, oldest event first, then by attempt number.

        ``status`` is ``pending`` for an attempt not made yet (``scheduled_at`` says when it is
        due), ``retrying`` for a failed attempt with another to come, ``failed`` for the last
        failed attempt, ``succeeded`` for a 2xx. ``response_code`` is None when no response
        came; ``error`` then says why.
        """
        return self._queue.attempts(webhook_id)

    def emit(
        self,
        workspace_id: str,
        event_type: str,
        obj: dict[str, Any],
        previous: dict[str, Any] | None,
    ) -> None:
        """Queue the event for the workspace's webhooks that want it; never touches the network.

        ``obj`` is the record as the API shows it (JSON-ready, with its ``id``); ``previous``
        holds the old values of changed fields (``{}`` is sent when None). Raises ValueError for
        an unknown event type or a record without an id: both are bugs in the caller.
        """
        if event_type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {event_type!r}")
        record_id = obj.get("id")
        if not isinstance(record_id, str):
            raise ValueError(f"a {event_type} event needs the record's id, got {record_id!r}")
        now_us = self._now_us()
        event_id = f"evt_{secrets.token_hex(12)}"
        body = {
            "id": event_id,
            "type": event_type,
            "created_at": _iso(now_us),
            "workspace_id": workspace_id,
            "data": {"object": obj, "previous": previous or {}},
        }
        event = (event_id, event_type, json.dumps(body, separators=(",", ":")).encode())
        record_key = f"{event_type.partition('.')[0]}:{record_id}"
        if self._queue.enqueue(workspace_id, event, record_key, now_us) and self._worker:
            self._worker.wake_threadsafe()

    async def start(self) -> None:
        """Start delivering in the background, beginning with whatever is pending."""
        if self._worker is not None:
            raise RuntimeError("the webhook dispatcher is already running")
        client = httpx.AsyncClient(
            transport=self._transport,
            timeout=self._timeout,
            follow_redirects=False,
            trust_env=False,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=20),
            headers={"User-Agent": USER_AGENT},
        )
        self._worker = _Worker(
            self._queue,
            client,
            now_us=self._now_us,
            retry_delays_us=self._retry_delays_us,
            timeout=self._timeout,
            allow_private=self._allow_private,
        )

    async def stop(self) -> None:
        """Stop delivering; attempts in flight are abandoned and made again after a restart."""
        worker, self._worker = self._worker, None
        if worker is not None:
            await worker.close()

    async def drain(self, timeout: float) -> None:
        """Wait until no attempt is in flight and none is due now (a test helper).

        Raises TimeoutError after ``timeout`` seconds. Retries scheduled later do not count.
        """
        if self._worker is None:
            raise RuntimeError("the webhook dispatcher is not running")
        async with asyncio.timeout(timeout):
            await self._worker.settle()

    def _now_us(self) -> int:
        now = self._clock()
        if now.tzinfo is None:
            raise ValueError("the clock must return an aware datetime")
        return (now - _EPOCH) // timedelta(microseconds=1)
