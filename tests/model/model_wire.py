"""A client's wire in the model test: the service in-process, with faults and kills on cue.

Each push or pull step of the model hands the wire a script: the fault of each request in turn
(`Fault.PASS` for none), and optionally the request at which the process dies, before the
service sees it or after it acted. A kill raises `Killed`, which no code of the client catches
(it is not an `Exception`), so it unwinds the step as a SIGKILL would end the process: what the
cache committed stays, nothing else happens; the model then cancels what was still running and
reopens the client from its files.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from email.utils import formatdate
from enum import StrEnum
from typing import Any

import httpx
from model_service import VirtualClock

LATENCY = 0.004
"""Virtual seconds each request takes: the service's stamps and the limiters' logs move on."""


class Killed(BaseException):
    """The client's process died (a SIGKILL): not an `Exception`, so nothing catches it."""


class Fault(StrEnum):
    PASS = "pass"
    REFUSED = "refused"
    """The connection could not be made: the request surely never left."""
    DROP_BEFORE = "drop_before"
    """Sent, then the connection closed before the service saw it: the client cannot tell."""
    DROP_AFTER = "drop_after"
    """The service acted; its answer was lost."""
    STATUS_500 = "500"
    """A gateway's 500: the service never saw the request."""
    LIMITED = "429"
    """A front limiter's 429 with `Retry-After` and `X-RateLimit-*`."""
    LIMITED_HEADERS = "429_headers"
    """429 with `X-RateLimit-*` but no `Retry-After`."""
    LIMITED_BARE = "429_bare"
    """429 with no header about limits."""


FAULTS = tuple(Fault)
FABRICATED = frozenset({Fault.STATUS_500, Fault.LIMITED, Fault.LIMITED_HEADERS, Fault.LIMITED_BARE})


@dataclass(frozen=True)
class Kill:
    """Die at the `at`-th request of the step (from 0): before it leaves, or once the service
    has acted on it."""

    at: int
    after: bool


@dataclass
class FaultWire(httpx.AsyncBaseTransport):
    app: Any
    clock: VirtualClock
    limit: int
    """The key's real minute limit, shown by fabricated 429s (nothing false is learned)."""
    script: list[Fault] = field(default_factory=list)
    kill: Kill | None = None
    requests: int = 0
    """Requests of the current step."""
    dead: bool = False
    fabricated: Counter[Fault] = field(default_factory=Counter)
    log: list[tuple[str, str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._inner = httpx.ASGITransport(app=self.app)
        self.serving: set[asyncio.Task[httpx.Response]] = set()
        """Requests the service is handling: a kill does not stop them (the service runs in
        the client's task here, but on its own machine it would finish what it received)."""

    def arm(self, script: list[Fault], kill: Kill | None) -> None:
        self.script, self.kill, self.requests = list(script), kill, 0

    def disarm(self) -> None:
        self.script, self.kill = [], None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.dead:
            raise Killed
        index, self.requests = self.requests, self.requests + 1
        self.clock.advance(LATENCY)
        fault = self.script.pop(0) if self.script else Fault.PASS
        kill = self.kill is not None and self.kill.at == index
        self.log.append((request.method, request.url.path, "kill" if kill else fault.value))
        if kill and self.kill is not None and not self.kill.after:
            self.dead = True
            raise Killed
        if fault is Fault.REFUSED:
            raise httpx.ConnectError("connection refused", request=request)
        if fault is Fault.DROP_BEFORE:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        if fault in FABRICATED:
            self.fabricated[fault] += 1
            return self._fabricated(fault)
        serving = asyncio.ensure_future(self._inner.handle_async_request(request))
        self.serving.add(serving)
        serving.add_done_callback(self.serving.discard)
        response = await asyncio.shield(serving)
        if kill or fault is Fault.DROP_AFTER:
            await response.aread()
            await response.aclose()
            if kill:
                self.dead = True
                raise Killed
            raise httpx.ReadTimeout("the answer was lost", request=request)
        return response

    def _fabricated(self, fault: Fault) -> httpx.Response:
        now = self.clock.time()
        headers = {"Date": formatdate(now, usegmt=True), "Content-Type": "application/json"}
        status = 500 if fault is Fault.STATUS_500 else 429
        if fault in (Fault.LIMITED, Fault.LIMITED_HEADERS):
            headers["X-RateLimit-Limit"] = str(self.limit)
            headers["X-RateLimit-Remaining"] = "0"
            headers["X-RateLimit-Reset"] = str(int(now) + 2)
        if fault is Fault.LIMITED:
            headers["Retry-After"] = "1"
        code = "rate_limit_exceeded" if status == 429 else "internal_error"
        body = json.dumps({"error": {"code": code, "message": f"injected {fault.value}"}})
        return httpx.Response(status, headers=headers, content=body.encode())
