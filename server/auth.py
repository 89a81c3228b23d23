"""API keys, and the one place where every request under `/v1` is authenticated.

`AuthMiddleware` runs before routing, body parsing and validation, so every authenticated
request passes through it whatever happens next (an unknown route, a body that is not JSON, a
body too large), and every failed authentication ends in `AuthMiddleware._refuse`. It records
on `request.state`:

- `auth`: the `AuthContext` of the key;
- `endpoint`: the per-endpoint rate-limit class of the request (`ENDPOINT_CLASSES`) or None.

The rate limiter hooks in at those two places: one call after `authenticate` succeeds (counting
the request and deciding 429 or not, its headers added to every response through a wrapped
`send`), and one in `_refuse` for the per-address limit on failed authentications.
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
from starlette.types import ASGIApp, Receive, Scope, Send

from server.errors import Forbidden, Unauthorized
from server.handlers import error_response
from server.models import Permission
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
"""The SPEC's per-endpoint limits, keyed by method and path below the version prefix."""


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


class AuthMiddleware:
    def __init__(
        self, app: ASGIApp, store: Store, prefix: str, public_paths: Collection[str]
    ) -> None:
        self.app = app
        self.store = store
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
        authorization = Headers(scope=scope).get("authorization")
        try:
            context = await anyio.to_thread.run_sync(self._authenticate, authorization)
        except Unauthorized as error:
            await self._refuse(scope, receive, send, error)
            return
        state = scope.setdefault("state", {})
        state["auth"] = context
        state["endpoint"] = ENDPOINT_CLASSES.get((scope["method"], path[len(self.prefix) :]))
        await self.app(scope, receive, send)

    def _authenticate(self, authorization: str | None) -> AuthContext:
        with self.store.reading() as conn:
            return authenticate(conn, authorization, self.store.now())

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, error: Unauthorized
    ) -> None:
        """Answer a failed authentication; every one of them ends here."""
        await error_response(error)(scope, receive, send)


def require(permission: Permission | None = None) -> Callable[[Request], Awaitable[AuthContext]]:
    """A dependency giving the caller's context, refusing a key without `permission`."""

    async def authorized(request: Request) -> AuthContext:
        context: AuthContext = request.state.auth
        if permission is not None and permission not in context.permissions:
            raise Forbidden(f"This API key lacks the `{permission}` permission.")
        return context

    return authorized
