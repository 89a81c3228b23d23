"""`Idempotency-Key` on POST: the first successful answer is replayed for 24 hours.

A retry with the same key and the same body (byte for byte, to the same path) gets the stored
answer again, with `Idempotency-Replayed: true`, and changes nothing; the same key with another
body is 400 `idempotency_key_reused`. Keys belong to the API key that sent them. Only 2xx
answers are stored: a refused request changed nothing, so a corrected retry may use its key.

Requests with the same key are serialized in this process, so a retry racing the original waits
for it and then replays it instead of writing twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import weakref
from datetime import timedelta

import anyio.to_thread
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.auth import AuthContext
from server.errors import IdempotencyKeyReused, InvalidRequest
from server.handlers import error_response
from server.store import Store

HEADER = "idempotency-key"
MAX_KEY_LENGTH = 255
LIFETIME_MICROS = timedelta(hours=24) // timedelta(microseconds=1)

Stored = tuple[str, int, list[list[str]], bytes]
"""Fingerprint, status, headers, body of a stored answer."""


class IdempotencyMiddleware:
    def __init__(self, app: ASGIApp, store: Store) -> None:
        self.app = app
        self.store = store
        self._locks: weakref.WeakValueDictionary[tuple[str, str], asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = Headers(scope=scope).get(HEADER) if scope["type"] == "http" else None
        auth: AuthContext | None = scope.get("state", {}).get("auth")
        if key is None or auth is None or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        if not 1 <= len(key) <= MAX_KEY_LENGTH:
            error = InvalidRequest.for_field("Idempotency-Key", "must be 1 to 255 characters")
            await error_response(error)(scope, receive, send)
            return

        body = await _read_body(receive)
        fingerprint = hashlib.sha256(scope["path"].encode() + b"\n" + body).hexdigest()
        lock = self._locks.get((auth.key_id, key))
        if lock is None:
            lock = self._locks[(auth.key_id, key)] = asyncio.Lock()
        async with lock:
            stored = await anyio.to_thread.run_sync(self._lookup, auth.key_id, key)
            if stored is not None:
                await self._replay(stored, fingerprint, scope, receive, send)
                return
            status, headers, content = await self._forward(scope, body, receive, send)
            if 200 <= status < 300:
                await anyio.to_thread.run_sync(
                    self._save, auth.key_id, key, (fingerprint, status, headers, content)
                )

    async def _replay(
        self, stored: Stored, fingerprint: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        first_fingerprint, status, headers, content = stored
        if first_fingerprint != fingerprint:
            error = IdempotencyKeyReused(
                "This Idempotency-Key was already used with another request body."
            )
            await error_response(error)(scope, receive, send)
            return
        raw = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers]
        raw.append((b"idempotency-replayed", b"true"))
        await send({"type": "http.response.start", "status": status, "headers": raw})
        await send({"type": "http.response.body", "body": content})

    async def _forward(
        self, scope: Scope, body: bytes, receive: Receive, send: Send
    ) -> tuple[int, list[list[str]], bytes]:
        """Run the request with its buffered body, passing the answer on and keeping a copy."""
        status = 0
        headers: list[list[str]] = []
        chunks: list[bytes] = []
        delivered = False

        async def replay_receive() -> Message:
            nonlocal delivered
            if delivered:
                return await receive()
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def copying_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers.extend(
                    [name.decode("latin-1"), value.decode("latin-1")]
                    for name, value in message.get("headers", [])
                )
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            await send(message)

        await self.app(scope, replay_receive, copying_send)
        return status, headers, b"".join(chunks)

    def _lookup(self, key_id: str, key: str) -> Stored | None:
        with self.store.reading() as conn:
            row = conn.execute(
                "SELECT fingerprint, status, headers, body FROM idempotency_keys "
                "WHERE key_id = ? AND idempotency_key = ? AND created_at > ?",
                (key_id, key, self.store.now() - LIFETIME_MICROS),
            ).fetchone()
        if row is None:
            return None
        return row["fingerprint"], row["status"], json.loads(row["headers"]), row["body"]

    def _save(self, key_id: str, key: str, stored: Stored) -> None:
        fingerprint, status, headers, content = stored
        now = self.store.now()
        with self.store.db.writing() as conn:
            conn.execute(
                "DELETE FROM idempotency_keys WHERE created_at <= ?", (now - LIFETIME_MICROS,)
            )
            conn.execute(
                "INSERT OR REPLACE INTO idempotency_keys (key_id, idempotency_key, fingerprint, "
                "status, headers, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key_id, key, fingerprint, status, json.dumps(headers), content, now),
            )


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)
