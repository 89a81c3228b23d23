"""Time as the service stores and shows it.

Stamps are stored as integer microseconds since the Unix epoch: they compare and index as
integers, and `updated_after` needs no string parsing in SQL. They are shown as ISO 8601 UTC
with microseconds and `Z` (docs/service.md#timestamps).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

Clock = Callable[[], datetime]
"""Returns the current time as an aware UTC datetime; injectable so tests control time."""

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MIN_MICROS = (datetime.min.replace(tzinfo=UTC) - EPOCH) // timedelta(microseconds=1)
_MAX_MICROS = (datetime.max.replace(tzinfo=UTC) - EPOCH) // timedelta(microseconds=1)


def utc_now() -> datetime:
    return datetime.now(UTC)


def to_micros(moment: datetime) -> int:
    """Microseconds since the epoch; a naive datetime is taken to be UTC.

    Subtracting aware datetimes never overflows, unlike converting an extreme value such as
    `0001-01-01T00:00:00+05:00` to UTC.
    """
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - EPOCH) // timedelta(microseconds=1)


def format_micros(micros: int) -> str:
    """The text form the API shows, e.g. `2026-11-21T15:33:11.561385Z`."""
    clamped = min(max(micros, _MIN_MICROS), _MAX_MICROS)
    moment = EPOCH + timedelta(microseconds=clamped)
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
