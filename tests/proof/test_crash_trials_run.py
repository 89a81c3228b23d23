"""The crash trials of `benchmarks/crash_trials.py`, 20 of them, as part of the suite.

The same code as `make bench` runs (the script is loaded as a module): a child process syncs
(push, then pull) against the service on loopback and is SIGKILLed at random moments while
writes keep being queued; at the end nothing may be lost or duplicated, the cache must equal
the server and pass `PRAGMA integrity_check`. A second test shows the final check does catch
a lost write, a duplicate and a stale cache, so the first cannot pass by checking nothing.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from cache import Cache
from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.engine import sync_once
from sync.session import open_session

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "crash_trials.py"
TRIALS = 20


def _load() -> ModuleType:
    """The script as a module; by path, since `benchmarks/` on sys.path would shadow `cache`."""
    spec = importlib.util.spec_from_file_location("crash_trials", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["crash_trials"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


crash_trials = _load()


@pytest.mark.slow
def test_twenty_sigkilled_syncs_lose_and_duplicate_nothing() -> None:
    figures = crash_trials.run_trials(TRIALS, seed=8)
    assert figures.problems == []
    assert (figures.lost, figures.duplicated, figures.refused) == (0, 0, 0)
    assert figures.child_failures == 0
    assert figures.cache_mismatches == 0
    assert figures.integrity_failures == 0
    assert figures.trials == TRIALS
    assert figures.writes >= TRIALS * 12
    assert figures.mid_run_kills >= TRIALS // 4
    assert figures.mid_run_kills - figures.kills_in_pull >= 1
    assert figures.mid_run_kills + figures.finished_first <= TRIALS


async def test_final_check_finds_a_lost_write_a_duplicate_and_a_stale_cache(
    tmp_path: Path,
) -> None:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "check", 4, plan="pro")
    expected = crash_trials.Expected(
        created={"never sent": {"local": "local_x"}, "twice": {"local": "local_y"}},
        comments={"a comment never sent": "never sent"},
    )
    with (
        ServiceThread(create_app(db, window_seconds=1.0)) as service,
        Cache.open(tmp_path / "cache.db") as cache,
    ):
        profile = crash_trials.resolved(service.base_url, key)
        async with open_session(profile, cache=cache, window_seconds=1.0) as session:
            await sync_once(session)
            clean = crash_trials.Figures()
            await crash_trials.check(
                clean, cache, crash_trials.Expected(), service.base_url, key, 1.0
            )
            for _ in range(2):
                await session.client.create_issue({"title": "twice"})

            stale = crash_trials.Figures()
            await crash_trials.check(stale, cache, expected, service.base_url, key, 1.0)
            await sync_once(session)
            synced = crash_trials.Figures()
            await crash_trials.check(synced, cache, expected, service.base_url, key, 1.0)

    assert clean.problems == []
    assert (stale.lost, stale.duplicated) == (2, 1)
    assert stale.cache_mismatches >= 2
    assert (synced.lost, synced.duplicated, synced.cache_mismatches) == (2, 1, 0)
