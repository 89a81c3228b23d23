"""`acquire` never lets more requests through than a limit allows, in any window, over
simulated hours and days; users go before background work, which keeps to its budget."""

from __future__ import annotations

import asyncio
from bisect import bisect_left
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pytest

from sync.ratelimit import BACKGROUND_LOG_BUCKET, ENDPOINT_LIMITS, PLANS, RateLimiter, RequestClass

if TYPE_CHECKING:
    from conftest import InMemoryRequestLog, VirtualTime

MINUTE = 60.0
DAY = 86_400.0
HOUR = 3_600.0


def busiest_window(times: Sequence[float], length: float) -> int:
    """The most requests in any half-open window [t, t + length), over every start t."""
    ordered = sorted(times)
    return max(
        (bisect_left(ordered, start + length) - index for index, start in enumerate(ordered)),
        default=0,
    )


def make(
    log: InMemoryRequestLog, vtime: VirtualTime, plan: str | None = None, **options: float
) -> RateLimiter:
    return RateLimiter(
        log, clock=vtime.clock, sleep=vtime.sleep, random=lambda: 0.5, plan=plan, **options
    )


ROUND_TRIP = 0.05


async def eager(
    vtime: VirtualTime,
    limiter: RateLimiter,
    bucket: str,
    sent: list[tuple[float, str]],
    request_class: RequestClass = RequestClass.USER,
) -> None:
    """Ask for slots as fast as they come, each request taking a round trip to answer."""
    while True:
        sent.append((await limiter.acquire(bucket, request_class), bucket))
        await vtime.sleep(ROUND_TRIP)


