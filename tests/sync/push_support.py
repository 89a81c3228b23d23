"""Helpers for the push, engine and live-update tests: the reference service with its real
variants (no bulk endpoint, Idempotency-Key ignored), wires that count requests or lose an
answer after the service acted, sessions over a real cache file, and the crash-trial child.

Run as a script (`python push_support.py BASE_URL CACHE_PATH`, key in TRACKER_API_KEY) it is
the child process of the crash trials: it pushes the outbox of that cache and exits.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path
from typing import Any

import httpx

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import Cache, Cursor, Resource
from sync.session import SyncSession, open_session

BASE_URL = "http://tracker.test/v1"
BULK_PATH = "/v1/issues/bulk"
ME_PATH = "/v1/me"

Scope = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]


def without_bulk(app: Any) -> Any:
    """The service as a server without the bulk endpoint: 404 for it, like any unknown path."""

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == BULK_PATH:
            body = json.dumps({"error": {"code": "not_found", "message": "Not found."}}).encode()
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 404, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return variant


def without_idempotency(app: Any) -> Any:
    """The service as a server that ignores `Idempotency-Key` (docs/api.md#idempotency-keys: the
    published API does not have it)."""

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"idempotency-key"]
            scope = {**scope, "headers": headers}
        await app(scope, receive, send)

    return variant


def without_me(app: Any) -> Any:
    """The service as a server without `/me` (docs/api.md#current-user-get-me): the service itself
    answers the path as any unknown one (404, with its rate-limit headers), so the plan is known
    only from them."""

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == ME_PATH:
            scope = {**scope, "path": ME_PATH + "-not-served", "raw_path": b"/v1/me-not-served"}
        await app(scope, receive, send)

    return variant


def refusing_tombstones(app: Any) -> Any:
    """The service as a server without tombstones: 400 to `include_deleted`, as the published API
    allows (docs/api.md#tombstones)."""

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and b"include_deleted" in scope.get("query_string", b""):
            error = {"code": "invalid_request", "message": "unknown parameter include_deleted"}
            await _answer(send, 400, error)
            return
        await app(scope, receive, send)

    return variant


def dated(app: Any) -> Any:
    """The service with the `Date` header an HTTP server adds to every answer (uvicorn does on
    loopback; in-process, nothing does), from which the client measures the server's clock."""

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_dated(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                stamp = formatdate(time.time(), usegmt=True).encode()
                message = {**message, "headers": [*message["headers"], (b"date", stamp)]}
            await send(message)

        await app(scope, receive, send_dated if scope["type"] == "http" else send)

    return variant


def spec_only(app: Any) -> Any:
    """The service as a server with only the published API (docs/api.md#guaranteed), as far as a
    client can tell: no `/me`, no bulk endpoint, no tombstones, `Idempotency-Key` ignored; served
    with a `Date`."""
    return dated(without_me(without_bulk(refusing_tombstones(without_idempotency(app)))))


async def _answer(send: Send, status: int, error: dict[str, str]) -> None:
    body = json.dumps({"error": error}).encode()
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def comments_per_issue_only(app: Any) -> Any:
    """The service as a server that lists comments of one issue at a time: a listing without
    `issue_id` is refused with a 400, as docs/api.md#comment-and-user-lists allows."""

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        query = scope.get("query_string", b"") if scope["type"] == "http" else b""
        listing = scope["type"] == "http" and scope["method"] == "GET"
        if listing and scope["path"] == "/v1/comments" and b"issue_id=" not in query:
            error = {"code": "invalid_request", "message": "issue_id is required."}
            body = json.dumps({"error": error}).encode()
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 400, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return variant


@dataclass
class Wire(httpx.AsyncBaseTransport):
    """An ASGI transport that counts requests and can lose them before or after the service.

    `lose(request)` True: the request reaches the service, which applies it; the client then
    gets a read timeout instead of the answer, as when a connection dies at the worst moment.
    `drop(request)` True: the connection closes once the request was sent, before the service
    saw it; the client cannot tell this from `lose`. `before(request)` runs first: another
    writer acting just before the request lands.
    """

    app: Any
    lose: Callable[[httpx.Request], bool] | None = None
    drop: Callable[[httpx.Request], bool] | None = None
    before: Callable[[httpx.Request], Awaitable[None]] | None = None
    requests: list[tuple[str, str]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    lost: int = 0
    dropped: int = 0

    def __post_init__(self) -> None:
        self._inner = httpx.ASGITransport(app=self.app)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append((request.method, request.url.path))
        if self.before is not None:
            await self.before(request)
        if self.drop is not None and self.drop(request):
            self.dropped += 1
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        response = await self._inner.handle_async_request(request)
        self.statuses.append(response.status_code)
        if self.lose is not None and self.lose(request):
            await response.aread()
            await response.aclose()
            self.lost += 1
            raise httpx.ReadTimeout("the answer was lost", request=request)
        return response

    def count(self, method: str, suffix: str) -> int:
        return sum(1 for m, path in self.requests if m == method and path.endswith(suffix))

    def reset(self) -> None:
        self.requests.clear()
        self.statuses.clear()


async def colleague_write(
    wire: Wire, key: str, method: str, path: str, body: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A write straight to the service behind `wire` (never through its faults or its
    counts): someone else's, made while the client's request was on its way. Its answer's
    JSON object ({} when there is none)."""
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(wire.app),
        base_url=BASE_URL,
        headers={"Authorization": f"Bearer {key}"},
    ) as api:
        answer = await api.request(method, path, json=body)
    answer.raise_for_status()
    found = answer.json() if answer.content else {}
    return found if isinstance(found, dict) else {}


def resolved(key: str, server: str = BASE_URL) -> ResolvedProfile:
    return ResolvedProfile(
        name=None, server=server, workspace=None, key=Secret(key), key_source=KeySource.ENV
    )


@asynccontextmanager
async def session_for(
    key: str,
    cache_path: Path,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    server: str = BASE_URL,
    window_seconds: float = 60.0,
    timeout: float = 10.0,
) -> AsyncIterator[SyncSession]:
    with Cache.open(cache_path) as cache:
        async with open_session(
            resolved(key, server),
            cache=cache,
            transport=transport,
            window_seconds=window_seconds,
            timeout=timeout,
        ) as session:
            yield session


async def load_issues(session: SyncSession) -> list[dict[str, Any]]:
    """Copy every issue into the cache, with a cursor at the newest, as a pull would."""
    found: list[dict[str, Any]] = []
    page = 1
    while True:
        answer = await session.client.list_issues(page=page, per_page=100)
        found.extend(issue.raw for issue in answer.value.data)
        if answer.value.received < 100:
            break
        page += 1
    newest = max(str(record["updated_at"]) for record in found) if found else None
    cursor = None if newest is None else Cursor(newest)
    session.cache.server.apply_page(Resource.ISSUES, found, cursor)
    return found


async def server_issues(session: SyncSession) -> list[dict[str, Any]]:
    """Every issue on the server now (through the session's client)."""
    found: list[dict[str, Any]] = []
    page = 1
    while True:
        answer = await session.client.list_issues(page=page, per_page=100)
        found.extend(issue.raw for issue in answer.value.data)
        if answer.value.received < 100:
            return found
        page += 1


async def _child(base_url: str, cache_path: Path, bulk_creates: bool) -> None:
    from sync.push import push_outbox

    async with session_for(
        os.environ["TRACKER_API_KEY"], cache_path, server=base_url, window_seconds=1.0
    ) as session:
        await push_outbox(session, bulk_creates=bulk_creates)


if __name__ == "__main__":
    asyncio.run(_child(sys.argv[1], Path(sys.argv[2]), sys.argv[3] == "bulk"))
