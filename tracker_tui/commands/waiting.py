"""What a command that talks to the server is waiting for, said, and bounded.

With writes pending and the server down, `sync` used to print nothing for 46 s (five push
rounds, each retrying its reads) and exit 0. Here every wait of a command's sync work goes
through one `Waits`: a retry after a failure says why and for how long on a terminal, and
once the server has been failing for `give_up_after` seconds the work is cancelled (the
outbox is built to be interrupted at any point: an unsent write stays queued, one whose
answer was lost is looked for before it is sent again). A wait for the rate limit is said
too, but never cut short: it ends by itself.

`Watch` sits in front of the HTTP transport and notes what the server last did (answered,
refused the key, failed, could not be reached), so the exit status rests on what happened
rather than on the words of a report.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

T = TypeVar("T")

GIVE_UP_AFTER = 20.0
"""Seconds of failing server after which a command stops retrying and says so."""
SAID_FROM = 1.0
"""Waits shorter than this are not worth a line."""


class Watch(httpx.AsyncBaseTransport):
    """The network transport, noting how the server answers."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self._inner = inner or httpx.AsyncHTTPTransport()
        self.refused: int | None = None
        """401 or 403 once the server refused the key, else None."""
        self.failure: str | None = None
        """Why the last request got no usable answer; None after one that got an answer."""
        self.failing_since: float | None = None
        """When the current run of failures began (monotonic clock)."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = await self._inner.handle_async_request(request)
        except httpx.TransportError as error:
            self._failed(f"cannot reach the server ({type(error).__name__})")
            raise
        status = response.status_code
        if status in (401, 403):
            self.refused = status
        if status >= 500:
            self._failed(f"the server is failing ({status})")
        else:
            self.failure, self.failing_since = None, None
        return response

    def _failed(self, why: str) -> None:
        self.failure = why
        if self.failing_since is None:
            self.failing_since = time.monotonic()

    async def aclose(self) -> None:
        await self._inner.aclose()


class Waits:
    """The sleeps of one command's sync work: `retry` for the push's `Backoff` and the pull's
    `RetryPolicy`, `rate_limit` for the limiter. `say` shows a line (on a terminal)."""

    def __init__(
        self, watch: Watch, say: Callable[[str], None], *, give_up_after: float = GIVE_UP_AFTER
    ) -> None:
        self.watch = watch
        self._say = say
        self.give_up_after = give_up_after
        self.gave_up: str | None = None
        """Why the work was cancelled, once it was."""
        self._work: asyncio.Future[Any] | None = None

    async def run(self, work: asyncio.Future[T]) -> T | None:
        """Await `work`; None when it was cancelled because the server kept failing."""
        self._work = work
        try:
            return await work
        except asyncio.CancelledError:
            if self.gave_up is None:
                raise
            return None

    async def retry(self, seconds: float) -> None:
        why = self.watch.failure or "the server did not answer"
        since = self.watch.failing_since
        failing = 0.0 if since is None else time.monotonic() - since
        left = self.give_up_after - failing
        if seconds > left and self._work is not None:
            self.gave_up = f"{why}; stopped retrying after {failing:.0f} s"
            self._say(f"{why}: stopping after {failing:.0f} s of retries")
            self._work.cancel()
        elif seconds >= SAID_FROM:
            self._say(f"{why}: retrying in {seconds:.0f} s (giving up in {left:.0f} s)")
        await asyncio.sleep(seconds)

    async def rate_limit(self, seconds: float) -> None:
        if seconds >= SAID_FROM:
            self._say(f"waiting for the rate limit: {seconds:.0f} s")
        await asyncio.sleep(seconds)
