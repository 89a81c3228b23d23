"""A request that never reached the server gives its slot back; one whose fate is unknown keeps
it. The limiter runs on the cache's real request log, in simulated time."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cache import Cache
from sync.ratelimit import BACKGROUND_LOG_BUCKET, RateLimiter, RequestClass

if TYPE_CHECKING:
    from conftest import VirtualTime


def make(cache: Cache, vtime: VirtualTime) -> RateLimiter:
    return RateLimiter(cache, clock=vtime.clock, sleep=vtime.sleep, random=lambda: 0.5)


async def test_a_slot_given_back_is_free_again_at_once(cache: Cache, vtime: VirtualTime) -> None:
    """A full minute on Free (60): ten requests refused at the connection give ten slots back,
    so the next ten go without waiting, and the budget shown is what it was before them."""
    limiter = make(cache, vtime)
    minute, day = limiter.budget()
    sent = [await limiter.acquire("other") for _ in range(minute)]
    assert limiter.budget() == (0, day - minute)
    for at in sent[-10:]:
        limiter.not_sent(at, "other")
    assert limiter.budget() == (10, day - minute + 10)
    for _ in range(10):
        await limiter.acquire("other")
    assert vtime.sleeps == []
    assert limiter.budget() == (0, day - minute)


async def test_background_slots_go_back_to_the_background_bucket(
    cache: Cache, vtime: VirtualTime
) -> None:
    limiter = make(cache, vtime)
    at = await limiter.acquire("other", RequestClass.BACKGROUND)
    other = await limiter.acquire("other", RequestClass.BACKGROUND)
    limiter.not_sent(at, "other", RequestClass.BACKGROUND)
    assert cache.request_times(0.0, BACKGROUND_LOG_BUCKET) == [other]
    assert cache.request_times(0.0) == [other]


async def test_only_the_request_that_never_left_is_given_back(
    cache: Cache, vtime: VirtualTime
) -> None:
    """Another process logged a request at the same moment in the same bucket: one of the two
    entries goes (they count alike), never both; entries of other buckets stay."""
    limiter = make(cache, vtime)
    at = await limiter.acquire("other")
    assert cache.reserve_request(at, "other", [])  # another process, the same instant
    searched = await limiter.acquire("search")
    limiter.not_sent(at, "other")
    assert cache.request_times(0.0, "other") == [at]
    assert cache.request_times(0.0, "search") == [searched]
