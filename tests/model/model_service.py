"""The service side of the model test: the reference service in-process on virtual time, its
variant with only the published API (docs/api.md#guaranteed), and the oracle that watches every
request it serves.

Virtual time: one clock for the service (its timestamps and rate-limit windows), the caches
(entry times) and the client limiters (their log, their waits). A wait for a window costs no
real time, so a run exercises the limits with the published minute (no scaled windows needed) and
the reconcile's real-second margins (`LATE_APPLY`) mean what they say.

The oracle sits between the clients' wires and the service: it sees each request as the client
sent it (its `Idempotency-Key` included, before a server without idempotency keys drops it) and each
answer as the service gave it (before a fault loses it). From those it keeps a mirror of the
service's records, who made each record and from which request, who last wrote each field, and every
429 the service itself sent, per actor.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import formatdate
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

FIELDS = ("title", "description", "priority", "status")
"""The issue fields the model writes and checks."""


class VirtualClock:
    """Seconds since the epoch that move only when someone sleeps or the model waits.

    `sleep` wakes the sleeper at its own deadline: two tasks sleeping together both wake at
    theirs, and the clock never moves back."""

    def __init__(self, start: float) -> None:
        self.now = start
        self.waits: Counter[str] = Counter()
        """Sleeps that waited, by who slept (`limiter`: a rate limit; `retry`: a backoff)."""

    def time(self) -> float:
        return self.now

    def utc(self) -> datetime:
        return datetime.fromtimestamp(self.now, UTC)

    def advance(self, seconds: float) -> None:
        self.now += max(0.0, seconds)

    async def sleep(self, seconds: float, who: str = "retry") -> None:
        if seconds > 0:
            self.waits[who] += 1
        wake = self.now + max(0.0, seconds)
        await asyncio.sleep(0)
        self.now = max(self.now, wake)


async def _answer(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def dated(app: App, clock: VirtualClock) -> App:
    """The `Date` header a real HTTP server adds (the client measures the server clock by it)."""

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_dated(message: Message) -> None:
            if message["type"] == "http.response.start":
                stamp = formatdate(clock.time(), usegmt=True).encode()
                message = {**message, "headers": [*message["headers"], (b"date", stamp)]}
            await send(message)

        await app(scope, receive, send_dated if scope["type"] == "http" else send)

    return variant


def spec_only(app: App) -> App:
    """The service as a server with only the published API, as far as a client can tell: no `/me`,
    no bulk endpoint, no tombstones (400 to `include_deleted`), `Idempotency-Key` ignored, and
    no ETag (none sent, `If-Match` ignored)."""

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        path, query = scope["path"], scope.get("query_string", b"")
        if path == "/v1/issues/bulk":
            await _answer(send, 404, "not_found", "Not found.")
            return
        if b"include_deleted" in query:
            await _answer(send, 400, "invalid_request", "unknown parameter include_deleted")
            return
        dropped = (b"idempotency-key", b"if-match")
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in dropped]
        scope = {**scope, "headers": headers}
        if path == "/v1/me":
            scope = {**scope, "path": "/v1/me-not-served", "raw_path": b"/v1/me-not-served"}

        async def send_untagged(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message["headers"] if k.lower() != b"etag"]
                message = {**message, "headers": kept}
            await send(message)

        await app(scope, receive, send_untagged)

    return variant


@dataclass(frozen=True)
class Made:
    """A record the service created, and the request that made it."""

    actor: str
    resource: str
    fields: dict[str, Any]
    key: str | None
    at: float


@dataclass(frozen=True)
class Applied:
    """One field an update changed on the service: `old` was last written by `old_writer`."""

    actor: str
    record: str
    field: str
    old: Any
    new: Any
    old_writer: str
    at: float


@dataclass
class Mirror:
    """What the service holds, as its answers to writes told the oracle."""

    issues: dict[str, dict[str, Any]] = field(default_factory=dict)
    comments: dict[str, dict[str, Any]] = field(default_factory=dict)
    history: dict[tuple[str, str], list[tuple[float, str, Any]]] = field(default_factory=dict)
    """Per issue field, each value it took: (virtual time, writer, value), oldest first."""
    made: dict[str, Made] = field(default_factory=dict)
    applied: list[Applied] = field(default_factory=list)
    deleted: dict[str, str] = field(default_factory=dict)
    replays: int = 0

    def load(self, issues: list[dict[str, Any]], comments: list[dict[str, Any]]) -> None:
        for issue in issues:
            self.issues[issue["id"]] = issue
            for name in FIELDS:
                self._wrote(issue["id"], name, 0.0, "seed", issue.get(name))
        for comment in comments:
            self.comments[comment["id"]] = comment

    def _wrote(self, record_id: str, name: str, at: float, writer: str, value: Any) -> None:
        self.history.setdefault((record_id, name), []).append((at, writer, value))

    def writer(self, record_id: str, name: str) -> str:
        """Who last wrote the field."""
        return self.history[(record_id, name)][-1][1]

    def value_at(self, record_id: str, name: str, at: float) -> tuple[str, Any] | None:
        """(writer, value) of the field as it stood at virtual time `at`."""
        found = None
        for stamp, writer, value in self.history.get((record_id, name), []):
            if stamp > at:
                break
            found = (writer, value)
        return found

    def created(
        self, actor: str, resource: str, sent: dict[str, Any], record: Any, key: Any, at: float
    ) -> None:
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            return
        record_id = record["id"]
        if record_id in self.made or record_id in self.issues or record_id in self.comments:
            self.replays += 1
            return
        self.made[record_id] = Made(actor, resource, dict(sent), key, at)
        if resource == "issues":
            self.issues[record_id] = record
            for name in FIELDS:
                self._wrote(record_id, name, at, actor, record.get(name))
        else:
            self.comments[record_id] = record

    def updated(self, actor: str, sent: dict[str, Any], record: Any, at: float) -> None:
        if not isinstance(record, dict) or record.get("id") not in self.issues:
            return
        record_id = record["id"]
        before = self.issues[record_id]
        for name in sent:
            if name in FIELDS and before.get(name) != record.get(name):
                old_writer = self.writer(record_id, name)
                old, new = before.get(name), record.get(name)
                self.applied.append(Applied(actor, record_id, name, old, new, old_writer, at))
                self._wrote(record_id, name, at, actor, new)
        self.issues[record_id] = record

    def removed(self, actor: str, record_id: str) -> None:
        if self.issues.pop(record_id, None) is None:
            return
        self.deleted[record_id] = actor
        for comment_id in [c for c, rec in self.comments.items() if rec["issue_id"] == record_id]:
            del self.comments[comment_id]


@dataclass
class Oracle:
    """An ASGI wrapper that watches the service; `actors` maps API keys to actor names."""

    app: App
    clock: VirtualClock
    actors: dict[str, str]
    mirror: Mirror = field(default_factory=Mirror)
    refused: Counter[str] = field(default_factory=Counter)
    """429s the service itself sent, per actor."""
    served: Counter[str] = field(default_factory=Counter)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if delivered:
                return {"type": "http.disconnect"}
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        answer: dict[str, Any] = {"status": 0, "chunks": []}

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                # A replayed answer (the same key and body again) changed nothing: its records
                # are as they were then, not writes of now.
                replayed = (b"idempotency-replayed", b"true") in message.get("headers", [])
                answer["status"] = 0 if replayed else message["status"]
            elif message["type"] == "http.response.body":
                answer["chunks"].append(message.get("body", b""))
            await send(message)

        await self.app(scope, replay, capture)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        actor = self.actors.get(headers.get("authorization", "").removeprefix("Bearer "), "?")
        self.served[actor] += 1
        self._observe(scope, headers, actor, body, answer["status"], b"".join(answer["chunks"]))

    def _observe(
        self,
        scope: Scope,
        headers: dict[str, str],
        actor: str,
        body: bytes,
        status: int,
        content: bytes,
    ) -> None:
        if status == 429:
            self.refused[actor] += 1
        method, path = scope["method"], scope["path"]
        if method == "GET" or not 200 <= status < 300:
            return
        sent = json.loads(body) if body else {}
        answer = json.loads(content) if content else None
        now, key = self.clock.time(), headers.get("idempotency-key")
        parts = path.strip("/").split("/")  # v1, collection, [id]
        if parts[1:] == ["issues"] and method == "POST":
            self.mirror.created(actor, "issues", sent, answer, key, now)
        elif parts[1:] == ["comments"] and method == "POST":
            self.mirror.created(actor, "comments", sent, answer, key, now)
        elif parts[1:] == ["issues", "bulk"]:
            self._bulk(actor, sent, answer, key, now)
        elif parts[1] == "issues" and len(parts) == 3 and method == "PATCH":
            self.mirror.updated(actor, sent, answer, now)
        elif parts[1] == "issues" and len(parts) == 3 and method == "DELETE":
            self.mirror.removed(actor, parts[2])

    def _bulk(self, actor: str, sent: Any, answer: Any, key: str | None, now: float) -> None:
        operations = sent.get("operations", []) if isinstance(sent, dict) else []
        results = answer.get("data", []) if isinstance(answer, dict) else []
        for result in results:
            index = result.get("index")
            if not isinstance(index, int) or not 200 <= int(result.get("status", 0)) < 300:
                continue
            operation = operations[index]
            if operation["op"] == "create":
                op_key = None if key is None else f"{key}#{index}"
                self.mirror.created(
                    actor, "issues", operation["fields"], result.get("issue"), op_key, now
                )
            elif operation["op"] == "update":
                self.mirror.updated(actor, operation["changes"], result.get("issue"), now)
            else:
                self.mirror.removed(actor, operation["id"])
