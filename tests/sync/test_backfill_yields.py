"""User actions never wait behind the backfill for more than one request's slot
(docs/sync.md#head-first): a write queued while the backfill waits in the limiter for its next
slot (the background share of the minute is spent) goes out before that backfill request,
not once the minute has slid far enough for the backfill's own request."""

from __future__ import annotations

import asyncio
from pathlib import Path

from push_support import Wire, resolved
from test_engine_sync import eventually, fast_loop

from cache import Cache, Resource
from server.app import create_app
from server.seed import seed_workspace
from sync.backfill_progress import pending
from sync.pull import PullReport
from sync.pull.backfill import StepReport, Stop
from sync.session import open_session

WINDOW = 10.0
"""Long enough that the backfill spends the background share of a Free minute (54 of its 60
requests) well within it, on a loaded machine too: it then waits most of the window."""
ISSUES = 9_000


async def test_a_write_asked_while_the_backfill_waits_for_its_slot_goes_first(
    tmp_path: Path,
) -> None:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", ISSUES, plan="free")
    wire = Wire(create_app(db, window_seconds=WINDOW))
    heard: list[object] = []
    waiting = asyncio.Event()

    async def sleep(seconds: float) -> None:
        """The limiter's waits: once the first pass is over, those are the backfill's."""
        if any(isinstance(item, PullReport) for item in heard):
            waiting.set()
        await asyncio.sleep(seconds)

    lists = lambda: sum(1 for request in wire.requests if request == ("GET", "/v1/issues"))  # noqa: E731
    with Cache.open(tmp_path / "c.db") as cache:
        async with open_session(
            resolved(key), cache=cache, transport=wire, window_seconds=WINDOW, sleep=sleep
        ) as s:
            loop = fast_loop(s, heard)
            loop.wake()  # as the app starts it
            task = asyncio.create_task(loop.run())
            await asyncio.wait_for(waiting.wait(), WINDOW)
            assert pending(s.cache)
            waited_at = lists()
            bulk = ("POST", "/v1/issues/bulk")
            probed = wire.requests.count(bulk)  # the features' probe asks it once
            s.cache.outbox.create(Resource.ISSUES, {"title": "written while the backfill waits"})
            loop.poke()
            await eventually(lambda: wire.requests.count(bulk) > probed, 2 * WINDOW)
            posted = [index for index, request in enumerate(wire.requests) if request == bulk][-1]
            assert waited_at == sum(
                1 for request in wire.requests[:posted] if request == ("GET", "/v1/issues")
            )  # not one more backfill request before the write
            assert any(isinstance(i, StepReport) and i.stop is Stop.YIELDED for i in heard)
            await eventually(lambda: lists() > waited_at, 2 * WINDOW)  # and the backfill goes on
            loop.stop()
            await task
    assert wire.statuses.count(429) == 0
