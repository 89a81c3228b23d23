"""What every response says about limits and time, read defensively.

The published API promises `X-RateLimit-*` on every response (docs/api.md#rate-limit-headers); the
reference service adds `Retry-After` on 429s (docs/api.md#retry-after-header). Neither
is ours to trust: a header may be missing, garbage, a reset in the past, or a `Retry-After` in
its HTTP-date form. A bad header costs a fallback (None), never an exception.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from issuefields.frozen import Frozen
from sync.ratelimit.plans import Bucket, bucket_for
from sync.timeutil import parse_http_date

MAX_RETRY_AFTER = 86_400.0
"""Longest wait a server may impose: a day. Beyond that a value is more likely garbage."""

RELATIVE_RESET_BELOW = 1_000_000_000
"""Resets below this (2001) are read as seconds from now, as some servers (and the IETF draft
RateLimit fields) send them, rather than as Unix times."""


class RateLimitHeaders(Frozen):
    """The three `X-RateLimit-*` headers; a field is None when its header is missing or garbage.

    `reset` is the server's Unix time at which the window ends (a relative value already added
    to the response's `Date`).
    """

    _fields = ("limit", "remaining", "reset")
    __slots__ = _fields
    limit: int | None
    remaining: int | None
    reset: float | None

    def __init__(self, limit: int | None, remaining: int | None, reset: float | None) -> None:
        self._init(limit, remaining, reset)


class ResponseMeta(Frozen):
    """Everything a response says beyond its body, for the caller and for the limiter.

    `date` and `rate.reset` are in server time (Unix seconds); `sent_at` is the limiter's local
    clock when the request was let through (None without a limiter); `retry_after` is seconds
    from receipt, from the body or the header, whichever is longer.
    """

    _fields = (
        "method",
        "path",
        "bucket",
        "status",
        "date",
        "rate",
        "retry_after",
        "etag",
        "sent_at",
    )
    __slots__ = _fields
    method: str
    path: str
    bucket: Bucket
    status: int
    date: float | None
    rate: RateLimitHeaders | None
    retry_after: float | None
    etag: str | None
    sent_at: float | None

    def __init__(
        self,
        method: str,
        path: str,
        bucket: Bucket,
        status: int,
        date: float | None = None,
        rate: RateLimitHeaders | None = None,
        retry_after: float | None = None,
        etag: str | None = None,
        sent_at: float | None = None,
    ) -> None:
        self._init(method, path, bucket, status, date, rate, retry_after, etag, sent_at)


def parse_count(text: str | None) -> int | None:
    """A non-negative integer header (`X-RateLimit-Limit`, `-Remaining`), or None."""
    number = parse_seconds(text)
    return None if number is None else int(number)


def parse_seconds(value: object) -> float | None:
    """A non-negative finite number of seconds from a header or a body member, or None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def parse_rate_headers(headers: Mapping[str, str], *, server_now: float) -> RateLimitHeaders | None:
    """The `X-RateLimit-*` headers of a response, or None when none of them is usable.

    `headers` is case-insensitive (`httpx.Headers`) or has lower-case keys. A small reset is
    read as seconds from `server_now`.
    """
    limit = parse_count(headers.get("x-ratelimit-limit"))
    remaining = parse_count(headers.get("x-ratelimit-remaining"))
    reset = parse_seconds(headers.get("x-ratelimit-reset"))
    if reset is not None and reset < RELATIVE_RESET_BELOW:
        reset = server_now + reset
    if limit is None and remaining is None and reset is None:
        return None
    return RateLimitHeaders(limit=limit, remaining=remaining, reset=reset)


def parse_retry_after(text: str | None, *, server_now: float) -> float | None:
    """`Retry-After` as seconds from now: delta-seconds or an HTTP date, or None when garbage.

    An HTTP date is a server time, so it is measured against `server_now` (the response's own
    `Date` when it has one) rather than the local clock, which may be minutes off.
    """
    if text is None:
        return None
    seconds = parse_seconds(text)
    if seconds is None:
        moment = parse_http_date(text)
        if moment is None:
            return None
        seconds = max(0.0, moment - server_now)
    return min(seconds, MAX_RETRY_AFTER)


def read_meta(
    method: str,
    path: str,
    status: int,
    headers: Mapping[str, str],
    *,
    body_retry_after: object = None,
    sent_at: float | None = None,
    server_now: float,
) -> ResponseMeta:
    """Read a response's headers (and the body's `retry_after`) into a `ResponseMeta`.

    `server_now` is the caller's best estimate of server time, used only when the response has
    no usable `Date` of its own. Body and header waits are both the server's word, so the longer
    one wins.
    """
    date_header = headers.get("date")
    date = None if date_header is None else parse_http_date(date_header)
    reference = server_now if date is None else date
    waits = [
        wait
        for wait in (
            parse_seconds(body_retry_after),
            parse_retry_after(headers.get("retry-after"), server_now=reference),
        )
        if wait is not None
    ]
    return ResponseMeta(
        method=method,
        path=path,
        bucket=bucket_for(method, path),
        status=status,
        date=date,
        rate=parse_rate_headers(headers, server_now=reference),
        retry_after=min(max(waits), MAX_RETRY_AFTER) if waits else None,
        etag=headers.get("etag") or None,
        sent_at=sent_at,
    )
