"""What one process learned about the server's limits is there for the next one (issue 15).

A server with only the published API tells its plan only through `X-RateLimit-Limit`. A process
that forgot it started at Free's 60 a minute while the log shared by the profile's processes
already held more than that, and held its first request back for most of a window. Each
"process" here is a session opened on its own `Cache.open` of one cache file, as every CLI
command and the TUI open theirs; waits are the limiter's own account of them.
"""

from __future__ import annotations

import time
from pathlib import Path

from push_support import Wire, spec_only
from test_pull_support import served, session_on

from cache import Cache
from sync.ratelimit.plans import FREE

WINDOW = 10.0
"""A rate-limit "minute" long enough that the first session's requests all fall in one."""


async def test_a_second_session_sends_its_first_request_at_once_at_the_learned_plan(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cache.db"
    async with served(tmp_path, 5, wrap=spec_only, plan="pro", window_seconds=WINDOW) as service:
        with Cache.open(path) as cache:
            async with session_on(service, cache, window_seconds=WINDOW) as first:
                assert (first.features.me, first.features.plan) == (False, None)
                for _ in range(FREE.per_minute + 10):
                    await first.client.list_issues(per_page=1)
                assert first.limiter.plan.name == "pro"
        with Cache.open(path) as cache:
            logged = len(cache.requests.request_times(time.time() - WINDOW))
            async with session_on(service, cache, window_seconds=WINDOW) as second:
                plan = second.limiter.plan.name  # before any request
                await second.client.list_issues(per_page=1)
                waits = second.limiter.waits
    assert logged > FREE.per_minute  # so Free's limit would have held the request back
    assert (waits.requests, waits.first) == (1, 0.0)
    assert plan == "pro"


async def test_a_downgrade_is_learned_from_the_first_answer_and_causes_no_429(
    tmp_path: Path,
) -> None:
    window = 2.0
    path = tmp_path / "cache.db"
    async with served(tmp_path, 5, wrap=spec_only, plan="pro", window_seconds=window) as service:
        with Cache.open(path) as cache:
            async with session_on(service, cache, window_seconds=window) as first:
                await first.client.list_issues(per_page=1)
                assert first.limiter.plan.name == "pro"
        service.sql("UPDATE workspaces SET plan = 'free'")
        wire = Wire(service.asgi)
        with Cache.open(path) as cache:
            async with session_on(service, cache, transport=wire, window_seconds=window) as second:
                remembered = second.limiter.plan.name
                await second.client.list_issues(per_page=1)
                learned = second.limiter.plan.name
                started = time.monotonic()
                for _ in range(FREE.per_minute + 10):
                    await second.client.list_issues(per_page=1)
                took = time.monotonic() - started
                waited = second.limiter.waits.total
        with Cache.open(path) as cache:
            async with session_on(service, cache, window_seconds=window) as third:
                stored = third.limiter.plan.name
    assert (remembered, learned, stored) == ("pro", "free", "free")
    assert wire.statuses.count(429) == 0 and len(wire.statuses) == FREE.per_minute + 11
    # Free's 60 a window held the 61st back, unless the machine was so loaded that the 71
    # requests took longer than a window by themselves (seen when two suites ran at once).
    assert waited > 0 or took > window
