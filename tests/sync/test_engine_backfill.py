"""The app's loop and a head-first start (docs/sync.md#head-first): the first pull reads the
head, the loop backfills between its passes as background work, a write queued meanwhile goes
out before the backfill's next request, and comments follow the backfill."""

from __future__ import annotations

import asyncio
from pathlib import Path

from push_support import Wire, session_for
from test_engine_sync import eventually, fast_loop

from cache import Resource
from server.app import create_app
from server.seed import seed_workspace
from sync.backfill_progress import BackfillProgress, backfill_text, pending, progress
from sync.pull import PullReport
from sync.pull.backfill import StepReport, Stop

WINDOW = 1.0
ISSUES = 1_200


async def test_the_loop_backfills_between_passes_and_a_write_goes_first(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", ISSUES, plan="enterprise")
    wire = Wire(create_app(db, window_seconds=WINDOW))
    heard: list[object] = []
    async with session_for(key, tmp_path / "c.db", transport=wire, window_seconds=WINDOW) as s:
        loop = fast_loop(s, heard)
        loop.wake()  # as the app starts it
        task = asyncio.create_task(loop.run())
        await eventually(lambda: any(isinstance(item, PullReport) for item in heard))
        first = next(item for item in heard if isinstance(item, PullReport))
        assert first.head_first and "comments" not in first.resources
        assert pending(s.cache)
        lists = lambda: sum(1 for request in wire.requests if request == ("GET", "/v1/issues"))  # noqa: E731
        at_head = lists()
        await eventually(lambda: lists() >= at_head + 3)  # the backfill is under way
        s.cache.outbox.create(Resource.ISSUES, {"title": "written during the backfill"})
        loop.poke()
        await eventually(
            lambda: any(isinstance(i, StepReport) and i.stop is Stop.DONE for i in heard)
        )
        posted = wire.requests.index(("POST", "/v1/issues/bulk"))
        backfill_lists = [
            index
            for index, request in enumerate(wire.requests)
            if request == ("GET", "/v1/issues") and index > posted
        ]
        assert backfill_lists  # the write went out while the backfill still had pages to read
        assert any(isinstance(item, StepReport) and item.stop is Stop.YIELDED for item in heard)
        await eventually(lambda: s.cache.server.local_count(Resource.COMMENTS) > 0)
        loop.stop()
        await task
        assert s.cache.server.local_count(Resource.ISSUES) == ISSUES + 1
        assert not pending(s.cache)
        shown = progress(s.cache)
        assert shown is not None and shown.done and backfill_text(shown) is None


def test_the_backfill_is_told_with_its_progress_and_when_it_resumes() -> None:
    at_nine = 1_900_000_000.0
    going = BackfillProgress(expected=98_000, received=12_300)
    assert backfill_text(going) == "backfill 12,300 of 98,000"
    paused = BackfillProgress(expected=98_000, received=40_000, paused_until=at_nine)
    shown = backfill_text(paused)
    assert shown is not None and shown.startswith("backfill 40,000 of 98,000 paused until ")
    assert shown.endswith("(today's budget is spent)")
    finishing = BackfillProgress(expected=98_000, received=12_300, finish_at=at_nine)
    assert "done about" in (backfill_text(finishing, long=True) or "")
