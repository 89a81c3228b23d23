"""Helpers for the pull tests (named test_* only to fit the test folders' file pattern; it holds
no tests): the reference service in-process, server variants as tiny ASGI wrappers around it,
and sessions over them.

Variants are real servers with one behaviour changed at the HTTP edge, never mocks: the
service's own SQLite database answers every request.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

import httpx

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import Cache, Resource
from cache.resources import SPECS
from server.app import create_app
from server.seed import seed_workspace
from sync.retry import Backoff
from sync.session import SyncSession, open_session

BASE = "http://service.test/v1"
FAST_RETRY = Backoff(tries=3, base=0.001)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass
class Service:
    """The reference service over `db`, the key of its seeded workspace, and the app to call
    (the plain service, or a variant wrapping it)."""

    app: Any
    asgi: App
    key: str
    db: Path

    def transport(self) -> httpx.ASGITransport:
        return httpx.ASGITransport(self.asgi)

    def api(self) -> httpx.AsyncClient:
        """A plain client of the unwrapped service, to change data behind the puller's back."""
        return httpx.AsyncClient(
            transport=httpx.ASGITransport(self.app),
            base_url=BASE,
            headers={"Authorization": f"Bearer {self.key}"},
        )

    def sql(self, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.db) as conn:
            rows = conn.execute(statement, params).fetchall()
        return rows


@asynccontextmanager
async def served(
    tmp_path: Path,
    issues: int,
    *,
    wrap: Callable[[App], App] | None = None,
    plan: str = "enterprise",
    window_seconds: float = 60,
) -> AsyncIterator[Service]:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "Acme", issues, plan=plan)
    app = create_app(db, window_seconds=window_seconds)
    async with app.router.lifespan_context(app):
        yield Service(app, wrap(app) if wrap else app, key, db)


def resolved(key: str) -> ResolvedProfile:
    return ResolvedProfile(
        name="test", server=BASE, workspace=None, key=Secret(key), key_source=KeySource.ENV
    )


@asynccontextmanager
async def session_on(
    service: Service,
    cache: Cache,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    window_seconds: float = 60,
) -> AsyncIterator[SyncSession]:
    async with open_session(
        resolved(service.key),
        cache=cache,
        transport=transport or service.transport(),
        window_seconds=window_seconds,
    ) as session:
        yield session


async def server_issues(service: Service) -> dict[str, str]:
    """Every live issue on the server: id -> updated_at."""
    found: dict[str, str] = {}
    async with service.api() as api:
        page = 1
        while True:
            body = (await api.get("/issues", params={"page": page, "per_page": 100})).json()
            found.update({item["id"]: item["updated_at"] for item in body["data"]})
            if len(body["data"]) < 100:
                return found
            page += 1


def local_issues(cache: Cache) -> dict[str, str]:
    """Every issue in the cache's server copy: id -> updated_at, as the server wrote it."""
    found: dict[str, str] = {}
    spec = SPECS[Resource.ISSUES]
    for row in sqlite3.connect(cache.path).execute(f"SELECT {spec.record_columns} FROM issues"):
        record = spec.record_of(row)
        found[str(record["id"])] = str(record["updated_at"])
    return found


# --- server variants -------------------------------------------------------------------------


def query_of(scope: Scope) -> dict[str, list[str]]:
    return parse_qs(scope.get("query_string", b"").decode())


def with_query(scope: Scope, query: dict[str, list[str]]) -> Scope:
    return {**scope, "query_string": urlencode(query, doseq=True).encode()}


def refusing_tombstones(app: App) -> App:
    """A server without tombstones: 400 to `include_deleted`, as the published API allows
    (docs/api.md#tombstones)."""

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and "include_deleted" in query_of(scope):
            body = b'{"error": {"code": "invalid_request", "message": "unknown include_deleted"}}'
            await send(
                {
                    "type": "http.response.start",
                    "status": 400,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return variant


def rewriting_bodies(app: App, rewrite: Callable[[Scope, bytes], bytes]) -> App:
    """A variant whose response bodies pass through `rewrite` (content-length fixed up)."""

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        start: Message = {}
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                body = rewrite(scope, b"".join(chunks))
                headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
                headers.append((b"content-length", str(len(body)).encode()))
                await send({**start, "headers": headers})
                await send({"type": "http.response.body", "body": body})

        await app(scope, receive, capture)

    return variant


_FRACTION = re.compile(rb'("(?:updated_at|created_at)":\s*"[0-9T:-]+)\.\d+Z"')


def whole_seconds(app: App) -> App:
    """A server whose timestamps have whole seconds only (fractions cut from every body)."""
    return rewriting_bodies(app, lambda _scope, body: _FRACTION.sub(rb'\1Z"', body))


def ignoring_updated_after(app: App) -> App:
    """A server with only the published API that accepts `updated_after` and `include_deleted` but
    ignores both: lists come in creation order, so nothing can page by cursor."""

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            query = query_of(scope)
            query.pop("updated_after", None)
            query.pop("include_deleted", None)
            scope = with_query(scope, query)
        await app(scope, receive, send)

    return variant


def on_list_page(app: App, path: str, hook: Callable[[int], Awaitable[None]]) -> App:
    """Calls `hook(n)` after serving the n-th list request on `path` (1-based): data changes
    between the pages a puller reads."""
    served_count = 0

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        nonlocal served_count
        await app(scope, receive, send)
        if scope["type"] == "http" and scope["path"].endswith(path) and scope["method"] == "GET":
            served_count += 1
            await hook(served_count)

    return variant


class FailingTransport(httpx.AsyncBaseTransport):
    """The network dropping for good after `allowed` list requests on `path`."""

    def __init__(self, inner: httpx.AsyncBaseTransport, path: str, allowed: int) -> None:
        self.inner = inner
        self.path = path
        self.allowed = allowed
        self.seen = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and request.url.path.endswith(self.path):
            self.seen += 1
            if self.seen > self.allowed:
                raise httpx.ReadError("connection reset by peer")
        return await self.inner.handle_async_request(request)
