"""The server clock pinned by window resets: `Date` alone is whole seconds and, from servers
that refresh it once a second, up to a second stale, which against a window scaled to a second
would make the limiter wait for a reset long gone."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import TYPE_CHECKING

import httpx

from sync.ratelimit import ClockOffset, RateLimiter, read_meta

if TYPE_CHECKING:
    from conftest import InMemoryRequestLog, VirtualTime

SKEW = 0.3
"""Server clock minus local clock in these tests."""
STALE = 0.9
"""How far behind the server's `Date` header runs (refreshed once a second)."""
ROUND_TRIP = 0.01


def stale_date(server: float) -> float:
    return float(math.floor(server - STALE))


def test_window_resets_pin_the_offset_that_stale_dates_miss() -> None:
    dates_only, bounded = ClockOffset(), ClockOffset()
    for step in range(40):
        sent = 1_800_000_000.0 + step * 0.037
        received = sent + ROUND_TRIP
        server = sent + ROUND_TRIP / 2 + SKEW
        reset = float(math.floor(server) + 1)
        for offset in (dates_only, bounded):
            offset.add(stale_date(server), received_at=received, sent_at=sent)
        bounded.bound(reset - 1, reset, sent, received)
    assert abs(dates_only.seconds - SKEW) > 0.3
    assert abs(bounded.seconds - SKEW) <= 2 * ROUND_TRIP


def test_contradictory_bounds_fall_back_to_the_dates() -> None:
    offset = ClockOffset()
    for step in range(5):
        offset.add(1_800_000_000.0 + step, received_at=1_800_000_000.0 + step - 0.5)
    offset.bound(1_800_000_100.0, 1_800_000_101.0, 1_800_000_000.0, 1_800_000_000.1)
    offset.bound(1_800_000_000.0, 1_800_000_001.0, 1_800_000_000.0, 1_800_000_000.1)
    assert offset.seconds == 1.0


async def test_a_spent_scaled_window_is_waited_out_to_its_real_reset(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    limiter = RateLimiter(
        request_log, clock=vtime.clock, sleep=vtime.sleep, random=lambda: 0.5, window_seconds=1
    )

    def answer(remaining: int) -> None:
        sent = vtime.now - ROUND_TRIP
        server = vtime.now - ROUND_TRIP / 2 + SKEW
        headers = httpx.Headers(
            {
                "date": format_datetime(datetime.fromtimestamp(stale_date(server), UTC), True),
                "x-ratelimit-limit": "60",
                "x-ratelimit-remaining": str(remaining),
                "x-ratelimit-reset": str(math.floor(server) + 1),
            }
        )
        meta = read_meta("GET", "/issues", 200, headers, sent_at=sent, server_now=server)
        limiter.on_response(meta)

    for step in range(30):
        vtime.now += 0.037
        answer(40 - step % 20)
    answer(0)
    real_reset = math.floor(vtime.now - ROUND_TRIP / 2 + SKEW) + 1 - SKEW
    start = vtime.now
    await vtime.run(limiter.acquire("other"))
    waited, needed = vtime.now - start, real_reset - start
    assert needed <= waited <= needed + 0.1
    assert request_log.reserved[-1][0] == vtime.now
