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
in proportion, but it never grows past 10 s nor falls below ``MIN_TIMEOUT_SECONDS`` (1 s): at
``window_seconds=1`` the raw scale would give 0.167 s, less than a loaded machine needs to
connect and answer, and every such spurious timeout would be retried. It bounds the whole
attempt (URL check, connection, response status); the response body is never read. The SQLite
side (schema, queue) is ``server.webhook_queue``.

One dispatcher per database file: which attempts are in flight is known only in memory.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import sqlite3
from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from server.webhook_queue import Head, Job, Outcome, WebhookQueue, Within, iso
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
MIN_TIMEOUT_SECONDS = 1.0
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

log = logging.getLogger(__name__)


class WebhookConfigError(ValueError):
    """Events or a secret the service will not store for a webhook; the message says why."""


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


def _log_crash(task: asyncio.Task[None]) -> None:
    """Report a background task that died of an unexpected error, which would go unseen."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.error("%s crashed", task.get_name(), exc_info=exc)


class _Worker:
    """The running half of a dispatcher: one scheduler task, plus one task per attempt."""

    def __init__(
        self,
        queue: WebhookQueue,
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

    def _start(self, head: Head) -> None:
        self._in_flight[head.seq] = head.webhook_id
        task = asyncio.create_task(self._attempt(head), name=f"webhook-attempt-{head.seq}")
        self._attempts.add(task)
        task.add_done_callback(self._attempts.discard)
        task.add_done_callback(_log_crash)

    async def _attempt(self, head: Head) -> None:
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

    async def _send(self, job: Job) -> Outcome:
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
        return Outcome(attempted_us, self._now_us(), code, error)


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
        self._queue = WebhookQueue(Path(db_path))
        self._clock = clock or (lambda: datetime.now(UTC))
        self._transport = transport
        self._allow_private = allow_private
        self._retry_delays_us = tuple(round(d * scale * _MICROS) for d in RETRY_DELAYS_SECONDS)
        self._timeout = max(MIN_TIMEOUT_SECONDS, TIMEOUT_SECONDS * min(1.0, scale))
        self._worker: _Worker | None = None

    def add_webhook(
        self,
        workspace_id: str,
        url: str,
        events: list[str],
        secret: str,
        within: Within | None = None,
    ) -> dict[str, Any]:
        """Store a webhook; the answer is the only one that includes ``secret``. ``within``
        gets that answer in the write's transaction (to keep it under an idempotency key).

        Raises :class:`WebhookURLError` or :class:`WebhookConfigError` (both ``ValueError``).
        """
        check_webhook_url(url, allow_private=self._allow_private)
        stored_events = _checked_events(events)
        now_us = self._now_us()
        webhook_id = f"whk_{secrets.token_hex(12)}"
        row = (webhook_id, workspace_id, url, stored_events, _checked_secret(secret))

        def with_secret(conn: sqlite3.Connection, made: dict[str, Any]) -> None:
            if within is not None:
                within(conn, {**made, "secret": secret})

        made = self._queue.insert_webhook((*row, now_us, now_us), with_secret)
        return {**made, "secret": secret}

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
            "created_at": iso(now_us),
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
