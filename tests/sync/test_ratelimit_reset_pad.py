"""A spent window is waited out to its reset plus only as much of the margin as the clock's
window bounds leave in doubt: never before the reset passes on the server, and, once the
offset is pinned, well before reset + margin. Without consistent bounds the margin stays."""

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
"""Server clock minus local clock."""
ROUND_TRIP = 0.01
MARGIN = 0.2


def limiter_for(log: InMemoryRequestLog, vtime: VirtualTime) -> RateLimiter:
    return RateLimiter(
        log,
        clock=vtime.clock,
        sleep=vtime.sleep,
        random=lambda: 0.5,
        window_seconds=1,
        margin=MARGIN,
    )


def answer(limiter: RateLimiter, vtime: VirtualTime, remaining: int) -> None:
    """A response sent a round trip ago and counted halfway, in a second-long window."""
    sent = vtime.now - ROUND_TRIP
    server = vtime.now - ROUND_TRIP / 2 + SKEW
    reset = math.floor(server) + 1
    headers = httpx.Headers(
        {
            "date": format_datetime(datetime.fromtimestamp(math.floor(server), UTC), True),
            "x-ratelimit-limit": "60",
            "x-ratelimit-remaining": str(remaining),
            "x-ratelimit-reset": str(reset),
        }
    )
    limiter.on_response(read_meta("GET", "/issues", 200, headers, sent_at=sent, server_now=server))


async def waited_after_the_real_reset(limiter: RateLimiter, vtime: VirtualTime) -> float:
    for step in range(30):
        vtime.now += 0.037
        answer(limiter, vtime, 40 - step % 20)
    answer(limiter, vtime, 0)
    real_reset = math.floor(vtime.now - ROUND_TRIP / 2 + SKEW) + 1 - SKEW
    await vtime.run(limiter.acquire("other"))
    return vtime.now - real_reset


async def test_a_pinned_clock_waits_out_a_spent_window_without_the_margin(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    late = await waited_after_the_real_reset(limiter_for(request_log, vtime), vtime)
    assert 0 <= late < MARGIN / 2


def test_only_consistent_bounds_say_how_far_the_offset_may_be_overstated() -> None:
    offset = ClockOffset()
    offset.add(1_800_000_000.0, received_at=1_800_000_000.0)
    assert offset.overstated is None
    offset.bound(1_800_000_000.0, 1_800_000_001.0, 1_799_999_999.9, 1_800_000_000.2)
    assert offset.overstated == offset.seconds - (1_800_000_000.0 - 1_800_000_000.2)
    offset.bound(1_800_000_100.0, 1_800_000_101.0, 1_800_000_000.0, 1_800_000_000.1)
    assert offset.overstated is None
