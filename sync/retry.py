"""How every retry of the sync waits: one backoff formula, and the retrier of reads built on it.

Used by the pull's reads, the push's reads and writes, the background loop's retry of a failed
pass and the app's reconnects (`sync.engine`, `tracker_tui.engine_link`), and the `sync`
command's retry of an unreachable server. One formula, exponential with "equal jitter":

    ceiling(n) = min(cap, base * 2^(n-1))          n = failures in a row, 1 for the first
    wait(n)    = ceiling(n) * (1 + random) / 2    random in [0, 1): wait in [ceiling/2, ceiling)
    wait(n, retry_after) = max(wait(n), retry_after)

So a wait never exceeds `cap` unless the server itself asked for longer, and never falls below
half its step: the jitter spreads clients that failed together without one of them retrying
at once ("full jitter", uniform in [0, ceiling), would let some hammer a recovering server).
The exponent stops growing once the cap is reached, so a loop that has failed for days still
computes a wait.

Reads (`Retrier`) may be sent again whatever became of the first attempt, so every
`NetworkError` is retryable there (a write would have to look first), and so is a body that
could not be read (`ProtocolError`: truncated or malformed, often a proxy's doing). A 429
adds no wait of its own: the limiter saw the response and holds the next request until the
server's `Retry-After` plus its own jitter (`sync.ratelimit.limits`), and shows that wait as
a wait for the rate limit, which is never cut short. Any other answer's `Retry-After` (a
503's) is a floor.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from sync.errors import ApiError, NetworkError, ProtocolError, RateLimited, ServerError

T = TypeVar("T")

RETRYABLE = (NetworkError, ProtocolError, RateLimited, ServerError)
"""Failures of a read worth another attempt (SYNC.md 4, "retryable")."""
MAX_DOUBLINGS = 64
"""Past this many failures the step stops doubling (2^64 s is far past any cap)."""


@dataclass(frozen=True)
class Backoff:
    """The formula of the module docstring, with `tries` failures in a row accepted before
    giving up (a run of reads raises, a push run stops and leaves the queue for later).

    `sleep` and `random` are injectable, so tests wait for nothing and pick the jitter.
    """

    base: float = 0.5
    cap: float = 30.0
    tries: int = 5
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    random: Callable[[], float] = random.random

    def delay(self, failures: int, retry_after: float | None = None) -> float:
        """Seconds before the next try after `failures` failures in a row (1 for the first);
        a server's `retry_after` wins when it asks for longer."""
        doublings = min(max(0, failures - 1), MAX_DOUBLINGS)
        ceiling = min(self.cap, self.base * 2.0**doublings)
        wait = ceiling * (1.0 + self.random()) / 2
        return max(wait, retry_after or 0.0)


def read_wait(backoff: Backoff, failures: int, error: Exception) -> float:
    """Seconds before another try of a read that failed with `error` (module docstring)."""
    if isinstance(error, RateLimited):
        return 0.0
    asked = error.meta.retry_after if isinstance(error, ApiError) else None
    return backoff.delay(failures, asked)


class Retrier:
    """Runs reads under a `Backoff`, each up to `backoff.tries` times, and counts requests
    and retries for the report. `retries` may refuse a retryable failure (the push does not
    retry a server it cannot reach: it stops there)."""

    def __init__(
        self, backoff: Backoff, *, retries: Callable[[Exception], bool] | None = None
    ) -> None:
        self.backoff = backoff
        self._retries = retries
        self.retries = 0
        self.requests = 0

    async def run(self, call: Callable[[], Awaitable[T]]) -> T:
        failure = 0
        while True:
            self.requests += 1
            try:
                return await call()
            except RETRYABLE as error:
                failure += 1
                if failure >= self.backoff.tries or (
                    self._retries is not None and not self._retries(error)
                ):
                    raise
                self.retries += 1
                await self.backoff.sleep(read_wait(self.backoff, failure, error))
