"""The sliding log of sent requests behind the client-side rate limiter, in a file of its own.

Every process of a profile (the TUI, a `sync` in another terminal) shares one key's limits, so
the log is a SQLite file beside the profile's cache and a reservation is one statement that
counts, compares and inserts. Two processes can never both take the last slot.
It is not a table of the cache because a request is logged just before it is sent: in the
cache, that would wait for whatever write transaction holds the cache's lock (a pull's group
of pages being stored), and requests would be paced by the writer instead of the limits.
The log holds no copy of server data, so it needs no migrations: its one table is created
where missing. Times are unix seconds, as the caller computes them.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from cache.db import Connector, translated
from cache.errors import CorruptCacheError
from cache.models import LogCheck
from cache.paths import COMPANION_SUFFIXES, ensure_private_file

SUFFIX = ".requests"
"""Appended to the cache file's name (`p.db` -> `p.db.requests`): the log belongs to that one
cache, and the name does not end in `.db`, so looking for a profile's cache finds one file."""

_SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS request_log (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    bucket TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS request_log_by_at ON request_log (at);
CREATE INDEX IF NOT EXISTS request_log_by_bucket ON request_log (bucket, at);
"""


def log_path(cache_path: Path) -> Path:
    """The request log of the cache at `cache_path`."""
    return cache_path.with_name(cache_path.name + SUFFIX)


def create(conn: sqlite3.Connection) -> None:
    """Create the table where missing (in one transaction, so concurrent openers agree)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in _SCHEMA_SQL.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("COMMIT")
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")


def reserve(conn: sqlite3.Connection, at: float, bucket: str, checks: Sequence[LogCheck]) -> bool:
    """Log `(at, bucket)` if every check counts fewer entries than its limit; run it outside
    any transaction (autocommit).

    Check and insert are one `INSERT … SELECT … WHERE` statement: SQLite takes the write lock
    before the statement reads, so two processes can never both take the last slot, and a
    reservation costs one statement instead of a transaction of four (it is paid before every
    request). The checks are a scalar subquery each, on an index: a request passes up to
    about 18 (the window, the day, and what recent answers said was left)."""
    params: list[float | str | int] = [at, bucket]
    for check in checks:
        params.extend((check.since,) if check.bucket is None else (check.bucket, check.since))
        params.append(check.limit)
    shape = tuple(check.bucket is not None for check in checks)
    return conn.execute(_reserve_sql(shape), params).rowcount == 1


@functools.lru_cache(maxsize=64)
def _reserve_sql(shape: tuple[bool, ...]) -> str:
    """The reserving statement for checks with (True) or without a bucket, in order."""
    counts = [
        "(SELECT count(*) FROM request_log WHERE bucket = ? AND at >= ?) < ?"
        if by_bucket
        else "(SELECT count(*) FROM request_log WHERE at >= ?) < ?"
        for by_bucket in shape
    ]
    where = f" WHERE {' AND '.join(counts)}" if counts else ""
    return f"INSERT INTO request_log (at, bucket) SELECT ?, ?{where}"


def release(conn: sqlite3.Connection, at: float, bucket: str) -> bool:
    """Delete one entry `(at, bucket)`, if any is left; run it outside any transaction.

    For a request that certainly never reached the server (the connection was refused): the
    server did not count it, so neither may the log, or an outage spends the budget. One
    statement, so it is atomic against every other process's reservations. Another process
    may have logged the same `(at, bucket)`; then either row goes, since two such entries
    count the same in every window. Nothing is deleted when the entry was pruned already."""
    deleted = conn.execute(
        "DELETE FROM request_log WHERE id = "
        "(SELECT id FROM request_log WHERE at = ? AND bucket = ? LIMIT 1)",
        (at, bucket),
    ).rowcount
    return deleted == 1


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


class RequestLog:
    """`Cache.requests`: the log as the rate limiter uses it (sync.ratelimit.RequestLog), on
    its own connection to its own file."""

    def __init__(self, connector: Connector) -> None:
        self._db = connector

    def reserve_request(self, at: float, bucket: str, checks: Sequence[LogCheck]) -> bool:
        """Atomically: if every check passes, log `(at, bucket)` and return True."""
        with translated():
            return reserve(self._db.conn(), at, bucket, checks)

    def release_request(self, at: float, bucket: str) -> bool:
        """Atomically delete one logged `(at, bucket)`: a request that never left."""
        with translated():
            return release(self._db.conn(), at, bucket)

    def request_times(self, since: float, bucket: str | None = None) -> list[float]:
        """Logged request times at or after `since`, ascending."""
        with self._db.read() as conn:
            return times(conn, since, bucket)

    def prune_requests(self, before: float) -> int:
        with self._db.write() as conn:
            return prune(conn, before)

    def integrity_check(self) -> list[str]:
        with self._db.read() as conn:
            return [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]

    def close(self) -> None:
        self._db.close()


def open_log(cache_path: Path) -> RequestLog:
    """The request log of the cache at `cache_path`, replaced when damaged: it holds no edits
    and no server data, only recent request times, which the server's rate-limit headers stand
    in for meanwhile."""
    path = log_path(cache_path)
    try:
        return RequestLog(_connect(path))
    except CorruptCacheError:
        for stale in (path, *(Path(f"{path}{suffix}") for suffix in COMPANION_SUFFIXES)):
            stale.unlink(missing_ok=True)
    return RequestLog(_connect(path))


def _connect(path: Path) -> Connector:
    ensure_private_file(path)
    connector = Connector(path)
    try:
        with translated():
            create(connector.conn())
    except BaseException:
        connector.close()
        raise
    return connector
