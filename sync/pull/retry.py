"""Bounded retries with jitter for the reads of a pull (SYNC.md 4, "retryable").

A pull only reads, and a GET may be sent again whatever happened to the first one, so every
`NetworkError` is retryable here (a write would have to look first), and so is a body that
could not be read (`ProtocolError`: truncated or malformed, often a proxy's doing). A 429
waits as the server said: the limiter saw the response and holds the next `acquire` until
`retry_after` has passed, so the retry itself adds only jitter. 5xx and network failures
back off exponentially.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from sync.errors import NetworkError, ProtocolError, RateLimited, ServerError

T = TypeVar("T")

RETRYABLE = (NetworkError, ProtocolError, RateLimited, ServerError)


@dataclass(frozen=True)
class RetryPolicy:
    """`attempts` in all (the first included); waits of `base` * 2^n * [0.5, 1.5), capped."""

    attempts: int = 5
    base: float = 0.5
    cap: float = 30.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    random: Callable[[], float] = field(default=random.random)

    def retries(self, error: Exception) -> bool:
        """Whether `error` is worth another attempt at all; every retryable one is, here."""
        del error
        return True

    def delay(self, failure: int, error: Exception) -> float:
        """Seconds before retry number `failure` (1-based) after `error`."""
        jitter = 0.5 + self.random()
        if isinstance(error, RateLimited):
            return self.base * 0.1 * jitter
        return min(self.cap, self.base * 2.0 ** (failure - 1)) * jitter


class Retrier:
    """Runs calls under a policy and counts the retries, for the report."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy
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
                if failure >= self.policy.attempts or not self.policy.retries(error):
                    raise
                self.retries += 1
                await self.policy.sleep(self.policy.delay(failure, error))
