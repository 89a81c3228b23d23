"""Now as the server's clock shows it, for relative times ("updated 3m ago").

The times shown are the server's own stamps, so they are compared with the server's now: a
client clock ten minutes fast would otherwise call an edit made a minute ago "11m ago", and a
slow one would date it in the future. The sync engine measures the offset from each answer's
`Date` (sync.ratelimit.clock) and keeps it in the cache; the app starts from that and the
engine link moves it after every pull.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta


def utc_now() -> datetime:
    """This machine's wall clock."""
    return datetime.now(UTC)


class ServerClock:
    """This machine's clock plus the measured offset to the server's (seconds, server minus
    local). The offset is one float, written by the sync thread and read by the UI."""

    def __init__(self, offset: float = 0.0, local: Callable[[], datetime] = utc_now) -> None:
        self.offset = offset
        self._local = local

    def now(self) -> datetime:
        return self._local() + timedelta(seconds=self.offset)
