"""The backfill keeps the unfiltered list's anchors in the file at the end of each stretch
(sync.pull.backfill.keep_anchors), as the page writer does at the end of a pass: a process
started before the next poll finds them at the revision the stretch left. Anchors every 5
rows make a few hundred issues behave as a hundred thousand do (see
tests/cache/test_cache_kept_anchors)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_pull_support import FAST_RETRY, served, session_on

from cache import Cache, IssueFilter, Resource, anchor_file, anchors, query
from sync.pull import backfill_state, pull
from sync.pull.backfill import Stop
from sync.pull.engine import backfill_step

ISSUES = 700


@pytest.fixture(autouse=True)
def deep_at_small_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(anchors, "SPACING", 5)
    monkeypatch.setattr(anchors, "STRIDE", 20)
    monkeypatch.setattr(anchors, "_SHELVES", {})
    monkeypatch.setattr(query, "SHALLOW_ROWS", 12)


def kept_total(cache: Cache) -> int | None:
    """The list's number of rows the file keeps with its anchors, when every order's anchors
    and that total are at the issues table's revision now; None otherwise."""
    with cache.server._db.read() as conn:
        now = anchors.revision(conn)
        held = anchor_file.revisions(conn)
        total = anchor_file.read(conn, anchor_file.TOTAL)
    if len(held) < 2 or set(held.values()) != {now} or total is None:
        return None
    assert isinstance(total[1], int)
    return total[1]


async def test_each_stretch_of_the_backfill_keeps_the_anchors_at_its_end(
    tmp_path: Path, cache: Cache
) -> None:
    """A stretch that yields after two requests, then one that meets the floor: after each,
    the file's anchors are at the revision it left, and count every issue held. They were
    left where the head-first pull had put them (none: its head is a few pages)."""
    async with served(tmp_path, ISSUES) as service, session_on(service, cache) as session:
        await pull(session, head_first=True, finish_backfill=False, retry=FAST_RETRY)
        assert backfill_state.pending(cache)
        held = cache.server.local_count(Resource.ISSUES)
        asked: list[None] = []

        def after_two() -> bool:
            asked.append(None)
            return len(asked) > 2

        first = await backfill_step(session, should_yield=after_two, retry=FAST_RETRY)
        assert first is not None and first.stop is Stop.YIELDED and first.requests == 2
        grown = cache.server.local_count(Resource.ISSUES)
        assert grown > held
        assert kept_total(cache) == grown
        last = await backfill_step(session, should_yield=lambda: False, retry=FAST_RETRY)
        assert last is not None and last.stop is Stop.DONE
    assert not backfill_state.pending(cache)
    assert cache.server.local_count(Resource.ISSUES) == ISSUES
    assert kept_total(cache) == ISSUES
    assert cache.reads.count(IssueFilter()) == ISSUES


async def test_a_stretch_that_stores_nothing_writes_nothing(tmp_path: Path, cache: Cache) -> None:
    """A stretch that yields before its first request leaves the file as it was."""
    async with served(tmp_path, ISSUES) as service, session_on(service, cache) as session:
        await pull(session, head_first=True, finish_backfill=False, retry=FAST_RETRY)
        with cache.server._db.read() as conn:
            before = anchor_file.read_all(conn)
        step = await backfill_step(session, should_yield=lambda: True, retry=FAST_RETRY)
        assert step is not None and step.stop is Stop.YIELDED and step.requests == 0
        with cache.server._db.read() as conn:
            assert anchor_file.read_all(conn) == before
