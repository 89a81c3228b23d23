"""Support for the clock-skew tests: a session whose clock is off, transports that count or
lose answers, and variants of the service (a `Retry-After` date only, no idempotency keys)."""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, closing
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path
from typing import Any

import httpx

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import Cache, Resource
from server.auth import authenticate
from server.ratelimit import RateLimiter as ServerLimiter
from sync.push import PushReport, push_outbox
from sync.session import SyncSession, open_session

SKEW = 600.0
WINDOW = 1.0
MARGIN = 0.5
"""The limiter's padding on windows and resets. Its default, a 60th of a window (1 s for a real
minute), is far below the error of whole-second `Date` headers once a window is a second."""
CREATE_LIMIT = 30
"""The published per-endpoint limit on `POST /issues` per window (the test spends it from
elsewhere)."""
STALL = 8.0
"""Seconds after which a push is taken to be waiting on the skewed clock (10 minutes)."""

Scope = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]


@dataclass
class Counted(httpx.AsyncHTTPTransport):
    """The real network, counting what the client sent and how many answers were 429."""

    sent: list[tuple[str, str]] = field(default_factory=list)
    limited: list[tuple[str, str]] = field(default_factory=list)
    remaining: list[str | None] = field(default_factory=list)
    """`X-RateLimit-Remaining` of each create that went through."""
    asked: int = 0
    """Empty-body POSTs to /issues: a lost create's key asked about, which creates nothing."""

    def __post_init__(self) -> None:
        super().__init__()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        self.sent.append((request.method, request.url.path))
        if (request.method, request.url.path, request.content) == ("POST", "/v1/issues", b"{}"):
            self.asked += 1
        if response.status_code == 429:
            self.limited.append((request.method, request.url.path))
        elif (request.method, request.url.path) == ("POST", "/v1/issues"):
            self.remaining.append(response.headers.get("x-ratelimit-remaining"))
        return response

    def creates(self) -> int:
        return self.sent.count(("POST", "/v1/issues")) - self.asked


@dataclass
class LosesCreateAnswers(Counted):
    """A connection that dies after a create reached the service: the answer never arrives."""

    def __post_init__(self) -> None:
        super().__post_init__()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        if (request.method, request.url.path) == ("POST", "/v1/issues"):
            await response.aread()
            await response.aclose()
            raise httpx.ReadTimeout("the answer was lost", request=request)
        return response


@dataclass
class Service:
    base_url: str
    key: str
    folder: Path
    limiter: ServerLimiter
    db: Path

    def spend_creates(self, count: int) -> None:
        """Another client of the same key creates `count` issues this window, as far as the
        service's own counters go (over HTTP they could straddle a 1 s window)."""
        with closing(sqlite3.connect(self.db)) as conn:
            conn.row_factory = sqlite3.Row
            caller = authenticate(conn, f"Bearer {self.key}", int(time.time()))
        for _ in range(count):
            self.limiter.hit(
                key_id=caller.key_id,
                workspace_id=caller.workspace_id,
                plan=caller.plan,
                endpoint="issues.create",
            )


def skewed(seconds: float) -> Callable[[], float]:
    return lambda: time.time() + seconds


def retry_after_as_date(app: Any) -> Any:
    """The service as a server whose only word on when to come back after a 429 is a
    `Retry-After` HTTP date in its own time: no `X-RateLimit-*`, no `retry_after` in the body."""

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        start: dict[str, Any] = {}

        async def rewrite(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] == 429:
                start.update(message)
                return
            if not start:
                await send(message)
                return
            headers = dict(start["headers"])
            retry_at = formatdate(float(headers[b"x-ratelimit-reset"]), usegmt=True)
            body = json.loads(message["body"])
            del body["error"]["retry_after"]
            content = json.dumps(body).encode()
            kept = [(k, v) for k, v in headers.items() if not k.startswith(b"x-ratelimit")]
            kept = [(k, v) for k, v in kept if k not in (b"retry-after", b"content-length")]
            kept += [(b"retry-after", retry_at.encode())]
            kept += [(b"content-length", str(len(content)).encode())]
            await send({**start, "headers": kept})
            await send({"type": "http.response.body", "body": content})

        await app(scope, receive, rewrite)

    return variant


def without_idempotency(app: Any) -> Any:
    """The service as a server with only the published API, which ignores `Idempotency-Key`: a
    resent create would be a second issue, so only finding the first one keeps it single."""

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = [(k, v) for k, v in scope["headers"] if k != b"idempotency-key"]
            scope = {**scope, "headers": headers}
        await app(scope, receive, send)

    return variant


@asynccontextmanager
async def session_with_skew(
    service: Service, seconds: float, transport: httpx.AsyncBaseTransport
) -> AsyncIterator[SyncSession]:
    """A session whose every local time (limiter, request log, outbox) is `seconds` off."""
    clock = skewed(seconds)
    profile = ResolvedProfile(None, service.base_url, None, Secret(service.key), KeySource.ENV)
    with Cache.open(service.folder / "cache.db", clock=clock) as cache:
        async with open_session(
            profile,
            cache=cache,
            transport=transport,
            window_seconds=WINDOW,
            clock=clock,
            margin=MARGIN,
        ) as session:
            yield session


async def early_in_a_window() -> None:
    """Sleep, if need be, until what follows (a few requests) fits in one server window; the
    service's windows start at multiples of `WINDOW` since the epoch."""
    now = time.time()
    left = math.ceil(now / WINDOW) * WINDOW - now
    if left < 0.6 * WINDOW:
        await asyncio.sleep(left + 0.01)


async def push(session: SyncSession, titles: list[str]) -> PushReport:
    """Queue creates and push them one request each, failing if the push stalls."""
    for title in titles:
        session.cache.outbox.create(Resource.ISSUES, {"title": title})
    return await asyncio.wait_for(push_outbox(session, bulk_creates=False), STALL)
