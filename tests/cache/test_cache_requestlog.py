"""The shared request log: reservations are atomic across processes, in a file of its own."""

from __future__ import annotations

import sqlite3
import stat
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from cache import Cache, LogCheck, requestlog

ROOT = Path(__file__).resolve().parents[2]


def test_a_reservation_passes_only_when_every_check_does(cache: Cache) -> None:
    minute = [LogCheck(since=100.0, limit=2, bucket=None)]
    assert cache.requests.reserve_request(100.0, "list", minute)
    assert cache.requests.reserve_request(101.0, "search", minute)
    assert not cache.requests.reserve_request(102.0, "list", minute)
    assert cache.requests.reserve_request(
        161.0, "list", [LogCheck(since=160.0, limit=2, bucket=None)]
    )
    per_bucket = [LogCheck(since=0.0, limit=1, bucket="search")]
    assert not cache.requests.reserve_request(162.0, "search", per_bucket)
    assert cache.requests.reserve_request(
        162.0, "bulk", [LogCheck(since=0.0, limit=1, bucket="bulk")]
    )
    assert cache.requests.request_times(0.0) == [100.0, 101.0, 161.0, 162.0]
    assert cache.requests.request_times(0.0, "list") == [100.0, 161.0]
    assert cache.requests.prune_requests(before=150.0) == 2
    assert cache.requests.request_times(0.0) == [161.0, 162.0]


def test_many_checks_of_both_kinds_count_like_the_log_does(tmp_path: Path) -> None:
    """A reservation counts all its checks at once (as an answer leaves up to 16 more): each
    must see its own window and bucket, whatever the mix and order."""
    log: list[tuple[float, str]] = []
    buckets = ("list", "search", "bulk")
    with Cache.open(tmp_path / "c.db") as cache:
        for step in range(300):
            at = float(step)
            checks = [
                LogCheck(
                    since=at - (7 * step + 3 * index) % 40,
                    limit=1 + (step * index) % 9,
                    bucket=None if (step + index) % 3 == 0 else buckets[index % 3],
                )
                for index in range(step % 19)
            ]
            bucket = buckets[step % 3]
            fits = all(
                sum(
                    1
                    for logged_at, logged in log
                    if logged_at >= check.since and check.bucket in (None, logged)
                )
                < check.limit
                for check in checks
            )
            assert cache.requests.reserve_request(at, bucket, checks) is fits
            if fits:
                log.append((at, bucket))
    assert 0 < len(log) < 300


def test_no_checks_always_reserves(cache: Cache) -> None:
    assert cache.requests.reserve_request(1.0, "x", [])
    assert cache.requests.request_times(1.0, "x") == [1.0]


WORKER = """
import sys
from pathlib import Path
from cache import Cache, LogCheck
cache = Cache.open(Path(sys.argv[1]))
checks = [LogCheck(since=0.0, limit=int(sys.argv[2]), bucket=None)]
log = cache.requests
taken = sum(log.reserve_request(float(i), "list", checks) for i in range(int(sys.argv[3])))
print(taken)
"""


def test_two_processes_never_exceed_the_limit_together(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    Cache.open(path).close()
    limit, attempts = 40, 60
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(path), str(limit), str(attempts)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    taken = [int(worker.communicate(timeout=60)[0]) for worker in workers]
    assert all(worker.returncode == 0 for worker in workers)
    assert sum(taken) == limit
    with Cache.open(path) as cache:
        assert len(cache.requests.request_times(0.0)) == limit


def test_the_log_is_a_private_file_beside_the_cache(tmp_path: Path) -> None:
    with Cache.open(tmp_path / "p.db") as cache:
        assert cache.requests.reserve_request(1.0, "list", [])
        log = tmp_path / "p.db.requests"
        files = [log, Path(f"{log}-wal")]
        assert [stat.S_IMODE(path.stat().st_mode) for path in files] == [0o600, 0o600]
        assert cache.integrity_check() == ["ok"]
    with closing(sqlite3.connect(tmp_path / "p.db")) as conn:
        found = conn.execute("SELECT name FROM sqlite_master WHERE name = 'request_log'")
        assert found.fetchall() == []


def test_a_reservation_does_not_wait_for_the_caches_write_lock(tmp_path: Path) -> None:
    """A pull stores pages on a writer thread while the event loop sends the next request."""
    with Cache.open(tmp_path / "p.db") as cache, closing(sqlite3.connect(cache.path)) as writer:
        writer.execute("PRAGMA busy_timeout = 0")
        writer.execute("BEGIN IMMEDIATE")
        assert cache.requests.reserve_request(
            1.0, "list", [LogCheck(since=0.0, limit=1, bucket=None)]
        )
        assert cache.requests.request_times(0.0) == [1.0]
        writer.execute("ROLLBACK")


def test_an_old_caches_log_table_is_dropped_on_open(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    Cache.open(path).close()
    with closing(sqlite3.connect(path)) as old:
        old.execute("CREATE TABLE request_log (id INTEGER PRIMARY KEY, at REAL, bucket TEXT)")
        old.execute("DELETE FROM _sqlite_migrations WHERE name = 'request_log_own_file'")
        old.commit()
    with Cache.open(path) as cache:
        assert cache.requests.reserve_request(1.0, "list", [])
    with closing(sqlite3.connect(path)) as reopened:
        found = reopened.execute("SELECT name FROM sqlite_master WHERE name = 'request_log'")
        assert found.fetchall() == []


def test_a_damaged_log_is_replaced_and_the_cache_kept(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    with Cache.open(path) as cache:
        cache.state.set("kept", 1)
        assert cache.requests.reserve_request(1.0, "list", [])
        log = requestlog.log_path(cache.path)
    log.write_bytes(b"this is not a database" * 100)
    Path(f"{log}-wal").unlink(missing_ok=True)
    with Cache.open(path) as cache:
        assert cache.state.get("kept") == 1
        assert cache.requests.request_times(0.0) == []
        assert cache.requests.reserve_request(2.0, "list", [])
        assert cache.integrity_check() == ["ok"]


def test_a_release_deletes_one_entry_whoever_logged_it(tmp_path: Path) -> None:
    """Two processes' caches log the same instant in the same bucket; giving one slot back
    deletes one of the two entries (they count alike in every window) and nothing else; a slot
    already given back, or pruned, deletes nothing."""
    path = tmp_path / "c.db"
    with Cache.open(path) as first, Cache.open(path) as second:
        assert first.requests.reserve_request(10.0, "list", [])
        assert second.requests.reserve_request(10.0, "list", [])
        assert second.requests.reserve_request(11.0, "list", [])
        assert first.requests.reserve_request(10.0, "search", [])
        assert first.requests.release_request(10.0, "list")
        assert second.requests.request_times(0.0) == [10.0, 10.0, 11.0]
        assert second.requests.request_times(0.0, "list") == [10.0, 11.0]
        assert second.requests.release_request(10.0, "list")
        assert not first.requests.release_request(10.0, "list")
        assert not first.requests.release_request(12.0, "list")
        assert first.requests.request_times(0.0) == [10.0, 11.0]
        assert first.requests.request_times(0.0, "search") == [10.0]
