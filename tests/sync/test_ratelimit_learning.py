"""The limiter learns from responses: the plan, spent windows, Retry-After, the server clock."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime
from typing import TYPE_CHECKING

import httpx
import pytest

from sync.ratelimit import RateLimiter, ResponseMeta, read_meta

if TYPE_CHECKING:
    from conftest import InMemoryRequestLog, VirtualTime


def http_date(moment: float) -> str:
    return format_datetime(datetime.fromtimestamp(int(moment), UTC), usegmt=True)


def response(
    limiter: RateLimiter,
    *,
    status: int = 200,
    method: str = "GET",
    path: str = "/issues",
    server_now: float | None = None,
    sent_at: float | None = None,
    **values: str,
) -> ResponseMeta:
    """A response as the client would read it; header names with `_` for `-`."""
    fields = {name.replace("_", "-"): value for name, value in values.items()}
    if server_now is not None:
        fields["date"] = http_date(server_now)
    return read_meta(
        method,
        path,
        status,
        httpx.Headers(fields),
        sent_at=sent_at,
        server_now=limiter.server_now(),
    )


async def elapsed(vtime: VirtualTime, limiter: RateLimiter, bucket: str = "other") -> float:
    start = vtime.now
    await vtime.run(limiter.acquire(bucket))
    return vtime.now - start


def make(log: InMemoryRequestLog, vtime: VirtualTime, *, random: float = 0.5) -> RateLimiter:
    return RateLimiter(log, clock=vtime.clock, sleep=vtime.sleep, random=lambda: random)


@pytest.mark.parametrize(
    ("limit", "reset_in", "plan"),
    [
        ("300", 40, "pro"),
        ("60", 40, "free"),
        ("10000", 7200, "pro"),
        ("100000", 7200, "enterprise"),
        ("1000", 7200, "free"),
        ("1000", 40, "free"),  # Enterprise's minute or, near midnight, Free's day: unknown
        ("45", 40, "free"),
    ],
)
def test_the_plan_is_inferred_from_x_ratelimit_limit_when_unambiguous(
    limiter: RateLimiter, vtime: VirtualTime, limit: str, reset_in: float, plan: str
) -> None:
    limiter.on_response(
        response(
            limiter,
            X_RateLimit_Limit=limit,
            X_RateLimit_Remaining="5",
            X_RateLimit_Reset=str(int(vtime.now + reset_in)),
        )
    )
    assert limiter.plan.name == plan


def test_me_outranks_headers_except_for_a_downgrade(
    limiter: RateLimiter, vtime: VirtualTime
) -> None:
    reset = str(int(vtime.now + 30))
    assert limiter.set_plan("enterprise")
    limiter.on_response(
        response(
            limiter, X_RateLimit_Limit="300", X_RateLimit_Remaining="9", X_RateLimit_Reset=reset
        )
    )
    assert limiter.plan.name == "pro"
    limiter.set_plan("pro")
    limiter.on_response(
        response(
            limiter,
            X_RateLimit_Limit="100000",
            X_RateLimit_Remaining="9",
            X_RateLimit_Reset=str(int(vtime.now + 7200)),
        )
    )
    assert limiter.plan.name == "pro"
    assert not limiter.set_plan("startup")
    assert limiter.plan.name == "pro"


async def test_an_odd_minute_limit_only_ever_lowers_the_pace(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    limiter = make(request_log, vtime)
    limiter.on_response(
        response(
            limiter,
            X_RateLimit_Limit="3",
            X_RateLimit_Remaining="3",
            X_RateLimit_Reset=str(int(vtime.now + 60)),
        )
    )
    times = await vtime.run(*(limiter.acquire("other") for _ in range(4)))
    assert times[3] - times[0] >= 60


async def test_a_spent_window_blocks_until_its_reset(
    limiter: RateLimiter, vtime: VirtualTime
) -> None:
    limiter.on_response(
        response(
            limiter,
            X_RateLimit_Limit="60",
            X_RateLimit_Remaining="0",
            X_RateLimit_Reset=str(int(vtime.now + 20)),
        )
    )
    assert 20 <= await elapsed(vtime, limiter) <= 22


async def test_a_reset_in_the_past_blocks_nothing(limiter: RateLimiter, vtime: VirtualTime) -> None:
    limiter.on_response(
        response(
            limiter,
            X_RateLimit_Limit="60",
            X_RateLimit_Remaining="0",
            X_RateLimit_Reset=str(int(vtime.now - 5)),
        )
    )
    assert await elapsed(vtime, limiter) == 0


async def test_garbage_headers_change_nothing(limiter: RateLimiter, vtime: VirtualTime) -> None:
    limiter.on_response(
        response(
            limiter,
            X_RateLimit_Limit="lots",
            X_RateLimit_Remaining="-3",
            X_RateLimit_Reset="later",
            Retry_After="never",
            Date="then",
        )
    )
    assert limiter.plan.name == "free"
    assert await elapsed(vtime, limiter) == 0


async def test_a_spent_endpoint_window_blocks_only_that_endpoint(
    limiter: RateLimiter, vtime: VirtualTime
) -> None:
    limiter.on_response(
        response(
            limiter,
            path="/search",
            X_RateLimit_Limit="30",
            X_RateLimit_Remaining="0",
            X_RateLimit_Reset=str(int(vtime.now + 40)),
        )
    )
    assert await elapsed(vtime, limiter, "other") == 0
    assert 40 <= await elapsed(vtime, limiter, "search") <= 42


async def test_a_spent_window_that_could_be_the_keys_blocks_everything(
    limiter: RateLimiter, vtime: VirtualTime
) -> None:
    # On Free, 60 is both the comments endpoint's limit and the key's: assume the wider.
    limiter.on_response(
        response(
            limiter,
            method="POST",
            path="/comments",
            X_RateLimit_Limit="60",
            X_RateLimit_Remaining="0",
            X_RateLimit_Reset=str(int(vtime.now + 40)),
        )
    )
    assert 40 <= await elapsed(vtime, limiter, "other") <= 42


async def test_n_remaining_allows_n_more_requests_until_the_reset(
    limiter: RateLimiter, vtime: VirtualTime
) -> None:
    sent_at = await limiter.acquire("other")
    reset = vtime.now + 50
    limiter.on_response(
        response(
            limiter,
            sent_at=sent_at,
            X_RateLimit_Limit="1000",
            X_RateLimit_Remaining="2",
            X_RateLimit_Reset=str(int(reset)),
        )
    )
    times = await vtime.run(*(limiter.acquire("other") for _ in range(3)))
    assert times[0] == times[1] == sent_at
    assert reset <= times[2] <= reset + 2


@pytest.mark.parametrize("random", [0.0, 0.5, 0.999])
async def test_a_429_waits_exactly_retry_after_plus_bounded_jitter(
    request_log: InMemoryRequestLog, vtime: VirtualTime, random: float
) -> None:
    limiter = make(request_log, vtime, random=random)
    limiter.on_response(response(limiter, status=429, Retry_After="17"))
    waited = await elapsed(vtime, limiter)
    assert waited == pytest.approx(17 + random * 1.0)
    assert 17 <= waited < 18


async def test_retry_after_wins_over_a_later_reset(
    limiter: RateLimiter, vtime: VirtualTime
) -> None:
    limiter.on_response(
        response(
            limiter,
            status=429,
            Retry_After="5",
            X_RateLimit_Limit="60",
            X_RateLimit_Remaining="0",
            X_RateLimit_Reset=str(int(vtime.now + 50)),
        )
    )
    assert 5 <= await elapsed(vtime, limiter) < 6


async def test_retry_after_on_a_503_is_honoured_too(
    limiter: RateLimiter, vtime: VirtualTime
) -> None:
    limiter.on_response(response(limiter, status=503, Retry_After="8"))
    assert 8 <= await elapsed(vtime, limiter) < 9


async def test_a_429_without_any_header_waits_a_whole_window(
    limiter: RateLimiter, vtime: VirtualTime
) -> None:
    limiter.on_response(response(limiter, status=429))
    assert 60 <= await elapsed(vtime, limiter) < 61


async def test_a_429_with_only_a_reset_waits_for_it(
    limiter: RateLimiter, vtime: VirtualTime
) -> None:
    limiter.on_response(response(limiter, status=429, X_RateLimit_Reset=str(int(vtime.now + 12))))
    assert 12 <= await elapsed(vtime, limiter) < 14


@pytest.mark.parametrize("skew", [-600.0, 600.0])
async def test_resets_are_read_in_server_time_with_the_local_clock_ten_minutes_off(
    limiter: RateLimiter, vtime: VirtualTime, skew: float
) -> None:
    server_now = vtime.now + skew
    limiter.on_response(
        response(
            limiter,
            server_now=server_now,
            X_RateLimit_Limit="60",
            X_RateLimit_Remaining="0",
            X_RateLimit_Reset=str(int(server_now + 30)),
        )
    )
    assert limiter.server_now() == pytest.approx(server_now, abs=1)
    assert 30 <= await elapsed(vtime, limiter) <= 32


@pytest.mark.parametrize("skew", [-600.0, 600.0])
async def test_a_retry_after_date_is_read_in_server_time(
    limiter: RateLimiter, vtime: VirtualTime, skew: float
) -> None:
    server_now = vtime.now + skew
    limiter.on_response(
        response(limiter, status=429, server_now=server_now, Retry_After=http_date(server_now + 45))
    )
    assert 45 <= await elapsed(vtime, limiter) < 46


async def test_a_later_date_needs_no_date_header_once_the_offset_is_known(
    limiter: RateLimiter, vtime: VirtualTime
) -> None:
    server_now = vtime.now - 600
    limiter.on_response(response(limiter, server_now=server_now))
    limiter.on_response(response(limiter, status=429, Retry_After=http_date(server_now + 45)))
    assert 44 <= await elapsed(vtime, limiter) < 46


@pytest.mark.parametrize("reset_in", [1, 2, 3])
async def test_a_scaled_minute_window_is_never_taken_for_the_day(
    request_log: InMemoryRequestLog, vtime: VirtualTime, reset_in: int
) -> None:
    limiter = RateLimiter(
        request_log,
        clock=vtime.clock,
        sleep=vtime.sleep,
        random=lambda: 0.5,
        window_seconds=1,
    )
    limiter.on_response(
        response(
            limiter,
            server_now=vtime.now,
            X_RateLimit_Limit="60",
            X_RateLimit_Remaining="59",
            X_RateLimit_Reset=str(int(vtime.now + reset_in)),
        )
    )
    times = await vtime.run(*(limiter.acquire("other") for _ in range(200)))
    assert times[-1] - times[0] < 10, "a minute header read as a 60-a-day limit stalls sending"
