"""Live updates: a webhook registered with the server and a receiver on a loopback port.

Webhooks are pokes (docs/sync.md#webhooks): a genuine, new delivery only says "something changed",
and the caller (`SyncLoop.wake`) turns any number of them into one debounced pull. Polling stays
as the backstop, since deliveries can be lost or late.

The receiver is a minimal HTTP/1.1 server on asyncio (no web framework: it answers one POST
path), bound to 127.0.0.1 only. It answers at once: 413 for a body over `MAX_BODY` (unread),
401 for a bad or stale signature, 400 for a delivery id that is not the signed event's,
200 for a duplicate delivery (so the sender stops retrying)
without waking anyone, 200 and a wake for a new one.

Registration: the webhook's id and secret are kept in the cache's sync state, so a run that
crashed without deregistering is found on the next start; that registration is reused (its
URL moved to the new port) or, when the server no longer has it, replaced. The secret is
generated here and never logged; it is not the API key. A server without `/webhooks`
(404/405/501) or a key without `webhooks:manage` (403) means no live updates, not an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType

from sync.errors import ApiError, Forbidden, NotFound, SyncError
from sync.session import SyncSession
from sync.webhook_verify import MAX_BODY, DeliveryLog, WebhookRejected, delivery_id, verify

STATE_KEY = "live_webhook"
PATH = "/tracker-webhook"
HOST = "127.0.0.1"
READ_TIMEOUT = 10.0
MAX_HEADERS = 100
ABSENT = frozenset({404, 405, 501})

_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found"}
_REASONS |= {405: "Method Not Allowed", 411: "Length Required", 413: "Payload Too Large"}


@dataclass
class ReceiverStats:
    accepted: int = 0
    duplicates: int = 0
    refused: int = 0


class WebhookReceiver:
    """Verifies deliveries and calls `on_event()` once per new genuine one.

    `secret` may be set after start (registration answers with it). `clock` is the server's
    clock as this process estimates it (`RateLimiter.server_now`), for the age check.
    """

    def __init__(
        self, secret: str, on_event: Callable[[], None], *, clock: Callable[[], float]
    ) -> None:
        self.secret = secret
        self._on_event = on_event
        self._clock = clock
        self._deliveries = DeliveryLog()
        self._server: asyncio.Server | None = None
        self.stats = ReceiverStats()
        self.url = ""

    def __repr__(self) -> str:
        return f"WebhookReceiver(url={self.url!r})"

    async def start(self) -> str:
        """Listen on a free loopback port; returns the URL to register."""
        self._server = await asyncio.start_server(self._handle, HOST, 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://{HOST}:{port}{PATH}"
        return self.url

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            status = await asyncio.wait_for(self._receive(reader), READ_TIMEOUT)
        except (ValueError, UnicodeDecodeError, asyncio.IncompleteReadError, TimeoutError):
            status = 400
        except WebhookRejected as rejected:
            status = rejected.status
        if status >= 400:
            self.stats.refused += 1
        with contextlib.suppress(ConnectionError):
            head = f"HTTP/1.1 {status} {_REASONS.get(status, '')}\r\n"
            writer.write((head + "Content-Length: 0\r\nConnection: close\r\n\r\n").encode())
            await writer.drain()
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()

    async def _receive(self, reader: asyncio.StreamReader) -> int:
        method, path, _ = (await reader.readline()).decode("latin-1").split(" ", 2)
        headers = await _headers(reader)
        if path.split("?", 1)[0] != PATH:
            return 404
        if method != "POST":
            return 405
        length_text = headers.get("content-length")
        if length_text is None:
            return 411
        if not (length_text.isascii() and length_text.isdigit()):
            return 400  # int() would take "-1", "+1" and "1_0"
        if len(length_text) > len(str(MAX_BODY)) or int(length_text) > MAX_BODY:
            raise WebhookRejected(413, "body too large")
        length = int(length_text)
        body = await reader.readexactly(length)
        verify(self.secret, headers.get("x-tracker-signature"), body, self._clock())
        delivery = delivery_id(headers.get("x-tracker-delivery"), body)
        if not self._deliveries.first_time(delivery):
            self.stats.duplicates += 1
            return 200
        self.stats.accepted += 1
        self._on_event()
        return 200


async def _headers(reader: asyncio.StreamReader) -> dict[str, str]:
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS):
        line = (await reader.readline()).decode("latin-1")
        if line in ("\r\n", "\n", ""):
            return headers
        name, colon, value = line.partition(":")
        if not colon:
            raise ValueError("malformed header line")
        headers[name.strip().lower()] = value.strip()
    raise ValueError("too many headers")


class LiveUpdates:
    """`async with LiveUpdates(session, loop.wake) as live:` — `live.active` is False when the
    server offers no webhooks to this key (then polling alone keeps the cache fresh)."""

    def __init__(
        self,
        session: SyncSession,
        on_change: Callable[[], None],
        *,
        events: Sequence[str] = ("*",),
    ) -> None:
        self._session = session
        self._events = list(events)
        self.receiver = WebhookReceiver("", on_change, clock=session.limiter.server_now)
        self.webhook_id: str | None = None
        self.active = False
        self.reason: str | None = None

    async def __aenter__(self) -> LiveUpdates:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def start(self) -> bool:
        url = await self.receiver.start()
        try:
            self.webhook_id, self.receiver.secret = await self._register(url)
        except ApiError as error:
            if not isinstance(error, Forbidden) and error.status not in ABSENT:
                await self.receiver.stop()
                raise
            self.reason = f"no live updates: {error.message}"
            await self.receiver.stop()
            return False
        self.active = True
        return True

    async def _register(self, url: str) -> tuple[str, str]:
        client, cache = self._session.client, self._session.cache
        stored = cache.state.get(STATE_KEY)
        if isinstance(stored, dict):
            old_id, secret = stored.get("id"), stored.get("secret")
            if isinstance(old_id, str) and isinstance(secret, str):
                try:
                    await client.update_webhook(old_id, {"url": url, "secret": secret})
                    return old_id, secret
                except NotFound:
                    cache.state.set(STATE_KEY, None)
        secret = secrets.token_hex(32)
        made = await client.create_webhook(url, self._events, secret=secret)
        cache.state.set(STATE_KEY, {"id": made.value.id, "secret": secret})
        return made.value.id, secret

    async def stop(self) -> None:
        """Deregister and close; a failure to deregister leaves the registration for the next
        start to reuse or replace."""
        await self.receiver.stop()
        if self.webhook_id is None:
            return
        try:
            await self._session.client.delete_webhook(self.webhook_id)
        except NotFound:
            pass
        except SyncError:
            return
        self._session.cache.state.set(STATE_KEY, None)
        self.webhook_id = None
        self.active = False
