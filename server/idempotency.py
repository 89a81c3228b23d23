"""`Idempotency-Key` on POST: the first successful answer is replayed for 24 hours.

A retry with the same key and the same body (byte for byte, to the same path) gets the stored
answer again, with `Idempotency-Replayed: true`, and changes nothing; the same key with another
body is 400 `idempotency_key_reused`. Keys belong to the API key that sent them. Only 2xx
answers are stored: a refused request changed nothing, so a corrected retry may use its key.

The answer is stored by the route, in the transaction of the write it answers (`keep_answer`),
before anything is sent: a write is never committed without its answer, so a retry after a lost
connection or a crash between the commit and the answer replays it instead of writing twice.
The middleware hands the route the key through a context variable, which follows the request
into the thread pool.

Requests with the same key are serialized in this process, so a retry racing the original waits
for it and then replays it instead of writing twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import weakref
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta

import anyio.to_thread
from starlette.datastructures import Headers
from starlette.responses import Response
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


@dataclass
class _KeyedRequest:
    """A keyed POST in flight, as `keep_answer` stores its answer: the API key that sent it,
    its `Idempotency-Key`, its fingerprint, and when it arrived (from which the key's 24
    hours count)."""

    key_id: str
    key: str
    fingerprint: str
    received_at: int


_current: ContextVar[_KeyedRequest | None] = ContextVar("idempotency_request", default=None)


def keep_answer(conn: sqlite3.Connection, answer: Response) -> None:
    """Store `answer` under the current request's key, in the write transaction open on `conn`.

    Does nothing for a request sent without a key. Call it last in the transaction, with the
    answer the route returns: committed together, the write and its answer can't be parted.
    """
    request = _current.get()
    if request is None:
        return
    now = request.received_at
    conn.execute("DELETE FROM idempotency_keys WHERE created_at <= ?", (now - LIFETIME_MICROS,))
    headers = [
        [name.decode("latin-1"), value.decode("latin-1")] for name, value in answer.raw_headers
    ]
    conn.execute(
        "INSERT OR REPLACE INTO idempotency_keys (key_id, idempotency_key, fingerprint, "
        "status, headers, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            request.key_id,
            request.key,
            request.fingerprint,
            answer.status_code,
            json.dumps(headers),
            bytes(answer.body),
            now,
        ),
    )


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
            request = _KeyedRequest(auth.key_id, key, fingerprint, self.store.now())
            token = _current.set(request)
            try:
                await self._forward(scope, body, receive, send)
            finally:
                _current.reset(token)

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

    async def _forward(self, scope: Scope, body: bytes, receive: Receive, send: Send) -> None:
        """Run the request with its buffered body (read to compute the fingerprint)."""
        delivered = False

        async def replay_receive() -> Message:
            nonlocal delivered
            if delivered:
                return await receive()
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay_receive, send)

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
