"""A cold load: the first pull into an empty table, whose indexes are built once at its end.

Split from cache.records (which stores the pages): here is only what a load does to the
table's indexes before and after its pages, and giving back the pages that frees; and what
a big page or a reset does to the table's change log (`log_set_aside`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from cache import syncstate
from cache.models import JsonValue
from cache.resources import ResourceSpec, dumps
from cache.schema import MOVES_KEPT

BULK_LOAD_KEY = "bulk_load:"
"""sync_state key prefix (with the table) of a cold load in progress: the real indexes'
names and SQL, to be put back by `finish_bulk_load`."""
BULK_LOAD_INDEXES = ("issues_by_title", "comments_by_issue")
"""The indexes a cold load builds at its end: those a load in sync order scatters its rows
over most (by title; comments by issue). Measured on a 100,000-issue cold sync, deferring
the title index halved the time the pull waited on the writer (1.7 s to 0.85 s, mostly WAL
checkpoints) for a 0.3 s build at the end; deferring the other scattered ones too (number,
created, assignee, project) saved a little more waiting (0.65 s) but their build cost 1.2 s
at the end, where nothing overlaps it. The indexes that stay take a load's rows at a few
places, and keep their queries fast during the load."""


REPACKED_AFTER_LOAD = (
    "issues_by_status",
    "issues_by_priority",
    "issues_by_assignee",
    "issues_by_project",
)
"""The indexes a cold load keeps (their filters stay fast while it runs) and rebuilds at its
end (`finish_bulk_load`). Each lists its field, then `updated_key DESC`; a load in sync order
(`updated_at` ascending) puts every row at the front of its field's range, and each page that
splits there keeps half its space unused for good: at 100,000 issues these four took 48.7 MB
of which 23.5 MB unused, 240 B an issue (issue 18). Rebuilt by sorting, they come out full
(25.3 MB), for 1.4-2.0 s each at 100,000 on this 2-core machine at a load average of 13."""


def begin_bulk_load(conn: sqlite3.Connection, spec: ResourceSpec) -> bool:
    """Into an empty table, swap the indexes named in `BULK_LOAD_INDEXES` for stand-ins on
    `rid`, and record the real ones in the same transaction; True when the table is (still)
    in that state.

    A cold sync inserts in `updated_at` order, so an index sorted by anything else (title,
    above all) takes each group's rows at random places: every group rewrote most of its
    pages, in its commit and again in the WAL checkpoints, whose fsyncs stalled the writer
    for 0.3 s every few groups, and the pull with it. A stand-in on `rid` only grows at its
    end, and it keeps the index's name, so queries that name their index (`INDEXED BY`) still
    run, by scanning, while the load goes on. The record in sync_state is what makes this safe
    to interrupt: the next `finish_bulk_load`, whoever calls it, puts the real indexes back."""
    key = BULK_LOAD_KEY + spec.table
    if syncstate.get_state(conn, key) is not None:
        return True
    if conn.execute(f"SELECT 1 FROM {spec.table} LIMIT 1").fetchone() is not None:
        return False
    indexes = {
        str(name): str(sql)
        for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_schema "
            "WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL "
            "AND name IN (SELECT value FROM json_each(?)) ORDER BY name",
            (spec.table, dumps(list(BULK_LOAD_INDEXES))),
        )
    }
    if not indexes:
        return False
    state: dict[str, JsonValue] = {"indexes": dict(indexes)}
    syncstate.set_state(conn, key, state)
    for name in indexes:
        conn.execute(f'DROP INDEX "{name}"')
        conn.execute(f'CREATE INDEX "{name}" ON {spec.table} (rid)')
    return True


def finish_bulk_load(conn: sqlite3.Connection, spec: ResourceSpec) -> bool:
    """Put back the real indexes of a cold load (see `begin_bulk_load`), each built once
    from the table by sorting, and rebuild those it left half empty (`REPACKED_AFTER_LOAD`);
    False when no load was in progress."""
    key = BULK_LOAD_KEY + spec.table
    state = syncstate.get_state(conn, key)
    if not isinstance(state, dict) or not isinstance(state.get("indexes"), dict):
        return False
    indexes = state["indexes"]
    assert isinstance(indexes, dict)
    for name, sql in indexes.items():
        conn.execute(f'DROP INDEX IF EXISTS "{name}"')
        conn.execute(str(sql))
    kept = conn.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? "
        "AND name IN (SELECT value FROM json_each(?)) ORDER BY name",
        (spec.table, dumps(list(REPACKED_AFTER_LOAD))),
    ).fetchall()
    for (name,) in kept:
        conn.execute(f'REINDEX "{name}"')
    syncstate.set_state(conn, key, None)
    release_free_pages(conn)
    return True


BIG_PAGE_ROWS = 20_000
"""From this many new rows on, a page at least as large as its table's rows builds the
table's indexes after its inserts (`indexes_set_aside`). A pull's pages (100 records, 1,000 in
a cold load) never reach it."""


@contextmanager
def indexes_set_aside(conn: sqlite3.Connection, spec: ResourceSpec, rows: int) -> Iterator[bool]:
    """Insert `rows` new rows with the table's own indexes (not its primary key or UNIQUE
    constraints) dropped, and build them again after, by sorting, in the same transaction,
    when the page is big (`BIG_PAGE_ROWS`) and at least as large as what the table holds.

    Inserting a page into a dozen indexes puts each row at a random place in most of them;
    once those indexes outgrow the page cache (`db.CACHE_SIZE_KIB`), every insert reads back
    pages it had evicted and the transaction spills its dirty pages into the WAL again and
    again: one page of 1,000,000 issues took 18 minutes (a bare `executemany` into the same
    table 7 to 11), 200,000 took 90 µs of CPU an issue. Building an index from the stored
    rows sorts them once and writes each of its pages once. A cold load's stand-ins
    (`begin_bulk_load`) are put back as they were. The rows go in without the table's
    change-log triggers, one change logged for all (`log_set_aside`). Whether it set them
    aside is what the block is given: a page that is not must log its new rows
    (`log_inserts`)."""
    held = int(conn.execute(f"SELECT coalesce(max(rid), 0) FROM {spec.table}").fetchone()[0])
    if rows < BIG_PAGE_ROWS or rows < held:
        yield False
        return
    indexes = conn.execute(
        "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? "
        "AND sql IS NOT NULL ORDER BY name",
        (spec.table,),
    ).fetchall()
    for name, _ in indexes:
        conn.execute(f'DROP INDEX "{name}"')
    with log_set_aside(conn, spec.table):
        yield True
    for _, sql in indexes:
        conn.execute(str(sql))


AFRESH_SQL = (
    "INSERT INTO issue_moves (tag) VALUES (random())",
    "DELETE FROM issue_moves WHERE seq < (SELECT max(seq) FROM issue_moves)",
)
"""The one change `log_set_aside` logs for all it did not: a new revision, and the log
emptied before it, so that no shelf of anchors finds its own revision there and each starts
empty (cache.anchors; migration `issue_moves`)."""


LOGGED_TABLE = "issues"
"""The table whose changes `issue_moves` logs."""
INSERTS_SQL = (
    "INSERT INTO issue_moves (tag, rid, was) "
    "SELECT random(), rid, NULL FROM issues WHERE rid >= ? ORDER BY rid",
    f"DELETE FROM issue_moves WHERE seq <= (SELECT max(seq) FROM issue_moves) - {MOVES_KEPT}",
)
"""A page's new issues in the log, one row each as the updates' and deletes' triggers write
theirs, and the log pruned to its last `MOVES_KEPT` rows (migration `issue_moves`)."""


def log_inserts(conn: sqlite3.Connection, table: str, first: int) -> None:
    """Log the rows inserted into `table` from rid `first` on, if it is the logged table.

    An insert trigger did this, a row at a time: two statements for every issue a page
    brought, 17-32 µs an issue, which put a cold pull of 100,000 back over 1.3 times a bare
    loop of the same requests (1.39-1.45, 1.15-1.24 before the log; benchmarks/sync.py,
    benchmarks/RESULTS.md). Two statements for the page log the same rows."""
    if table != LOGGED_TABLE:
        return
    conn.execute(INSERTS_SQL[0], (first,))
    conn.execute(INSERTS_SQL[1])


@contextmanager
def log_set_aside(conn: sqlite3.Connection, table: str) -> Iterator[None]:
    """Write `table` with its triggers (the issues table's change log, migration
    `issue_moves`; the comments' count of rewrites, migration `comment_rewrites`) dropped,
    then create them again and log one change that starts every shelf of anchors afresh
    (`AFRESH_SQL`) and one rewrite of the table, in the same transaction.

    Logging a row at a time (the insert trigger `log_inserts` replaced) cost a page of
    100,000 issues 0.5-1.3 s of CPU beside the 3-4 s a bare `executemany` takes (issue 18); and
    `DELETE FROM issues` deleted and logged row by row instead of emptying the table whole.
    A page as big as its table changes more rows than anchors are ever repaired for
    (`anchors.MOVES_REPAIRED`), a reset leaves none of their rows: they would start afresh
    anyway. The triggers are back whether the writes succeed or not: created again on the
    way out while the transaction is open (a writer that goes on past a failure commits
    them), and restored with it by a rollback (SQLite's schema is transactional)."""
    triggers = conn.execute(
        "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ? ORDER BY name",
        (table,),
    ).fetchall()
    for name, _ in triggers:
        conn.execute(f'DROP TRIGGER "{name}"')
    try:
        yield
    finally:
        if triggers and conn.in_transaction:
            for _, sql in triggers:
                conn.execute(str(sql))
            for sql in AFRESH_SQL:
                conn.execute(sql)
            conn.execute("UPDATE rewrites SET n = n + 1 WHERE tbl = ?", (table,))


def release_free_pages(conn: sqlite3.Connection) -> None:
    """Give the file's free pages back to the file system, in a cache made with
    `auto_vacuum = INCREMENTAL` (older ones keep them for later growth). A cold load's index
    rebuilds free a fifth of the file (23.5 MB at 100,000 issues). Python's driver runs the
    pragma one step at a time, each freeing a page, hence the loop."""
    if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:
        return
    free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    while free:
        conn.execute("PRAGMA incremental_vacuum")
        left = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
        if left >= free:
            return
        free = left
