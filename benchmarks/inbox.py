"""What the inbox's change log (cache.changelog) costs: the pull's time storing pages read
again unchanged, with and without the log, and the bytes an entry takes.

Prints a Markdown table (figure, measured, goal). Runs alternate with and without the log, on
the same cache of demo issues, so the load of the machine falls on both alike; the figure is
the median of each.

    .venv/bin/python benchmarks/inbox.py [--issues N] [--runs R]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

# Run as a script, this folder comes first on sys.path, where benchmarks/cache.py would shadow
# the cache package.
if Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

from cache import ME_STATE_KEY, Cache, Resource, changelog, records
from cache.resources import SPECS
from demo.data import fill, generate

NOW = datetime(2026, 11, 21, 15, 30, tzinfo=UTC)
ME = "usr_ada"


def restore_seconds(cache: Cache, pages: list[list[records.Prepared]], logged: bool) -> float:
    """Seconds to store every page again, in one transaction, as a pull re-reading them."""
    with cache.server._db.write() as conn:
        began = time.perf_counter()
        for page in pages:
            seen = changelog.watch(Resource.ISSUES, page, news=True) if logged else None
            records.apply_page(conn, SPECS[Resource.ISSUES], page, seen)
            changelog.note(conn, seen, time.time())
        return time.perf_counter() - began


def entry_bytes(cache: Cache, path: Path, issues: list[dict[str, object]]) -> tuple[int, int]:
    """Entries made by a colleague's priority change to each of the user's issues (up to
    the log's limit), and the bytes the table and its indexes take."""
    mine = [issue for issue in issues if issue.get("assignee") == ME][: changelog.KEEP_ENTRIES]
    for n, issue in enumerate(mine):
        priority = "urgent" if issue.get("priority") != "urgent" else "low"
        stamp = f"2027-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}.000000Z"
        cache.server.apply_page(
            Resource.ISSUES, [{**issue, "priority": priority, "updated_at": stamp}]
        )
    with sqlite3.connect(path) as conn:
        entries = conn.execute("SELECT count(*) FROM changes").fetchone()[0]
        size = conn.execute(
            "SELECT sum(pgsize) FROM dbstat "
            "WHERE name IN ('changes', 'changes_by_issue', 'changes_unread')"
        ).fetchone()[0]
    return int(entries), int(size)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--issues", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cache.db"
        with Cache.open(path) as cache:
            made = generate(args.issues, NOW)
            fill(cache, made)
            cache.state.set(ME_STATE_KEY, ME)
            spec = SPECS[Resource.ISSUES]
            pages = [
                records.prepare(spec, made.issues[at : at + 1000])
                for at in range(0, args.issues, 1000)
            ]
            timings: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(args.runs):
                for logged in (False, True):
                    timings[logged].append(restore_seconds(cache, pages, logged))
            entries, size = entry_bytes(cache, path, made.issues)
    without, with_log = (statistics.median(timings[flag]) for flag in (False, True))
    print("| figure | measured | goal |")
    print("|---|---|---|")
    print(
        f"| re-store {args.issues:,} unchanged issues, without the change log | {without:.2f} s | |"
    )
    print(
        f"| the same with the change log (median of {args.runs}) "
        f"| {with_log:.2f} s ({(with_log / without - 1) * 100:+.0f} %) | within noise |"
    )
    print(
        f"| bytes an entry takes, table and indexes ({entries:,} entries) "
        f"| {size // max(entries, 1)} B | at most some 300 KB in all |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
