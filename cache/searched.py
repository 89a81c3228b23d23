"""Issues the server's search brought in ahead of the backfill (docs/sync.md#head-first).

While a head-first start's backfill is under way, a search typed in the list also asks the
server, and its hits are stored at once. Those the cache did not hold are remembered here,
so the list can mark them "from the server" until a pull reaches them: a page of the
backfill (or of the incremental pull, for one edited since) that holds the issue makes it
part of the cache's contiguous range, and the end of the backfill makes every issue so.
One row per issue, so a page's check is one indexed lookup per id, and nothing at all while
the table is empty (every pull that is not a backfill's).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from cache.resources import dumps


def note(conn: sqlite3.Connection, ids: Iterable[str]) -> None:
    """Remember `ids` as brought in by the server's search."""
    conn.executemany("INSERT OR IGNORE INTO searched (id) VALUES (?)", [(key,) for key in ids])


def held(conn: sqlite3.Connection, ids: list[str]) -> set[str]:
    """Which of `ids` the server copy holds (before a search's page is stored)."""
    rows = conn.execute(
        "SELECT id FROM issues WHERE id IN (SELECT value FROM json_each(?))", (dumps(ids),)
    )
    return {str(row[0]) for row in rows}


def reached(conn: sqlite3.Connection, ids: list[str]) -> None:
    """A pull stored `ids`: none of them is the search's alone any more."""
    if conn.execute("SELECT 1 FROM searched LIMIT 1").fetchone() is None:
        return
    conn.execute("DELETE FROM searched WHERE id IN (SELECT value FROM json_each(?))", (dumps(ids),))


def clear(conn: sqlite3.Connection) -> None:
    """The backfill is done (or the server copy reset): the cache holds every issue."""
    conn.execute("DELETE FROM searched")


def among(conn: sqlite3.Connection, ids: Iterable[str]) -> frozenset[str]:
    """Which of `ids` are the search's alone."""
    if conn.execute("SELECT 1 FROM searched LIMIT 1").fetchone() is None:
        return frozenset()
    rows = conn.execute(
        "SELECT id FROM searched WHERE id IN (SELECT value FROM json_each(?))",
        (dumps(list(ids)),),
    )
    return frozenset(str(row[0]) for row in rows)


def count(conn: sqlite3.Connection) -> int:
    """How many issues are the search's alone."""
    row = conn.execute("SELECT count(*) FROM searched").fetchone()
    return int(row[0])
