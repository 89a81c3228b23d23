"""Background work leaves the user the minute's headroom and, on top, as many requests as the
user sent in the minute's window (docs/sync.md#rate-limits): a user at work keeps their pace
beside a backfill that spends the background share of every minute."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sync.ratelimit import BACKGROUND_LOG_BUCKET, RateLimiter, RequestClass

if TYPE_CHECKING:
    from conftest import InMemoryRequestLog, VirtualTime

BACKGROUND = RequestClass.BACKGROUND
MINUTE = 60.0


async def test_a_user_at_work_keeps_their_pace_beside_the_background(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    limiter = RateLimiter(request_log, clock=vtime.clock, sleep=vtime.sleep, plan="free")
    start = vtime.now
    for _ in range(6):  # the user opens six issues
        await limiter.acquire("other")

    async def backfill() -> None:
        while vtime.now < start + MINUTE / 2:
            await limiter.acquire("other", BACKGROUND)
            await vtime.sleep(0.05)

    await vtime.run(backfill(), until=start + MINUTE / 2)
    background = [at for at, bucket in request_log.reserved if bucket == BACKGROUND_LOG_BUCKET]
    # the minute's 60 hold the user's 6, and leave them the headroom (6) and 6 more
    assert len(background) == 60 - 6 - 6 - 6
    vtime.now = start + MINUTE / 2  # the backfill waits for its next slot meanwhile
    times = await vtime.run(*(limiter.acquire("other") for _ in range(12)))
    assert times == [start + MINUTE / 2] * 12  # their pace again, and the headroom, at once