async def test_the_first_request_goes_at_once_and_is_logged(
    limiter: RateLimiter, request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    assert await limiter.acquire("search") == vtime.now
    assert request_log.reserved == [(vtime.now, "search")]


async def test_the_61st_request_of_a_minute_waits_for_the_first_to_leave_the_window(
    limiter: RateLimiter, vtime: VirtualTime
) -> None:
    start = vtime.now
    times = await vtime.run(*(limiter.acquire("other") for _ in range(61)))
    assert times[:60] == [start] * 60
    # the window plus a second's margin for requests that arrive later than others
    assert start + MINUTE + 1 < times[60] < start + MINUTE + 1.01
    waits = limiter.waits
    assert (waits.requests, waits.first) == (61, 0.0)
    assert waits.total == pytest.approx(times[60] - start)


@pytest.mark.parametrize(("plan", "duration"), [("free", HOUR), ("pro", HOUR), ("enterprise", 600)])
async def test_eager_requests_never_exceed_any_limit_in_any_window(
    request_log: InMemoryRequestLog, vtime: VirtualTime, plan: str, duration: float
) -> None:
    limiter = make(request_log, vtime, plan)
    sent: list[tuple[float, str]] = []
    buckets = ["other", "other", "search", "issues.create", "comments.create", "bulk"]
    await vtime.run(*(eager(vtime, limiter, b, sent) for b in buckets), until=vtime.now + duration)
    times = [at for at, _ in sent]
    limits = PLANS[plan]
    assert busiest_window(times, MINUTE) == limits.per_minute
    assert len(times) <= limits.per_day
    for bucket, limit in ENDPOINT_LIMITS.items():
        in_bucket = [at for at, b in sent if b == bucket]
        assert 0 < busiest_window(in_bucket, MINUTE) <= limit
    if plan != "enterprise":
        assert len(times) == limits.per_day  # the day's budget is used, not wasted


async def test_a_queue_drains_at_95_percent_of_the_allowed_rate_or_better(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    limiter = make(request_log, vtime, "pro")
    sent: list[tuple[float, str]] = []
    minutes = 20
    workers = [eager(vtime, limiter, "other", sent) for _ in range(4)]
    await vtime.run(*workers, until=vtime.now + minutes * MINUTE)
    assert len(sent) >= 0.95 * PLANS["pro"].per_minute * minutes


async def test_two_processes_sharing_one_log_never_exceed_together(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    tui, cli = make(request_log, vtime), make(request_log, vtime)
    sent: list[tuple[float, str]] = []
    workers = [
        eager(vtime, tui, "other", sent),
        eager(vtime, cli, "other", sent),
        eager(vtime, tui, "search", sent),
        eager(vtime, cli, "search", sent),
        eager(vtime, cli, "other", sent, RequestClass.BACKGROUND),
    ]
    await vtime.run(*workers, until=vtime.now + HOUR)
    times = [at for at, _ in sent]
    assert busiest_window(times, MINUTE) == 60
    assert busiest_window([at for at, b in sent if b == "search"], MINUTE) <= 30
    assert len(times) == 1_000


async def test_a_faster_window_for_a_scaled_test_server(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    limiter = make(request_log, vtime, window_seconds=1.0)
    sent: list[tuple[float, str]] = []
    await vtime.run(eager(vtime, limiter, "bulk", sent), until=vtime.now + 30)
    assert busiest_window([at for at, _ in sent], 1.0) == 10
    assert len(sent) >= 290


async def test_background_work_spends_at_most_half_the_day(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    limiter = make(request_log, vtime)
    sent: list[tuple[float, str]] = []
    await vtime.run(
        eager(vtime, limiter, "other", sent, RequestClass.BACKGROUND), until=vtime.now + 2 * DAY
    )
    times = [at for at, _ in sent]
    assert busiest_window(times, DAY) == 500
    assert len(times) == 1_000  # 500 on each day: the cap slides, it does not stop for good
    assert [bucket for _, bucket in request_log.reserved][:1] == [BACKGROUND_LOG_BUCKET]


async def test_after_background_spends_its_half_the_user_still_has_the_other(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    limiter = make(request_log, vtime)
    background: list[tuple[float, str]] = []
    await vtime.run(
        eager(vtime, limiter, "other", background, RequestClass.BACKGROUND), until=vtime.now + HOUR
    )
    user: list[tuple[float, str]] = []
    await vtime.run(eager(vtime, limiter, "other", user), until=vtime.now + HOUR)
    assert (len(background), len(user)) == (500, 500)


async def test_background_leaves_part_of_each_minute_to_the_user(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    limiter = make(request_log, vtime)
    sent: list[tuple[float, str]] = []
    await vtime.run(
        eager(vtime, limiter, "other", sent, RequestClass.BACKGROUND), until=vtime.now + 30
    )
    assert len(sent) == 54
    assert await limiter.acquire("other") == vtime.now


async def test_a_waiting_user_request_goes_before_background_requests_waiting_longer(
    limiter: RateLimiter, vtime: VirtualTime
) -> None:
    await vtime.run(*(limiter.acquire("other") for _ in range(60)))
    order: list[str] = []

    async def request(name: str, request_class: RequestClass, delay: float) -> None:
        await vtime.sleep(delay)
        await limiter.acquire("other", request_class)
        order.append(name)

    await vtime.run(
        request("background 1", RequestClass.BACKGROUND, 0),
        request("background 2", RequestClass.BACKGROUND, 1),
        request("user", RequestClass.USER, 30),
    )
    assert order == ["user", "background 1", "background 2"]


async def test_background_waits_while_a_user_request_waits(
    limiter: RateLimiter, vtime: VirtualTime
) -> None:
    await vtime.run(*(limiter.acquire("search") for _ in range(30)))
    user = asyncio.ensure_future(limiter.acquire("search"))
    await asyncio.sleep(0)
    background = asyncio.ensure_future(limiter.acquire("other", RequestClass.BACKGROUND))
    for _ in range(10):
        await asyncio.sleep(0)
    assert not background.done()
    await vtime.run(user, background)
    assert user.result() <= background.result()


@pytest.mark.parametrize(
    ("plan", "per_poll", "interval"),
    [("free", 1, 172.8), ("free", 2, 345.6), ("pro", 1, 17.28), ("enterprise", 1, 1.728)],
)
def test_poll_interval_spreads_the_background_budget_over_the_day(
    request_log: InMemoryRequestLog, vtime: VirtualTime, plan: str, per_poll: int, interval: float
) -> None:
    limiter = make(request_log, vtime, plan)
    assert limiter.poll_interval(per_poll) == pytest.approx(interval)


async def test_background_is_polling_only(limiter: RateLimiter) -> None:
    with pytest.raises(ValueError, match="background"):
        await limiter.acquire("search", RequestClass.BACKGROUND)
    with pytest.raises(ValueError):
        await limiter.acquire("everything")


async def test_old_entries_are_pruned_from_the_log(
    limiter: RateLimiter, request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    await limiter.acquire("other")
    vtime.now += 2 * DAY
    await limiter.acquire("other")
    assert request_log.request_times(0) == [vtime.now]


def test_the_limiters_repr_names_its_plan(limiter: RateLimiter) -> None:
    assert repr(limiter) == "RateLimiter(plan='free', source='default')"


async def test_budget_counts_down_from_the_plan_by_the_shared_log(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    limiter = RateLimiter(request_log, clock=vtime.clock, sleep=vtime.sleep, plan="free")
    assert limiter.budget() == (60, 1_000)
    await vtime.run(*(limiter.acquire("other") for _ in range(5)))
    assert limiter.budget() == (55, 995)
