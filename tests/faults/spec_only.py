"""The reference service as a server with only the published API (docs/api.md#guaranteed), for the
loopback fault tests.

As far as a client can tell: no `/me` (the service answers it as any unknown path, 404 with its
rate-limit headers), no bulk endpoint (404), no tombstones (400 to `include_deleted`), and
`Idempotency-Key` ignored. Every other request is the service's own, over its own database.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

ME_PATH = "/v1/me"
BULK_PATH = "/v1/issues/bulk"


def spec_only(app: Any) -> Any:
    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        path, query = scope["path"], scope.get("query_string", b"")
        if path == BULK_PATH:
            await _refuse(send, 404, "not_found", "Not found.")
            return
        if b"include_deleted" in query:
            await _refuse(send, 400, "invalid_request", "unknown parameter include_deleted")
            return
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"idempotency-key"]
        scope = {**scope, "headers": headers}
        if path == ME_PATH:
            scope = {**scope, "path": ME_PATH + "-not-served", "raw_path": b"/v1/me-not-served"}
        await app(scope, receive, send)

    return variant


async def _refuse(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
