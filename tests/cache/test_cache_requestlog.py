"""The shared request log: reservations are atomic across processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cache import Cache, LogCheck

ROOT = Path(__file__).resolve().parents[2]


def test_a_reservation_passes_only_when_every_check_does(cache: Cache) -> None:
    minute = [LogCheck(since=100.0, limit=2, bucket=None)]
    assert cache.reserve_request(100.0, "list", minute)
    assert cache.reserve_request(101.0, "search", minute)
    assert not cache.reserve_request(102.0, "list", minute)
    assert cache.reserve_request(161.0, "list", [LogCheck(since=160.0, limit=2, bucket=None)])
    per_bucket = [LogCheck(since=0.0, limit=1, bucket="search")]
    assert not cache.reserve_request(162.0, "search", per_bucket)
    assert cache.reserve_request(162.0, "bulk", [LogCheck(since=0.0, limit=1, bucket="bulk")])
    assert cache.request_times(0.0) == [100.0, 101.0, 161.0, 162.0]
    assert cache.request_times(0.0, "list") == [100.0, 161.0]
    assert cache.prune_requests(before=150.0) == 2
    assert cache.request_times(0.0) == [161.0, 162.0]


def test_no_checks_always_reserves(cache: Cache) -> None:
    assert cache.reserve_request(1.0, "x", [])
    assert cache.request_times(1.0, "x") == [1.0]


WORKER = """
import sys
from pathlib import Path
from cache import Cache, LogCheck
cache = Cache.open(Path(sys.argv[1]))
checks = [LogCheck(since=0.0, limit=int(sys.argv[2]), bucket=None)]
taken = sum(cache.reserve_request(float(i), "list", checks) for i in range(int(sys.argv[3])))
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
        assert len(cache.request_times(0.0)) == limit
