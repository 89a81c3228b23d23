"""The sliding log of sent requests behind the client-side rate limiter.

Every process of a profile (the TUI, a `sync` in another terminal) shares one key's limits, so
the log lives in the profile's database and a reservation is one `BEGIN IMMEDIATE`
transaction: count, compare, insert. Two processes can never both take the last slot.
Times are server-clock unix seconds, as the caller computes them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from cache.models import LogCheck


def reserve(conn: sqlite3.Connection, at: float, bucket: str, checks: Sequence[LogCheck]) -> bool:
    for check in checks:
        if check.bucket is None:
            row = conn.execute(
                "SELECT count(*) FROM request_log WHERE at >= ?", (check.since,)
            ).fetchone()
        else:
            row = conn.execute(
                "SELECT count(*) FROM request_log WHERE bucket = ? AND at >= ?",
                (check.bucket, check.since),
            ).fetchone()
        if row[0] >= check.limit:
            return False
    conn.execute("INSERT INTO request_log (at, bucket) VALUES (?, ?)", (at, bucket))
    return True


def times(conn: sqlite3.Connection, since: float, bucket: str | None) -> list[float]:
    if bucket is None:
        rows = conn.execute(
            "SELECT at FROM request_log WHERE at >= ? ORDER BY at", (since,)
        ).fetchall()
    else:
        rows = conn.execute(
            "SELECT at FROM request_log WHERE bucket = ? AND at >= ? ORDER BY at",
            (bucket, since),
        ).fetchall()
    return [float(row[0]) for row in rows]


def prune(conn: sqlite3.Connection, before: float) -> int:
    return conn.execute("DELETE FROM request_log WHERE at < ?", (before,)).rowcount
