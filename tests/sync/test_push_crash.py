"""kill -9 at random points of a push, over many trials: nothing lost, nothing done twice.

A child process pushes a cache's outbox to the service on a loopback port and is killed with
SIGKILL after a random delay, while more writes keep being queued between trials; a last clean
run must leave the server with every write exactly once.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from push_support import load_issues, server_issues, session_for

from cache import EntryState, Resource
from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.push import push_outbox
from sync.session import SyncSession

TRIALS = 12
MAX_TRIALS = 20
"""More trials while fewer than `KILLS` children were killed mid-run (a fast machine)."""
KILLS = 4
CREATES = 20
CHILD = Path(__file__).with_name("push_support.py")


def _queue(session: SyncSession, trial: int, targets: list[str]) -> None:
    """A mixed batch: creates (one edited and commented while still local), edits, comments."""
    cache = session.cache
    for n in range(CREATES):
        cache.outbox.create(Resource.ISSUES, {"title": f"t{trial}-c{n}", "priority": "low"})
    local = cache.outbox.create(Resource.ISSUES, {"title": f"t{trial}-parent"})
    cache.outbox.update(Resource.ISSUES, local, {"description": f"edited t{trial}"})
    cache.outbox.create(Resource.COMMENTS, {"issue_id": local, "body": f"t{trial}-on-local"})
    cache.outbox.create(
        Resource.COMMENTS, {"issue_id": targets[trial], "body": f"t{trial}-comment"}
    )
    cache.outbox.update(Resource.ISSUES, targets[trial], {"title": f"t{trial}-renamed"})


def _kill_during_push(base_url: str, cache_path: Path, key: str, rng: random.Random) -> bool:
    """Whether the child was killed (rather than finishing first)."""
    mode = rng.choice(["bulk", "single", "single"])
    child = subprocess.Popen(
        [sys.executable, str(CHILD), base_url, str(cache_path), mode],
        env={**os.environ, "TRACKER_API_KEY": key},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        child.wait(timeout=rng.uniform(0.4, 1.2))
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGKILL)
        child.wait()
        return True
    return False


@pytest.mark.slow
async def test_sigkill_at_random_points_leaves_every_write_exactly_once(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", MAX_TRIALS + 2, plan="pro")
    cache_path = tmp_path / "cache.db"
    rng = random.Random(6)
    with ServiceThread(create_app(db, window_seconds=1.0)) as service:
        base = service.base_url
        async with session_for(key, cache_path, server=base, window_seconds=1.0) as session:
            targets = [str(issue["id"]) for issue in await load_issues(session)]
            killed, interrupted, trials = 0, 0, 0
            while trials < TRIALS or (killed < KILLS and trials < MAX_TRIALS):
                trial, trials = trials, trials + 1
                _queue(session, trial, targets)
                before = len(session.cache.push.sendable())
                killed += await asyncio.to_thread(_kill_during_push, base, cache_path, key, rng)
                left = len(session.cache.outbox.entries((EntryState.PENDING, EntryState.SENDING)))
                interrupted += left > 0 and left != before
            assert killed >= KILLS and interrupted >= 1
            report = await push_outbox(session)
            assert report.stopped is None and report.remaining == 0
            waiting = (EntryState.PENDING, EntryState.SENDING, EntryState.FAILED)
            assert session.cache.outbox.entries(waiting) == []

            issues = await server_issues(session)
            titles = [str(issue["title"]) for issue in issues]
            for trial in range(trials):
                for n in range(CREATES):
                    assert titles.count(f"t{trial}-c{n}") == 1
                assert titles.count(f"t{trial}-parent") == 1
                assert titles.count(f"t{trial}-renamed") == 1
                [parent] = [i for i in issues if i["title"] == f"t{trial}-parent"]
                assert parent["description"] == f"edited t{trial}"
                on_parent = await session.client.list_comments(str(parent["id"]))
                assert [c.raw["body"] for c in on_parent.value.data] == [f"t{trial}-on-local"]
                on_target = await session.client.list_comments(targets[trial])
                bodies = [c.raw["body"] for c in on_target.value.data]
                assert bodies.count(f"t{trial}-comment") == 1
