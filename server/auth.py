"""API keys, and the one place where every request under `/v1` is authenticated.

`AuthMiddleware` runs before routing, body parsing and validation, so every authenticated
request passes through it whatever happens next (an unknown route, a body that is not JSON, a
body too large), and every failed authentication ends in `AuthMiddleware._refuse`. It records
on `request.state`:

- `auth`: the `AuthContext` of the key;
- `endpoint`: the per-endpoint rate-limit class of the request (`ENDPOINT_CLASSES`) or None.

The rate limiter (`server.ratelimit`) hooks in there, in one worker-thread call per request
(`_admit`): an address that failed authentication too often is refused first (429, whatever
key it sends); then the key is authenticated, a failure counted against the address; then the
request is counted against every limit of its key, so it counts whatever its outcome later (a
404, a 413, a 400), and a refusal (429) is not counted. The `X-RateLimit-*` headers of that
decision are added to every response of an authenticated request through a wrapped `send`,
unexpected failures (500) included.
Permissions are checked per route by the `require` dependency, once the route is known.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import sqlite3
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Literal

import anyio.to_thread
from fastapi import Request
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.errors import Forbidden, RateLimitExceeded, ServiceError, Unauthorized
from server.handlers import error_response, internal_error_response
from server.models import Permission
from server.ratelimit import RateDecision, RateLimiter
from server.store import Store

KEY_PREFIX = "trk_"
_KEY = re.compile(r"trk_[A-Za-z0-9_-]{40}")
_BEARER = re.compile(r"bearer +(\S+)", re.IGNORECASE)

EndpointClass = Literal["issues.create", "comments.create", "search", "bulk"]
ENDPOINT_CLASSES: dict[tuple[str, str], EndpointClass] = {
    ("POST", "/issues"): "issues.create",
    ("POST", "/comments"): "comments.create",
    ("GET", "/search"): "search",
    ("POST", "/issues/bulk"): "bulk",
}
"""The published per-endpoint limits (docs/api.md#plans-and-their-limits), keyed by method and path
below the version prefix."""


def generate_key() -> str:
    """`trk_` and 40 url-safe random characters (30 random bytes)."""
    return KEY_PREFIX + secrets.token_urlsafe(30)


def hash_key(key: str) -> str:
    """Keys are stored only as this digest; the value itself is shown once, at creation."""
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class AuthContext:
    """Who is calling: the key, its user and workspace, the plan and what the key may do."""

    key_id: str
    user_id: str
    workspace_id: str
    plan: str
    permissions: frozenset[str]


def _unauthorized(message: str) -> Unauthorized:
    return Unauthorized(message, headers={"WWW-Authenticate": "Bearer"})


def authenticate(conn: sqlite3.Connection, authorization: str | None, now: int) -> AuthContext:
    """The context of the key in an `Authorization` header, or `Unauthorized`."""
    if not authorization:
        raise _unauthorized("Missing API key: send `Authorization: Bearer <key>`.")
    match = _BEARER.fullmatch(authorization.strip())
    if match is None or _KEY.fullmatch(match.group(1)) is None:
        raise _unauthorized("Invalid API key.")
    row = conn.execute(
        """
        SELECT k.id, k.user_id, k.workspace_id, k.permissions, k.expires_at, k.revoked_at, w.plan
        FROM api_keys AS k JOIN workspaces AS w ON w.id = k.workspace_id
        WHERE k.key_hash = ?
        """,
        (hash_key(match.group(1)),),
    ).fetchone()
    if row is None:
        raise _unauthorized("Invalid API key.")
    if row["revoked_at"] is not None:
        raise _unauthorized("This API key has been revoked.")
    if row["expires_at"] is not None and row["expires_at"] <= now:
        raise _unauthorized("This API key has expired.")
    return AuthContext(
        key_id=row["id"],
        user_id=row["user_id"],
        workspace_id=row["workspace_id"],
        plan=row["plan"],
        permissions=frozenset(json.loads(row["permissions"])),
    )


@dataclass(frozen=True)
class _Admission:
    """What `_admit` decided: answer `refusal`, or go on with `context`; `headers` either way."""

    context: AuthContext | None
    refusal: ServiceError | None
    headers: dict[str, str]


def _refused(decision: RateDecision) -> ServiceError:
    assert decision.retry_after is not None
    return RateLimitExceeded(decision.retry_after)


class AuthMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        store: Store,
        limiter: RateLimiter,
        prefix: str,
        public_paths: Collection[str],
    ) -> None:
        self.app = app
        self.store = store
        self.limiter = limiter
        self.prefix = prefix
        self.public_paths = frozenset(public_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if (
            scope["type"] != "http"
            or not path.startswith(self.prefix + "/")
            or path in self.public_paths
        ):
            await self.app(scope, receive, send)
            return
        endpoint = ENDPOINT_CLASSES.get((scope["method"], path[len(self.prefix) :]))
        authorization = Headers(scope=scope).get("authorization")
        client = scope.get("client")
        address = client[0] if client else "unknown"
        admission = await anyio.to_thread.run_sync(self._admit, authorization, address, endpoint)
        if admission.refusal is not None:
            await self._refuse(scope, receive, send, admission.refusal, admission.headers)
            return
        assert admission.context is not None
        state = scope.setdefault("state", {})
        state["auth"] = admission.context
        state["endpoint"] = endpoint
        await self._call_with_headers(scope, receive, send, admission.headers)

    def _admit(self, authorization: str | None, address: str, endpoint: str | None) -> _Admission:
        """Block check, authentication and counting, in one trip to a worker thread."""
        block = self.limiter.auth_failure_block(address)
        if block is not None:
            return _Admission(None, _refused(block), block.headers())
        try:
            with self.store.reading() as conn:
                context = authenticate(conn, authorization, self.store.now())
        except Unauthorized as error:
            self.limiter.record_auth_failure(address)
            return _Admission(None, error, {})
        decision = self.limiter.hit(
            key_id=context.key_id,
            workspace_id=context.workspace_id,
            plan=context.plan,
            endpoint=endpoint,
        )
        refusal = None if decision.allowed else _refused(decision)
        return _Admission(context, refusal, decision.headers())

    async def _call_with_headers(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        """Run the app, adding `headers` to whatever it answers, a crash's 500 included."""
        encoded = [(name.lower().encode(), value.encode()) for name, value in headers.items()]
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": [*message.get("headers", []), *encoded]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            if not started:
                await internal_error_response()(scope, receive, send_with_headers)
            raise

    async def _refuse(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        error: ServiceError,
        headers: dict[str, str],
    ) -> None:
        """Answer a failed authentication (401) or a rate limit (429); every refusal ends here."""
        response = error_response(error)
        response.headers.update(headers)
        await response(scope, receive, send)


def require(permission: Permission | None = None) -> Callable[[Request], Awaitable[AuthContext]]:
    """A dependency giving the caller's context, refusing a key without `permission`."""

    async def authorized(request: Request) -> AuthContext:
        context: AuthContext = request.state.auth
        if permission is not None and permission not in context.permissions:
            raise Forbidden(f"This API key lacks the `{permission}` permission.")
        return context

    return authorized
