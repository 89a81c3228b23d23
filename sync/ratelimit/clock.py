"""The server's clock as seen from here, measured from `Date` headers.

Resets and `Retry-After` dates are server times; the local clock may be minutes off (SYNC.md
asks for correctness at ±10 min). Each response's `Date` gives one sample of the offset; the
median of recent samples ignores the odd slow response or stale proxy.
"""

from __future__ import annotations

import statistics
from collections import deque

DATE_RESOLUTION = 1.0
"""`Date` has whole seconds: the server's clock read anywhere in [Date, Date + 1)."""


class ClockOffset:
    """Server time minus local time, the median of the last `samples` measurements.

    Zero until the first response: before then nothing in server time needs converting except
    what that first response itself carries, and its own `Date` is used for that.
    """

    def __init__(self, samples: int = 15) -> None:
        self._samples: deque[float] = deque(maxlen=samples)

    def add(self, server_date: float, received_at: float, sent_at: float | None = None) -> None:
        """Record one response: its `Date` and the local times it was sent and received.

        The server wrote `Date` somewhere between sending and receipt, so the sample compares
        the middle of that second with the middle of the round trip.
        """
        local = (
            received_at if sent_at is None or sent_at > received_at else (sent_at + received_at) / 2
        )
        self._samples.append(server_date + DATE_RESOLUTION / 2 - local)

    @property
    def known(self) -> bool:
        """Whether any response has been measured yet."""
        return bool(self._samples)

    @property
    def seconds(self) -> float:
        """Seconds to add to a local time to get the server's time."""
        return statistics.median(self._samples) if self._samples else 0.0

    def to_server(self, local: float) -> float:
        """A local time as the server's clock would show it."""
        return local + self.seconds

    def to_local(self, server: float) -> float:
        """A server time (a reset, a `Retry-After` date) on the local clock."""
        return server - self.seconds
