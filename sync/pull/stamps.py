"""Cursor arithmetic on the server's own timestamp strings.

A cursor is sent back as the server wrote it; when it must move back (the overlap window), the
shifted time is written in the same style (with or without a fraction), since a server with only
the published API (docs/api.md#timestamps) may not read a style it never writes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sync.timeutil import format_timestamp, parse_timestamp

EPOCH = "1970-01-01T00:00:00Z"
"""`updated_after` of a cold pull: asking with it (rather than without) gets the sync order."""


def resolution(text: str) -> timedelta:
    """The smallest step a server's timestamp can take, read from how it writes one.

    Records that share a timestamp with the cursor are re-read by moving back one step: a
    second on a whole-second server, a microsecond on the reference service's.
    """
    main = text.split("+", 1)[0].rstrip("Zz")
    if "." not in main:
        return timedelta(seconds=1)
    digits = len(main.split(".", 1)[1])
    return timedelta(microseconds=max(1, 10 ** max(0, 6 - digits)))


def shifted(text: str, delta: timedelta) -> str:
    """`text` moved by `delta`, in the style of `text` (fraction or not)."""
    moment = parse_timestamp(text) + delta
    if resolution(text) >= timedelta(seconds=1):
        return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"
    return format_timestamp(moment)


def before(text: str) -> str:
    """The `updated_after` that also returns records stamped exactly `text` (the overlap)."""
    return shifted(text, -resolution(text))


def from_unix(seconds: float, *, whole: bool) -> str:
    """A server time (a `Date` header) as a cursor string."""
    moment = datetime.fromtimestamp(seconds, UTC)
    if whole:
        return moment.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"
    return format_timestamp(moment)


def sort_key(text: str) -> datetime:
    return parse_timestamp(text)
