"""A real webhook receiver for the tests: a minimal HTTP/1.1 server on a loopback port.

It records every request (checking its signature as it arrives) and answers what a test
scripts, including hanging, so tests see exactly what a receiver would.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from server.webhook_signing import verify

SECRET = "whsec_test"


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: bytes
    arrived: float
    """time.monotonic() when the request was read."""
    signed: bool
    """Whether the signature verified with the receiver's secret at its notion of now."""

    @property
    def event(self) -> dict[str, Any]:
        event: dict[str, Any] = json.loads(self.body)
        return event


Answer = Callable[[Request], Awaitable[int]]


async def always_ok(request: Request) -> int:
    return 200


@dataclass
class Receiver:
    """A minimal HTTP/1.1 server (keep-alive, Content-Length bodies) whose answers tests script.

    ``now`` is the receiver's clock for checking signatures, so a test with a fake dispatcher
    clock can check them too.
    """

    answer: Answer = always_ok
    secret: str = SECRET
    now: Callable[[], float] = time.time
    requests: list[Request] = field(default_factory=list)
    arrivals: asyncio.Condition = field(default_factory=asyncio.Condition)
    handlers: set[asyncio.Task[Any]] = field(default_factory=set)
    port: int = 0

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def wait_for(self, count: int, timeout: float = 10) -> None:
        async with asyncio.timeout(timeout), self.arrivals:
            await self.arrivals.wait_for(lambda: len(self.requests) >= count)

    def events(self, path: str = "/hook") -> list[dict[str, Any]]:
        return [r.event for r in self.requests if r.path == path]

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.handlers.add(task)
        try:
            while request_line := await reader.readline():
                headers: dict[str, str] = {}
                while (line := await reader.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                signature = headers.get("x-tracker-signature", "")
                path = request_line.split()[1].decode()
                request = Request(
                    path,
                    headers,
                    body,
                    time.monotonic(),
                    verify(self.secret, signature, body, self.now()),
                )
                async with self.arrivals:
                    self.requests.append(request)
                    self.arrivals.notify_all()
                status = await self.answer(request)
                writer.write(f"HTTP/1.1 {status} X\r\nContent-Length: 0\r\n\r\n".encode())
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.handlers.discard(task)
            writer.close()


@asynccontextmanager
async def receiving() -> AsyncIterator[Receiver]:
    """A receiver listening on a free loopback port; hung handlers are cancelled at the end."""
    receiver = Receiver()
    server = await asyncio.start_server(receiver.serve, "127.0.0.1", 0)
    receiver.port = server.sockets[0].getsockname()[1]
    async with server:
        yield receiver
        server.close()
        hanging = list(receiver.handlers)
        for handler in hanging:
            handler.cancel()
        await asyncio.gather(*hanging, return_exceptions=True)
