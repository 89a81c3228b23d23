"""Timestamps as servers write them, read into one form.

The published API promises "ISO 8601 UTC" and the reference service adds microseconds and `Z`
(docs/api.md#timestamps), but a server with only the published API may send whole seconds, an offset
instead of `Z`, nanoseconds or no zone at all. Everything is read into an aware UTC `datetime`;
callers that need to send a time back to the server (a sync cursor) should send the server's own
string, which the models keep.
"""

from __future__ import annotations

from datetime import UTC, datetime


def parse_timestamp(text: str) -> datetime:
    """Read an ISO 8601 timestamp; a missing zone means UTC, since every time of the
    published API is UTC.

    Raises `ValueError` for anything that is not a timestamp, so a model can report the record.
    """
    value = text.strip()
    if value[-1:] == "z":
        value = value[:-1] + "Z"
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def format_timestamp(moment: datetime) -> str:
    """Write a time the way the reference service does (microseconds and `Z`), for query parameters.

    A naive `datetime` is taken to be UTC already rather than local time: every time in this
    package is UTC, and guessing the local zone would shift cursors by hours.
    """
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    utc = moment.astimezone(UTC).replace(tzinfo=None)
    return utc.isoformat(timespec="microseconds") + "Z"


def parse_http_date(text: str) -> float | None:
    """Read an HTTP date (`Date`, `Retry-After`) into Unix seconds, or None when it is garbage.

    Headers are not ours to trust: a malformed one must cost a fallback, never an exception.
    `email.utils` is imported here: with it come sockets and MIME, which the commands that
    only read the cache never need (docs/architecture.md#start-up).
    """
    from email.utils import parsedate_to_datetime

    try:
        parsed = parsedate_to_datetime(text.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()
