"""Drafts (cache.drafts): kept per key, replaced, dropped, and still there after the process
that saved them was killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from cache_factories import issue, reset_server_copy

from cache import Cache, Resource

ROOT = Path(__file__).resolve().parents[2]


def test_a_draft_is_kept_replaced_and_discarded(cache: Cache) -> None:
    assert cache.drafts.get("comment:iss_1") is None
    cache.drafts.save("comment:iss_1", {"body": "first words"})
    cache.drafts.save("issue:new", {"title": "Crash on save", "labels": ["bug"]})
    cache.drafts.save("comment:iss_1", {"body": "first words, and more"})
    assert cache.drafts.get("comment:iss_1") == {"body": "first words, and more"}
    assert cache.drafts.get("issue:new") == {"title": "Crash on save", "labels": ["bug"]}
    cache.drafts.discard("comment:iss_1")
    cache.drafts.discard("comment:never-saved")
    assert cache.drafts.get("comment:iss_1") is None
    assert cache.drafts.get("issue:new") is not None


def test_a_reset_of_the_server_copy_keeps_drafts(cache: Cache) -> None:
    cache.drafts.save("issue:new", {"title": "Half typed"})
    reset_server_copy(cache)
    assert cache.drafts.get("issue:new") == {"title": "Half typed"}


def test_drafts_of_a_record_created_offline_follow_it_to_its_server_id(cache: Cache) -> None:
    """A comment begun on an issue created offline was keyed by the temporary id, and lost
    from sight once the issue was on the server under its own id."""
    local = cache.outbox.create(Resource.ISSUES, {"title": "Made on the train"})
    cache.drafts.save(f"comment:{local}", {"body": "and a first comment"})
    cache.drafts.save(f"issue:{local}", {"priority": "high"})
    cache.drafts.save("comment:iss_other", {"body": "untouched"})
    [entry] = cache.outbox.entries()
    cache.push.mark_sending(entry.id)
    cache.push.mark_done(entry.id, {**issue(700), "title": "Made on the train"})
    assert cache.drafts.get(f"comment:{local}") is None
    assert cache.drafts.get("comment:iss_000700") == {"body": "and a first comment"}
    assert cache.drafts.get("issue:iss_000700") == {"priority": "high"}
    assert cache.drafts.get("comment:iss_other") == {"body": "untouched"}


SAVER = """
import os, signal, sys
from pathlib import Path
from cache import Cache
cache = Cache.open(Path(sys.argv[1]))
cache.drafts.save("comment:iss_7", {"body": "typed before the kill"})
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_draft_survives_the_process_being_killed_right_after_saving(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    Cache.open(path).close()
    child = subprocess.run([sys.executable, "-c", SAVER, str(path)], cwd=ROOT, check=False)
    assert child.returncode == -signal.SIGKILL
    assert os.path.exists(f"{path}-wal")
    with Cache.open(path) as cache:
        assert cache.drafts.get("comment:iss_7") == {"body": "typed before the kill"}
