"""The reads inside a push (reconcile listings, conflict listings, the GET before `If-Match`),
retried in place as the pull retries its own (`sync.pull.retry`).

A read changes nothing, so it may be sent again whatever became of the first one. Left
unretried, one lost listing ended a whole round, and on a lossy network nearly every round:
the push stopped after a few of them with most of the queue unsent. The waits follow the
push's `Backoff` (its `tries`, `base`, `cap`, `sleep` and `random`), so tests that make the
push wait for nothing make its reads wait for nothing too.
"""

from __future__ import annotations

from dataclasses import dataclass

from sync.errors import ApiError
from sync.pull.retry import RETRYABLE, Retrier, RetryPolicy
from sync.push.report import Backoff

__all__ = ["RETRYABLE", "ReadPolicy", "read_retrier"]


@dataclass(frozen=True)
class ReadPolicy(RetryPolicy):
    """The pull's policy, except that a server's `retry_after` (a 429's, or a 503's) is a
    floor: the limiter holds the next request that long anyway, and the retry must not be
    spent before it."""

    def delay(self, failure: int, error: Exception) -> float:
        wait = super().delay(failure, error)
        asked = error.meta.retry_after if isinstance(error, ApiError) else None
        return max(wait, asked or 0.0)


def read_retrier(backoff: Backoff) -> Retrier:
    return Retrier(
        ReadPolicy(
            attempts=backoff.tries,
            base=backoff.base,
            cap=backoff.cap,
            sleep=backoff.sleep,
            random=backoff.random,
        )
    )
