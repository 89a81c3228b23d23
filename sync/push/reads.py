"""The reads inside a push (reconcile listings, conflict listings, the GET before `If-Match`),
retried in place as the pull retries its own (`sync.retry.Retrier`).

A read changes nothing, so it may be sent again whatever became of the first one. Left
unretried, one lost listing ended a whole round, and on a lossy network nearly every round:
the push stopped after a few of them with most of the queue unsent. The waits follow the
push's `Backoff`, so tests that make the push wait for nothing make its reads wait for
nothing too. A read whose connection could not be made is not retried: the server cannot be
reached, and the push stops there.
"""

from __future__ import annotations

from sync.errors import NetworkError
from sync.retry import RETRYABLE, Backoff, Retrier

__all__ = ["RETRYABLE", "read_retrier", "unreachable"]


def unreachable(error: BaseException) -> bool:
    """Whether `error` says the server cannot be reached: a request that never left (the
    connection was refused, the name did not resolve, the connection timed out). Nothing was
    applied, and trying again at once would only fail the same way."""
    return isinstance(error, NetworkError) and not error.request_sent


def _worth_retrying(error: Exception) -> bool:
    """Not when the server cannot be reached (`unreachable`): the push stops there and the
    caller's backoff tries again, instead of every read of every round retrying first."""
    return not unreachable(error)


def read_retrier(backoff: Backoff) -> Retrier:
    return Retrier(backoff, retries=_worth_retrying)
