"""The reads inside a push (reconcile listings, conflict listings, the GET before `If-Match`),
retried in place as the pull retries its own (`sync.pull.retry`).

A read changes nothing, so it may be sent again whatever became of the first one. Left
unretried, one lost listing ended a whole round, and on a lossy network nearly every round:
the push stopped after a few of them with most of the queue unsent. The waits follow the
push's `Backoff` (its `tries`, `base`, `cap`, `sleep` and `random`), so tests that make the
push wait for nothing make its reads wait for nothing too. A read whose connection could not
be made is not retried: the server cannot be reached, and the push stops there.
"""

from __future__ import annotations

from dataclasses import dataclass

from sync.errors import ApiError, NetworkError
from sync.pull.retry import RETRYABLE, Retrier, RetryPolicy
from sync.push.report import Backoff

__all__ = ["RETRYABLE", "ReadPolicy", "read_retrier", "unreachable"]


def unreachable(error: BaseException) -> bool:
    """Whether `error` says the server cannot be reached: a request that never left (the
    connection was refused, the name did not resolve, the connection timed out). Nothing was
    applied, and trying again at once would only fail the same way."""
    return isinstance(error, NetworkError) and not error.request_sent


@dataclass(frozen=True)
class ReadPolicy(RetryPolicy):
    """The pull's policy, except that a server's `retry_after` (a 429's, or a 503's) is a
    floor: the limiter holds the next request that long anyway, and the retry must not be
    spent before it."""

    def retries(self, error: Exception) -> bool:
        """Not when the server cannot be reached (`unreachable`): the push stops there and the
        caller's backoff tries again, instead of every read of every round retrying first."""
        return not unreachable(error)

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
