"""A background request waiting for its slot under `giving_way(event)` is not sent once the
event is set (sync/ratelimit/give_way.py): it raises `GaveWay` at that moment, with nothing
logged, so what the user asked for waits for no background request."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from sync.ratelimit import BACKGROUND_LOG_BUCKET, RateLimiter, RequestClass
from sync.ratelimit.give_way import GaveWay, giving_way

if TYPE_CHECKING:
    from conftest import InMemoryRequestLog, VirtualTime

BACKGROUND = RequestClass.BACKGROUND


async def test_a_background_wait_gives_way_when_the_event_is_set(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    limiter = RateLimiter(request_log, clock=vtime.clock, sleep=vtime.sleep, plan="free")
    start = vtime.now
    share = limiter.background_per_minute()
    for _ in range(share):
        await limiter.acquire("other", BACKGROUND)
    wanted = asyncio.Event()
    outcome: list[object] = []

    async def backfill() -> None:
        with giving_way(wanted):
            try:
                outcome.append(await limiter.acquire("other", BACKGROUND))
            except GaveWay:
                outcome.append(("gave way", vtime.now))

    async def user() -> None:
        await vtime.sleep(10)
        wanted.set()
        outcome.append(("user", await limiter.acquire("other")))

    await vtime.run(backfill(), user())
    assert sorted(outcome, key=str) == [("gave way", start + 10), ("user", start + 10)]
    assert [bucket for _, bucket in request_log.reserved].count(BACKGROUND_LOG_BUCKET) == share
    assert len(request_log.reserved) == share + 1


async def test_without_the_event_set_the_background_request_takes_its_slot(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    limiter = RateLimiter(request_log, clock=vtime.clock, sleep=vtime.sleep, plan="free")
    start = vtime.now
    for _ in range(limiter.background_per_minute()):
        await limiter.acquire("other", BACKGROUND)
    with giving_way(asyncio.Event()):
        (sent,) = await vtime.run(limiter.acquire("other", BACKGROUND))
    assert sent == pytest.approx(start + 61, abs=0.01)  # the window and its margin


async def test_a_user_request_never_gives_way(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    limiter = RateLimiter(request_log, clock=vtime.clock, sleep=vtime.sleep, plan="free")
    wanted = asyncio.Event()
    wanted.set()
    with giving_way(wanted):
        assert await limiter.acquire("other") == vtime.now
    with giving_way(wanted), pytest.raises(GaveWay):
        await limiter.acquire("other", BACKGROUND)
    assert len(request_log.reserved) == 1
