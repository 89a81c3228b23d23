"""A request this process saw answered stops counting a window after its answer, instead of a
window plus the margin after it was sent; every other entry keeps the margin, and no placement
of the server's count instants the answers allow ever puts more than a limit in one window."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from push_support import Wire, resolved

from cache import Cache, Resource
from server.app import create_app
from server.seed import seed_workspace
from sync.push import push_outbox
from sync.ratelimit import Bucket, RateLimiter, ResponseMeta
from sync.session import open_session

if TYPE_CHECKING:
    from conftest import InMemoryRequestLog, VirtualTime

MINUTE = 60.0
MARGIN = 1.0
CREATES = 30


def answer(limiter: RateLimiter, at: float, bucket: Bucket = Bucket.ISSUES_CREATE) -> None:
    limiter.on_response(ResponseMeta("POST", "/issues", bucket, 201, sent_at=at))


async def one_by_one(
    vtime: VirtualTime, limiter: RateLimiter, count: int, round_trip: float | None
) -> list[float]:
    """Send `count` creates in turn, each answered after `round_trip` (None: never)."""
    sent: list[float] = []
    for _ in range(count):
        at = await limiter.acquire(Bucket.ISSUES_CREATE)
        sent.append(at)
        await vtime.sleep(round_trip if round_trip is not None else 0.05)
        if round_trip is not None:
            answer(limiter, at)
    return sent


async def test_the_31st_create_goes_a_window_after_the_first_answer(
    limiter: RateLimiter, vtime: VirtualTime
) -> None:
    start = vtime.now
    await vtime.run(one_by_one(vtime, limiter, CREATES, 0.05))
    [late] = await vtime.run(limiter.acquire(Bucket.ISSUES_CREATE))
    assert start + 0.05 + MINUTE <= late < start + MINUTE + 0.1


async def test_slow_or_missing_answers_keep_the_margin(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    for round_trip in (2 * MARGIN, None):
        limiter = RateLimiter(request_log, clock=vtime.clock, sleep=vtime.sleep, random=lambda: 0.5)
        start = vtime.now
        await vtime.run(one_by_one(vtime, limiter, CREATES, round_trip))
        [late] = await vtime.run(limiter.acquire(Bucket.ISSUES_CREATE))
        assert start + MINUTE + MARGIN < late < start + MINUTE + MARGIN + 0.01
        vtime.now = late + 2 * (MINUTE + MARGIN)


async def test_answers_seen_by_another_process_do_not_shorten_this_ones_window(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    other = RateLimiter(request_log, clock=vtime.clock, sleep=vtime.sleep, random=lambda: 0.5)
    this = RateLimiter(request_log, clock=vtime.clock, sleep=vtime.sleep, random=lambda: 0.5)
    start = vtime.now
    await vtime.run(one_by_one(vtime, other, CREATES, 0.05))
    [late] = await vtime.run(this.acquire(Bucket.ISSUES_CREATE))
    assert late > start + MINUTE + MARGIN


def busiest_placement(spans: list[tuple[float, float]], length: float) -> int:
    """The most requests any window [x, x + length) can hold when each request may be counted
    anywhere in its (sent, latest count) span: those whose span meets the window."""
    starts = {latest for _, latest in spans} | {sent - length + 1e-9 for sent, _ in spans}
    return max(
        sum(1 for sent, latest in spans if sent < x + length and latest >= x) for x in starts
    )


async def test_no_placement_the_answers_allow_exceeds_a_limit(
    limiter: RateLimiter, vtime: VirtualTime
) -> None:
    """Eager senders with round trips from instant to three margins, a fifth never answered:
    a request's latest count instant is its answer, or the margin after sending without one."""
    rng = random.Random(6)
    spans: dict[str, list[tuple[float, float]]] = {"all": [], Bucket.ISSUES_CREATE: []}

    async def eager(bucket: Bucket) -> None:
        while True:
            at = await limiter.acquire(bucket)
            round_trip = rng.choice([rng.uniform(0, MARGIN / 2), rng.uniform(0, 3 * MARGIN)])
            lost = rng.random() < 0.2
            await vtime.sleep(round_trip)
            latest = at + MARGIN if lost else min(vtime.now, at + MARGIN)
            if not lost:
                answer(limiter, at, bucket)
            spans["all"].append((at, latest))
            if bucket is Bucket.ISSUES_CREATE:
                spans[bucket].append((at, latest))

    buckets = [Bucket.ISSUES_CREATE] * 3 + [Bucket.OTHER] * 2
    await vtime.run(*(eager(bucket) for bucket in buckets), until=vtime.now + 8 * MINUTE)
    assert len(spans[Bucket.ISSUES_CREATE]) > 8 * CREATES * 0.9
    assert busiest_placement(spans[Bucket.ISSUES_CREATE], MINUTE) <= CREATES
    assert busiest_placement(spans["all"], MINUTE) <= limiter.plan.per_minute


async def test_creates_pushed_past_a_wide_margin_meet_no_429(tmp_path: Path) -> None:
    """Against the reference service (a second's window, a margin of half of it): the service
    refuses none of the 40 creates, and no window of the client's own log holds more than 30
    of them. How soon the 31st goes (a window after the first one's answer, well before the
    margin would let it) is a time, measured by `benchmarks/ratelimit_answered.py`; the same
    placement on virtual time is asserted by the tests above."""
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 0, plan="free")
    wire = Wire(create_app(db, window_seconds=1.0))
    with Cache.open(tmp_path / "cache.db") as cache:
        async with open_session(
            resolved(key), cache=cache, transport=wire, window_seconds=1.0, margin=0.5
        ) as session:
            for n in range(40):
                cache.outbox.create(Resource.ISSUES, {"title": f"created {n}"})
            wire.reset()
            report = await push_outbox(session, bulk_creates=False)
            sent = cache.requests.request_times(0.0, Bucket.ISSUES_CREATE)
    assert report.done == 40 and report.remaining == 0
    assert wire.count("POST", "/issues") == 40 and wire.statuses.count(429) == 0
    assert len(sent) == 40
    assert max(sum(1 for t in sent if at <= t < at + 1.0) for at in sent) <= CREATES


async def test_a_request_far_from_the_limits_reads_no_times_from_the_log(
    limiter: RateLimiter,
    request_log: InMemoryRequestLog,
    vtime: VirtualTime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Letting answered entries off costs a read of the log per window: only worth it when
    the log refused the request as it stands (every page of a pull waits for its acquire)."""
    await vtime.run(one_by_one(vtime, limiter, 5, 0.05))
    reads: list[object] = []
    original = request_log.request_times

    def counted(since: float, bucket: str | None = None) -> list[float]:
        reads.append((since, bucket))
        return original(since, bucket)

    monkeypatch.setattr(request_log, "request_times", counted)
    await vtime.run(limiter.acquire(Bucket.ISSUES_CREATE))
    assert reads == []
    await vtime.run(one_by_one(vtime, limiter, CREATES - 6, 0.05))
    await vtime.run(limiter.acquire(Bucket.ISSUES_CREATE))
    assert reads, "at the limit, answered entries are looked up"
