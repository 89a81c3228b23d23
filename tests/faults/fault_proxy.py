"""A fault-injecting HTTP/1.1 proxy on loopback, between the client and the reference service.

The client talks to the proxy over a real socket (its own connection pool, keep-alive, timeouts,
httpx's own errors), and the proxy forwards each request to the service by a `plan` that names
one `Fault` per request. It is an asyncio TCP server rather than an ASGI app because the faults
that matter most (a connection dropped before or after the service acted, a body cut short)
cannot be expressed in ASGI, whose server always completes or replaces a response.

It understands just the HTTP the client sends: one request at a time per connection, bodies
with `Content-Length`. Every request is logged as a `Hop`, with the status the service gave it
when it was forwarded, so a test can count what reached the service and how it answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from email.utils import formatdate
from enum import StrEnum
from http import HTTPStatus
from types import TracebackType
from urllib.parse import urlsplit

import httpx


class Fault(StrEnum):
    """What the proxy does to one request. The 5xx and 429s are answered by the proxy itself,
    as a gateway or a front rate limiter would: the service never sees those requests."""

    PASS = "pass"
    DROP_BEFORE = "drop_before"
    """Read the request, then close the connection without forwarding it."""
    DROP_AFTER = "drop_after"
    """Forward it (the service acts), then close the connection without an answer."""
    DELAY = "delay"
    """Forward it, then hold the answer past the client's timeout and close."""
    STATUS_500 = "500"
    STATUS_502 = "502"
    STATUS_503 = "503"
    LIMITED_RETRY_AFTER = "429_retry_after"
    """429 with `Retry-After` and `X-RateLimit-*` (remaining 0), as the reference service sends
    (docs/api.md#retry-after-header)."""
    LIMITED_RATE_HEADERS = "429_rate_headers"
    """429 with `X-RateLimit-*` (remaining 0) but no `Retry-After`."""
    LIMITED_BARE = "429_bare"
    """429 with no header about limits at all."""
    TRUNCATED = "truncated"
    """Forward it; answer with the full `Content-Length` but half the body, then close."""
    MALFORMED = "malformed"
    """Forward it; answer with the service's status and a body that is not JSON."""


FAULTS: tuple[Fault, ...] = tuple(kind for kind in Fault if kind is not Fault.PASS)
FORWARDED = frozenset({Fault.PASS, Fault.DROP_AFTER, Fault.DELAY, Fault.TRUNCATED, Fault.MALFORMED})
"""Faults after which the service has handled the request."""
RATE_LIMITED = frozenset(
    {Fault.LIMITED_RETRY_AFTER, Fault.LIMITED_RATE_HEADERS, Fault.LIMITED_BARE}
)
STATUS_OF = {Fault.STATUS_500: 500, Fault.STATUS_502: 502, Fault.STATUS_503: 503}
_NOT_COPIED = frozenset(
    {
        "host",
        "connection",
        "keep-alive",
        "content-length",
        "transfer-encoding",
        "accept-encoding",
        "content-encoding",
    }
)
"""Headers of one hop only, or about an encoding: the proxy asks the service for plain bodies
(so it can cut or garble them) and frames every answer itself with `Content-Length`."""


@dataclass(frozen=True)
class Request:
    """What a plan sees of a request: its number (from 0), method and path with query."""

    index: int
    method: str
    target: str

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]


Plan = Callable[[Request], Fault]


def pass_all(request: Request) -> Fault:
    """The plan of a proxy that only forwards."""
    del request
    return Fault.PASS


@dataclass
class SeededPlan:
    """Each request gets a fault with probability `rate`, its kind drawn from `kinds`; the
    same seed and the same request order give the same faults. `enabled` False passes all."""

    seed: int
    rate: float
    kinds: Sequence[Fault] = FAULTS
    enabled: bool = True
    _rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def __call__(self, request: Request) -> Fault:
        if not self.enabled or self._rng.random() >= self.rate:
            return Fault.PASS
        return self._rng.choice(list(self.kinds))


@dataclass
class Scripted:
    """`fault` for the first `times` requests matching `method` and a path ending in
    `suffix`; every other request passes."""

    fault: Fault
    method: str
    suffix: str
    times: int = 1

    def __call__(self, request: Request) -> Fault:
        if self.times > 0 and request.method == self.method and request.path.endswith(self.suffix):
            self.times -= 1
            return self.fault
        return Fault.PASS


def first_of(*plans: Plan) -> Plan:
    """A plan asking each of `plans` in turn: the first fault named wins."""

    def plan(request: Request) -> Fault:
        for each in plans:
            fault = each(request)
            if fault is not Fault.PASS:
                return fault
        return Fault.PASS

    return plan


@dataclass(frozen=True)
class Hop:
    """One request through the proxy; `status` is the service's answer (None: not forwarded,
    or the service's answer never came)."""

    request: Request
    fault: Fault
    arrived: float
    status: int | None


