"""The server's clock as seen from here, measured from `Date` headers and window resets.

Resets and `Retry-After` dates are server times; the local clock may be minutes off, and sync must
stay correct at ±10 min (docs/sync.md#server-time). Each response's `Date` gives one sample of the
offset; the median of recent samples ignores the odd slow response or stale proxy.

`Date` has whole seconds, and some servers (uvicorn) refresh it only once a second, so it may
be a second or more behind: fine against a minute window, useless against a window scaled to
a second. Responses whose rate-limit headers describe a minute window say more: the request
was counted inside that window, so the server's clock read between the window's start and
its reset while the request was in flight. Each such response bounds the offset from both
sides, and a few dozen of them, landing at different points of their windows, pin it to
about one round trip. The median is kept inside those bounds.
"""

from __future__ import annotations

from collections import deque

DATE_RESOLUTION = 1.0
"""`Date` has whole seconds: the server's clock read anywhere in [Date, Date + 1)."""

BOUND_SAMPLES = 64
"""Window-bound samples kept: enough to cover a few windows' worth of phases."""


class ClockOffset:
    """Server time minus local time: the median of the last `samples` `Date` measurements,
    held within what the last window bounds allow (see the module docstring).

    Zero until the first response: before then nothing in server time needs converting except
    what that first response itself carries, and its own `Date` is used for that.
    """

    def __init__(self, samples: int = 15) -> None:
        self._samples: deque[float] = deque(maxlen=samples)
        self._bounds: deque[tuple[float, float]] = deque(maxlen=BOUND_SAMPLES)

    def add(self, server_date: float, received_at: float, sent_at: float | None = None) -> None:
        """Record one response: its `Date` and the local times it was sent and received.

        The server wrote `Date` somewhere between sending and receipt, so the sample compares
        the middle of that second with the middle of the round trip.
        """
        local = (
            received_at if sent_at is None or sent_at > received_at else (sent_at + received_at) / 2
        )
        self._samples.append(server_date + DATE_RESOLUTION / 2 - local)

    def bound(self, start: float, end: float, sent_at: float, received_at: float) -> None:
        """Record a response counted in the server window [`start`, `end`) (server times),
        for a request let through at local `sent_at` and answered at `received_at`."""
        if sent_at <= received_at and start < end:
            self._bounds.append((start - received_at, end - sent_at))

    @property
    def known(self) -> bool:
        """Whether any response has been measured yet."""
        return bool(self._samples)

    @property
    def seconds(self) -> float:
        """Seconds to add to a local time to get the server's time."""
        if not self._samples:
            return 0.0
        import statistics  # with fractions and decimal: not loaded by the read commands

        median = statistics.median(self._samples)
        if not self._bounds:
            return median
        low = max(bound[0] for bound in self._bounds)
        high = min(bound[1] for bound in self._bounds)
        if low > high:
            return median
        return min(max(median, low), high)

    @property
    def overstated(self) -> float | None:
        """At most how far `seconds` exceeds the true offset, by the window bounds; None
        without bounds or when they disagree. A server time converted to local time happens
        on the server no earlier than that local time plus this."""
        if not self._samples or not self._bounds:
            return None
        low = max(bound[0] for bound in self._bounds)
        high = min(bound[1] for bound in self._bounds)
        if low > high:
            return None
        return self.seconds - low

    def to_server(self, local: float) -> float:
        """A local time as the server's clock would show it."""
        return local + self.seconds

    def to_local(self, server: float) -> float:
        """A server time (a reset, a `Retry-After` date) on the local clock."""
        return server - self.seconds
