"""Fixtures for the sync tests: a fake clock that simulates hours in milliseconds, a test
double of the cache's request log, an `ApiClient` on pytest-httpx's mocked network, and a
fresh real cache."""

from __future__ import annotations

import asyncio
import heapq
from bisect import bisect_left, insort
from collections.abc import AsyncIterator, Awaitable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from accounts.secret import Secret
from cache import Cache
from sync.client import ApiClient
from sync.ratelimit import LogCheck, RateLimiter

BASE_URL = "https://tracker.test/v1"
API_KEY = "trk_SECRETsecretSECRETsecretSECRETsecret00"
START = 1_800_000_000.0
"""A realistic Unix time (2027) for fake clocks: small numbers would read as relative resets."""


class InMemoryRequestLog:
    """TEST DOUBLE of the cache's request log (`sync.ratelimit.RequestLog`), in one process.

    Stands in until the cache's SQLite implementation exists; tests of the limiter should then
    also run against that. Reads only `since`, `limit` and `bucket` of each check, as the real
    one must.
    """

    def __init__(self) -> None:
        self._times: dict[str | None, list[float]] = {None: []}
        self.reserved: list[tuple[float, str]] = []

    def reserve_request(self, at: float, bucket: str, checks: Sequence[LogCheck]) -> bool:
        for check in checks:
            if self._count(check.since, check.bucket) >= check.limit:
                return False
        insort(self._times[None], at)
        insort(self._times.setdefault(bucket, []), at)
        self.reserved.append((at, bucket))
        return True

    def release_request(self, at: float, bucket: str) -> bool:
        if at not in self._times.get(bucket, []):
            return False
        for key in (None, bucket):
            self._times[key].remove(at)
        return True

    def request_times(self, since: float, bucket: str | None = None) -> list[float]:
        times = self._times.get(bucket, [])
        return times[bisect_left(times, since) :]

    def prune_requests(self, before: float) -> int:
        removed = bisect_left(self._times[None], before)
        for key, times in self._times.items():
            self._times[key] = times[bisect_left(times, before) :]
        return removed

    def _count(self, since: float, bucket: str | None) -> int:
        times = self._times.get(bucket, [])
        return len(times) - bisect_left(times, since)


class VirtualTime:
    """A clock and a `sleep` for it: sleeping tasks wake in time order, instantly.

    `run` drives coroutines: whenever every one of them is asleep, time jumps to the earliest
    wake-up. A task waiting on anything else (an `asyncio.Event`) must be woken by another.
    """

    def __init__(self, start: float = START) -> None:
        self.now = start
        self.sleeps: list[float] = []
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._sequence = 0

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sequence += 1
        heapq.heappush(self._sleepers, (self.now + max(0.0, seconds), self._sequence, future))
        await future

    async def run(self, *awaitables: Awaitable[Any], until: float | None = None) -> list[Any]:
        """Drive `awaitables` to completion, or until the clock would pass `until`; then the
        unfinished ones are cancelled and their results are None."""
        tasks = [asyncio.ensure_future(awaitable) for awaitable in awaitables]
        try:
            while True:
                for _ in range(20):
                    await asyncio.sleep(0)
                if all(task.done() for task in tasks):
                    break
                if not self._sleepers:
                    raise AssertionError("deadlock: every task waits on something time cannot end")
                wake, _, future = heapq.heappop(self._sleepers)
                if until is not None and wake > until:
                    break
                self.now = max(self.now, wake)
                future.set_result(None)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._sleepers.clear()
        return [task.result() if not task.cancelled() else None for task in tasks]


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[Cache]:
    """An empty cache of the test's own."""
    store = Cache.open(tmp_path / "cache.db")
    yield store
    store.close()


@pytest.fixture
def request_log() -> InMemoryRequestLog:
    return InMemoryRequestLog()


@pytest.fixture
def vtime() -> VirtualTime:
    return VirtualTime()


@pytest.fixture
def limiter(request_log: InMemoryRequestLog, vtime: VirtualTime) -> RateLimiter:
    return RateLimiter(request_log, clock=vtime.clock, sleep=vtime.sleep, random=lambda: 0.5)


@pytest.fixture
def base_url() -> str:
    return BASE_URL


@pytest.fixture
def api_key() -> str:
    return API_KEY


@pytest.fixture
async def client() -> AsyncIterator[ApiClient]:
    async with ApiClient(BASE_URL, Secret(API_KEY)) as api:
        yield api