class FaultProxy:
    """`async with FaultProxy(upstream, plan) as proxy:` then point the client at
    `proxy.base_url`. `delay` is how long `Fault.DELAY` holds an answer (make it longer than
    the client's timeout); `retry_after` the seconds an injected 429 asks for, `limit` the
    `X-RateLimit-Limit` it shows (the key's real one, so the client learns nothing false)."""

    def __init__(
        self,
        upstream: str,
        plan: Plan,
        *,
        delay: float = 1.0,
        retry_after: int = 1,
        limit: int = 300,
    ) -> None:
        parts = urlsplit(upstream)
        self._origin = f"{parts.scheme}://{parts.netloc}"
        self._prefix = parts.path.rstrip("/")
        self.plan = plan
        self.delay = delay
        self.retry_after = retry_after
        self.limit = limit
        self.hops: list[Hop] = []
        self._received = 0
        self.base_url = ""
        self._server: asyncio.Server | None = None
        self._upstream: httpx.AsyncClient | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._closing = asyncio.Event()

    async def __aenter__(self) -> FaultProxy:
        self._upstream = httpx.AsyncClient(base_url=self._origin, timeout=30.0)
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        host, port = self._server.sockets[0].getsockname()[:2]
        self.base_url = f"http://{host}:{port}{self._prefix}"
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.close()
        self._closing.set()
        for writer in self._writers:
            writer.close()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
        if self._upstream is not None:
            await self._upstream.aclose()

    # --- what a test asks ----------------------------------------------------------------

    def count(self, faults: Iterable[Fault]) -> int:
        wanted = set(faults)
        return sum(1 for hop in self.hops if hop.fault in wanted)

    def upstream_statuses(self) -> list[int]:
        """The service's own answers to every request it handled."""
        return [hop.status for hop in self.hops if hop.status is not None]

    # --- serving -------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, httpx.HTTPError):
            pass
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Handle one request; False when the connection is to be closed."""
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = [tuple(line.split(":", 1)) for line in lines[1:] if ":" in line]
        fields = [(name.strip(), value.strip()) for name, value in headers]
        length = next((int(v) for n, v in fields if n.lower() == "content-length"), 0)
        body = await reader.readexactly(length) if length else b""
        request = Request(self._received, method, target)
        self._received += 1
        fault = self.plan(request)
        arrived = time.monotonic()
        if fault is Fault.DROP_BEFORE:
            self.hops.append(Hop(request, fault, arrived, None))
            return False
        if fault in STATUS_OF or fault in RATE_LIMITED:
            self.hops.append(Hop(request, fault, arrived, None))
            writer.write(self._injected(fault))
            await writer.drain()
            return True
        answer = await self._forward(method, target, fields, body)
        self.hops.append(Hop(request, fault, arrived, answer.status_code))
        if fault is Fault.DROP_AFTER:
            return False
        if fault is Fault.DELAY:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self.delay)
            return False
        content = answer.content
        if fault is Fault.MALFORMED:
            content = b'{"data": [{"id": "iss_'
        if fault is Fault.TRUNCATED:
            whole = _response(answer.status_code, answer.headers.multi_items(), content)
            writer.write(whole[: len(whole) - max(1, len(content) // 2)])
            await writer.drain()
            return False
        writer.write(_response(answer.status_code, answer.headers.multi_items(), content))
        await writer.drain()
        return True

    async def _forward(
        self, method: str, target: str, fields: list[tuple[str, str]], body: bytes
    ) -> httpx.Response:
        assert self._upstream is not None
        headers = [(n, v) for n, v in fields if n.lower() not in _NOT_COPIED]
        return await self._upstream.request(method, target, headers=headers, content=body)

    def _injected(self, fault: Fault) -> bytes:
        now = time.time()
        headers = [("Date", formatdate(now, usegmt=True)), ("Content-Type", "application/json")]
        status = STATUS_OF.get(fault, 429)
        if fault in (Fault.LIMITED_RETRY_AFTER, Fault.LIMITED_RATE_HEADERS):
            headers += [
                ("X-RateLimit-Limit", str(self.limit)),
                ("X-RateLimit-Remaining", "0"),
                ("X-RateLimit-Reset", str(int(now) + self.retry_after)),
            ]
        if fault is Fault.LIMITED_RETRY_AFTER:
            headers.append(("Retry-After", str(self.retry_after)))
        code = "rate_limit_exceeded" if status == 429 else "bad_gateway"
        body = {"error": {"code": code, "message": f"injected {fault.value}"}}
        return _response(status, headers, json.dumps(body).encode())


def _response(status: int, headers: Iterable[tuple[str, str]], content: bytes) -> bytes:
    reason = HTTPStatus(status).phrase
    kept = [(n, v) for n, v in headers if n.lower() not in _NOT_COPIED]
    kept.append(("Content-Length", str(len(content))))
    head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{n}: {v}\r\n" for n, v in kept)
    return head.encode("latin-1") + b"\r\n" + content
