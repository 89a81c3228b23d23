"""kill -9 a writer over and over: the file stays sound and every acknowledged edit is there."""

from __future__ import annotations

import os
import random
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

from cache import Cache, Resource

ROOT = Path(__file__).resolve().parents[2]
KILLS = 20

WRITER = """
import sys
from pathlib import Path
from cache import Cache, Resource
cache = Cache.open(Path(sys.argv[1]))
base = int(sys.argv[2])
print("ready", flush=True)
for n in range(base, base + 100000):
    page = [{"id": f"iss_{n}_{i}", "title": f"t {n} {i}", "description": "words " * 40,
             "updated_at": f"2026-01-01T00:00:{n % 60:02d}.{i:06d}Z"} for i in range(150)]
    cache.server.apply_page(Resource.ISSUES, page)
    local = cache.outbox.create(Resource.ISSUES, {"title": f"edit {n}"})
    print(local, flush=True)
    cache.outbox.update(Resource.ISSUES, f"iss_{n}_0", {"title": f"renamed {n}"})
    print(f"iss_{n}_0", flush=True)
"""


def run_and_kill(path: Path, base: int, rnd: random.Random) -> list[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(base)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    reported: list[str] = []
    selector = selectors.DefaultSelector()
    selector.register(child.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + rnd.uniform(0.02, 0.4)
    while time.monotonic() < deadline:
        if selector.select(timeout=max(0.0, deadline - time.monotonic())):
            line = child.stdout.readline()
            if line:
                reported.append(line.strip())
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    reported += [line.strip() for line in child.stdout.read().splitlines()]
    selector.close()
    child.stdout.close()
    return reported


def test_sigkill_mid_transaction_loses_nothing_acknowledged(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    Cache.open(path).close()
    rnd = random.Random(11)
    reported: list[str] = []
    for kill in range(KILLS):
        reported += run_and_kill(path, kill * 1000, rnd)
    with Cache.open(path) as cache:
        assert cache.integrity_check() == ["ok"]
        entries = cache.outbox.entries()
        created = {e.record_id for e in entries}
        renamed = {e.target_id for e in entries if e.changes.get("title", "").startswith("renamed")}
        for name in reported:
            assert name in (created if name.startswith("local_") else renamed), name
        assert len({e.idempotency_key for e in entries}) == len(entries)
        assert cache.server.local_count(Resource.ISSUES) % 150 == 0
    assert sum(name.startswith("local_") for name in reported) >= KILLS // 2
