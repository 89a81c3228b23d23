"""The database schema, as numbered migrations applied on open (`sqlite_utils.Migrations`).

Migrations are append-only and their SQL is written out literally: a migration that built its
SQL from today's constants would silently differ between old and new caches. A cache whose
migration table names a step this code does not know was written by a newer client and is
refused (`SchemaTooNewError`) rather than half-understood.

All pending steps run inside one `BEGIN IMMEDIATE` transaction, so two processes opening an
old cache at once cannot both migrate it.

A cache already at the current schema (every open but the first after an upgrade) is checked
with one query of sqlite_utils' own table, without importing sqlite_utils: that import alone
cost more than a whole `tracker-tui issues list` may take (docs/architecture.md#start-up).
"""

from __future__ import annotations

import functools
import json
import re
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from cache.errors import CacheOpenError, SchemaTooNewError

if TYPE_CHECKING:
    from sqlite_utils import Database, Migrations

MIGRATION_SET = "tracker_tui_cache"
MIGRATIONS_TABLE = "_sqlite_migrations"
"""Where `sqlite_utils.Migrations` records the steps applied, by set."""

TOKENIZER = "unicode61 remove_diacritics 2"

SERVER_COPY_SQL = f"""
CREATE TABLE issues (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    number INTEGER,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    status TEXT,
    priority TEXT,
    assignee TEXT,
    project_id TEXT,
    created_at TEXT,
    updated_at TEXT,
    record TEXT NOT NULL,
    status_rank INTEGER NOT NULL,
    priority_rank INTEGER NOT NULL,
    label_mask INTEGER NOT NULL
);
CREATE INDEX issues_by_updated
    ON issues (updated_at, rid, status_rank, priority_rank, assignee, project_id, label_mask);
CREATE INDEX issues_by_created
    ON issues (created_at, rid, status_rank, priority_rank, assignee, project_id, label_mask);
CREATE INDEX issues_by_number
    ON issues (number, rid, status_rank, priority_rank, assignee, project_id, label_mask);
CREATE INDEX issues_by_title
    ON issues (title COLLATE NOCASE, rid, status_rank, priority_rank, assignee, project_id,
        label_mask);
CREATE INDEX issues_by_status
    ON issues (status_rank, updated_at DESC, rid, priority_rank, assignee, project_id, label_mask);
CREATE INDEX issues_by_priority
    ON issues (priority_rank, updated_at DESC, rid, status_rank, assignee, project_id, label_mask);
CREATE INDEX issues_by_assignee
    ON issues (assignee, status_rank, priority_rank, project_id, label_mask);
CREATE INDEX issues_by_project
    ON issues (project_id, status_rank, priority_rank, assignee, label_mask);
CREATE TABLE issue_labels (
    label TEXT NOT NULL,
    issue INTEGER NOT NULL,
    PRIMARY KEY (label, issue)
) WITHOUT ROWID;
CREATE TABLE label_bits (label TEXT PRIMARY KEY, bit INTEGER UNIQUE) WITHOUT ROWID;
CREATE VIRTUAL TABLE issues_fts USING fts5(
    title, description, content='issues', content_rowid='rid', columnsize=0, detail=none,
    tokenize='{TOKENIZER}'
);
INSERT INTO issues_fts (issues_fts, rank) VALUES ('hashsize', 33554432);
CREATE TABLE comments (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    issue_id TEXT,
    body TEXT NOT NULL,
    author TEXT,
    created_at TEXT,
    updated_at TEXT,
    record TEXT NOT NULL
);
CREATE INDEX comments_by_issue ON comments (issue_id, created_at, rid);
CREATE VIRTUAL TABLE comments_fts USING fts5(
    body, content='comments', content_rowid='rid', columnsize=0, detail=none,
    tokenize='{TOKENIZER}'
);
CREATE TABLE projects (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    key TEXT,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    state TEXT,
    lead TEXT,
    created_at TEXT,
    updated_at TEXT,
    record TEXT NOT NULL
);
CREATE TABLE users (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    email TEXT,
    created_at TEXT,
    updated_at TEXT,
    record TEXT NOT NULL
);
CREATE TABLE workspaces (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    plan TEXT,
    created_at TEXT,
    updated_at TEXT,
    record TEXT NOT NULL
);
CREATE TABLE tombstones (
    resource TEXT NOT NULL,
    id TEXT NOT NULL,
    deleted_at TEXT,
    record TEXT NOT NULL,
    PRIMARY KEY (resource, id)
) WITHOUT ROWID;
CREATE TABLE cursors (
    key TEXT PRIMARY KEY,
    updated_at TEXT,
    ids TEXT NOT NULL DEFAULT '[]',
    swept_at REAL
) WITHOUT ROWID;
CREATE TABLE sync_state (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""

OUTBOX_SQL = """
CREATE TABLE outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    resource TEXT NOT NULL,
    record_id TEXT NOT NULL,
    server_id TEXT,
    parent_id TEXT,
    operation TEXT NOT NULL CHECK (operation IN ('create', 'update', 'delete')),
    base TEXT NOT NULL,
    changes TEXT NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    attempts INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL
        CHECK (state IN ('pending', 'sending', 'failed', 'conflict', 'done')),
    last_error TEXT,
    batch_id TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    sent_at REAL
);
CREATE INDEX outbox_by_state ON outbox (state, id);
CREATE INDEX outbox_by_record ON outbox (resource, record_id);
CREATE INDEX outbox_by_server_id ON outbox (resource, server_id);
CREATE INDEX outbox_by_parent ON outbox (parent_id);
CREATE INDEX outbox_by_batch ON outbox (batch_id);
CREATE TABLE id_map (
    local_id TEXT PRIMARY KEY,
    server_id TEXT NOT NULL,
    resource TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE conflicts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id INTEGER NOT NULL REFERENCES outbox (id) ON DELETE CASCADE,
    field TEXT NOT NULL,
    base TEXT NOT NULL,
    mine TEXT NOT NULL,
    theirs TEXT NOT NULL,
    created_at REAL NOT NULL,
    resolution TEXT CHECK (resolution IN ('mine', 'theirs')),
    resolved_at REAL
);
CREATE INDEX conflicts_by_entry ON conflicts (entry_id);
"""

REQUEST_LOG_SQL = """
CREATE TABLE request_log (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    bucket TEXT NOT NULL
);
CREATE INDEX request_log_by_at ON request_log (at);
CREATE INDEX request_log_by_bucket ON request_log (bucket, at);
"""


# Counts of a several-label filter hop along this index from one distinct mask to the next
# (a few hundred seeks) instead of testing the mask of every issue (see cache.query).
LABEL_MASK_INDEX_SQL = """
CREATE INDEX issues_by_label_mask ON issues (label_mask);
"""


# Each field's index carries the default order right after the field, so a filter on that
# field reads its matching rows as ranges already in order (see cache.filtering), and sorting
# by status or priority breaks ties in that same order.
FILTER_INDEXES_IN_DEFAULT_ORDER_SQL = """
DROP INDEX issues_by_status;
DROP INDEX issues_by_priority;
DROP INDEX issues_by_assignee;
DROP INDEX issues_by_project;
CREATE INDEX issues_by_status ON issues (status_rank, updated_at DESC, rid DESC, priority_rank,
    assignee, project_id, label_mask);
CREATE INDEX issues_by_priority ON issues (priority_rank, updated_at DESC, rid DESC,
    status_rank, assignee, project_id, label_mask);
CREATE INDEX issues_by_assignee ON issues (assignee, updated_at DESC, rid DESC, status_rank,
    priority_rank, project_id, label_mask);
CREATE INDEX issues_by_project ON issues (project_id, updated_at DESC, rid DESC, status_rank,
    priority_rank, assignee, label_mask);
"""


DRAFTS_SQL = """
CREATE TABLE drafts (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at REAL NOT NULL
) WITHOUT ROWID;
"""


MOVED_COLUMNS = (
    "rid",
    "number",
    "title",
    "status",
    "priority",
    "assignee",
    "project_id",
    "status_rank",
    "priority_rank",
    "updated_key",
    "created_key",
    "labels",
)
"""What `issue_moves` keeps of a row as it was: its sort and filter columns (`labels` from
`extra`)."""
_WAS = ", ".join(
    f"old.{name}" if name != "labels" else "old.extra -> 'labels'" for name in MOVED_COLUMNS
)
MOVES_KEPT = 8192
"""How many of the latest changes `issue_moves` keeps (older ones are pruned as rows come)."""
_MOVED = (
    "INSERT INTO issue_moves (tag, rid, was) VALUES (random(), {rid}, {was}); "
    f"DELETE FROM issue_moves WHERE seq = (SELECT max(seq) FROM issue_moves) - {MOVES_KEPT};"
)
ISSUE_MOVES_SQL = f"""
CREATE TABLE issue_moves (seq INTEGER PRIMARY KEY, tag INTEGER NOT NULL, rid INTEGER, was TEXT);
INSERT INTO issue_moves (tag) VALUES (random());
CREATE TRIGGER issue_moved_in AFTER INSERT ON issues BEGIN
    {_MOVED.format(rid="new.rid", was="NULL")}
END;
CREATE TRIGGER issue_moved AFTER UPDATE ON issues BEGIN
    {_MOVED.format(rid="old.rid", was=f"json_array({_WAS})")}
    INSERT INTO issue_moves (tag, rid) SELECT random(), new.rid WHERE new.rid IS NOT old.rid;
END;
CREATE TRIGGER issue_moved_out AFTER DELETE ON issues BEGIN
    {_MOVED.format(rid="old.rid", was=f"json_array({_WAS})")}
END;
"""

COMMENT_REWRITES_SQL = """
CREATE TABLE rewrites (tbl TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO rewrites (tbl, n) VALUES ('comments', 0);
CREATE TRIGGER comment_rewritten AFTER UPDATE OF issue_id, body ON comments BEGIN
    UPDATE rewrites SET n = n + 1 WHERE tbl = 'comments';
END;
CREATE TRIGGER comment_gone AFTER DELETE ON comments BEGIN
    UPDATE rewrites SET n = n + 1 WHERE tbl = 'comments';
END;
"""


def _script(sql: str) -> Callable[[Database], None]:
    def step(db: Database) -> None:
        db.executescript(sql)

    return step


OLD_STATE_CHECK = "CHECK (state IN ('pending', 'sending', 'failed', 'conflict', 'done'))"
NEW_STATE_CHECK = "CHECK (state IN ('pending', 'sending', 'failed', 'conflict', 'done', 'unsure'))"


def _outbox_unsure_state(db: Database) -> None:
    """Allow the `unsure` state: SQLite cannot change a CHECK in place, so the outbox table is
    rebuilt (SQLite's documented procedure) from the table as this very file holds it, with
    only the CHECK changed: columns another step added survive, in any order of steps.

    One statement at a time inside the migration's transaction (`executescript` would commit
    first, and a crash halfway would lose the conflicts kept aside). `conflicts` refers to the
    outbox with ON DELETE CASCADE, so it is kept aside and dropped first: dropping the outbox
    under it would delete every conflict. The AUTOINCREMENT high-water marks are restored, so
    no entry number is ever given twice.
    """
    conn = db.conn
    tables = {"outbox": _schema_of(conn, "outbox"), "conflicts": _schema_of(conn, "conflicts")}
    table_sql, _ = tables["outbox"]
    if OLD_STATE_CHECK not in table_sql:
        raise CacheOpenError("the outbox table is not the one this step knows how to rebuild")
    statements = [
        "CREATE TEMP TABLE kept_sequence AS SELECT name, seq FROM sqlite_sequence "
        "WHERE name IN ('outbox', 'conflicts')",
        "CREATE TEMP TABLE kept_conflicts AS SELECT * FROM conflicts",
        "DROP TABLE conflicts",
        table_sql.replace("CREATE TABLE outbox", "CREATE TABLE outbox_next", 1).replace(
            OLD_STATE_CHECK, NEW_STATE_CHECK
        ),
        "INSERT INTO outbox_next SELECT * FROM outbox",
        "DROP TABLE outbox",
        "ALTER TABLE outbox_next RENAME TO outbox",
        *tables["outbox"][1],
        tables["conflicts"][0],
        "INSERT INTO conflicts SELECT * FROM temp.kept_conflicts",
        *tables["conflicts"][1],
        "DELETE FROM sqlite_sequence WHERE name IN ('outbox', 'conflicts')",
        "INSERT INTO sqlite_sequence (name, seq) SELECT name, seq FROM temp.kept_sequence",
        "DROP TABLE temp.kept_conflicts",
        "DROP TABLE temp.kept_sequence",
        # Records made by a local create are looked up by server id when a lost answer is
        # reconciled (a record is the result of at most one local write).
        "CREATE INDEX id_map_by_server ON id_map (resource, server_id)",
    ]
    for statement in statements:
        conn.execute(statement)


def _schema_of(conn: sqlite3.Connection, table: str) -> tuple[str, list[str]]:
    """A table's CREATE statement and those of its own indexes, as the file holds them."""
    rows = conn.execute(
        "SELECT type, sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL "
        "AND type IN ('table', 'index') ORDER BY type DESC, name",
        (table,),
    ).fetchall()
    [created] = [sql for kind, sql in rows if kind == "table"]
    return str(created), [str(sql) for kind, sql in rows if kind == "index"]


RECORDS_STORED_ONCE_COLUMNS = {
    "issues": (
        "number",
        "title",
        "description",
        "status",
        "priority",
        "assignee",
        "project_id",
        "created_at",
        "updated_at",
    ),
    "comments": ("issue_id", "body", "author", "created_at", "updated_at"),
    "projects": ("key", "name", "description", "state", "lead", "created_at", "updated_at"),
    "users": ("name", "email", "created_at", "updated_at"),
    "workspaces": ("name", "plan", "created_at", "updated_at"),
}
"""The columns of each server table that hold a member of the record under the member's
name, as they were when `records_stored_once` was written."""

RECORDS_STORED_ONCE_BATCH = 10000


def _records_stored_once(db: Database) -> None:
    """`record` (the whole server record as JSON) becomes `extra`: the record without its id
    and without each member its column holds as that very value (not an empty string), which
    `cache.resources.ResourceSpec.record_of` puts back. Rows are rewritten in place, by rid,
    in batches; the pages this frees are reused as the cache grows."""
    conn = db.conn
    for table, columns in RECORDS_STORED_ONCE_COLUMNS.items():
        conn.execute(f"ALTER TABLE {table} RENAME COLUMN record TO extra")
        select = (
            f"SELECT rid, id, {', '.join(columns)}, extra FROM {table} "
            f"WHERE rid > ? ORDER BY rid LIMIT {RECORDS_STORED_ONCE_BATCH}"
        )
        last = -(1 << 63)
        while rows := conn.execute(select, (last,)).fetchall():
            conn.executemany(
                f"UPDATE {table} SET extra = ? WHERE rid = ?",
                [(_extra_of(columns, row[1:]), row[0]) for row in rows],
            )
            last = rows[-1][0]


def _extra_of(columns: tuple[str, ...], row: tuple[object, ...]) -> str:
    """`row` is the id, the `columns` and the record's JSON."""
    record = json.loads(str(row[-1]))
    if not isinstance(record, dict):
        record = {}
    if record.get("id") == row[0]:
        del record["id"]
    for member, cell in zip(columns, row[1:-1], strict=True):
        value = record.get(member)
        if value is not None and value != "" and type(value) is type(cell) and value == cell:
            del record[member]
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


TIMESTAMP_KEY_INDEXES_SQL = """
CREATE INDEX issues_by_updated
    ON issues (updated_key, rid, status_rank, priority_rank, assignee, project_id, label_mask);
CREATE INDEX issues_by_created
    ON issues (created_key, rid, status_rank, priority_rank, assignee, project_id, label_mask);
CREATE INDEX issues_by_status ON issues (status_rank, updated_key DESC, rid DESC, priority_rank,
    assignee, project_id, label_mask);
CREATE INDEX issues_by_priority ON issues (priority_rank, updated_key DESC, rid DESC,
    status_rank, assignee, project_id, label_mask);
CREATE INDEX issues_by_assignee ON issues (assignee, updated_key DESC, rid DESC, status_rank,
    priority_rank, project_id, label_mask);
CREATE INDEX issues_by_project ON issues (project_id, updated_key DESC, rid DESC, status_rank,
    priority_rank, assignee, label_mask);
"""
"""The indexes that ordered by `created_at` or `updated_at` text, ordering by the key columns
instead (the same columns otherwise)."""

TIMESTAMP_KEY_BATCH = 10000

_STAMP_V1 = re.compile(r"[0-9]{4}-[01][0-9]-[0-3][0-9]T[012][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9]{6}Z")


def _stamp_order_v1(stamp: object) -> object:
    """`cache.resources.stamp_order` as it was when `issue_timestamp_keys` was written (a step
    must not change what it writes when that code does; a test holds the two equal)."""
    if type(stamp) is not str or _STAMP_V1.fullmatch(stamp) is None:
        return stamp
    key = int(stamp[0:4])
    for start, radix in ((5, 20), (8, 40), (11, 30), (14, 60), (17, 70)):
        key = key * radix + int(stamp[start : start + 2])
    return key * 1_000_000 + int(stamp[20:26])


def _issue_timestamp_keys(db: Database) -> None:
    """The six indexes that order issues by time hold an 8-byte integer key of each timestamp
    (`created_key`, `updated_key`) instead of its 27-byte text: the text columns stay as they
    were, for every read and comparison of the values themselves. The key columns are declared
    without a type, so a value that is not a timestamp is kept as the text it is.

    The indexes are dropped first, so filling the keys rewrites only the rows, and built again
    once at the end, sorted."""
    conn = db.conn
    for index in (
        "issues_by_updated",
        "issues_by_created",
        "issues_by_status",
        "issues_by_priority",
        "issues_by_assignee",
        "issues_by_project",
    ):
        conn.execute(f"DROP INDEX {index}")
    conn.execute("ALTER TABLE issues ADD COLUMN created_key")
    conn.execute("ALTER TABLE issues ADD COLUMN updated_key")
    select = (
        "SELECT rid, created_at, updated_at FROM issues WHERE rid > ? ORDER BY rid "
        f"LIMIT {TIMESTAMP_KEY_BATCH}"
    )
    last = -(1 << 63)
    while rows := conn.execute(select, (last,)).fetchall():
        conn.executemany(
            "UPDATE issues SET created_key = ?, updated_key = ? WHERE rid = ?",
            [
                (_stamp_order_v1(created), _stamp_order_v1(updated), rid)
                for rid, created, updated in rows
            ],
        )
        last = rows[-1][0]
    for statement in TIMESTAMP_KEY_INDEXES_SQL.split(";"):
        if statement.strip():
            conn.execute(statement)


UNKNOWN_CHOICE_RANKS = {"status": 6, "priority": 5}
"""The rank every value the field table does not list shares, by choice field, as the step
`issue_unknown_choices` indexed them (a test holds them equal to
`cache.resources.unknown_rank`)."""

STEPS: tuple[tuple[str, Callable[[Database], None]], ...] = (
    ("0001_server_copy", _script(SERVER_COPY_SQL)),
    ("0002_outbox", _script(OUTBOX_SQL)),
    ("0003_request_log", _script(REQUEST_LOG_SQL)),
    ("0004_label_mask_index", _script(LABEL_MASK_INDEX_SQL)),
    # An attempted create known not to be on the server (refused before it acted, or looked
    # for and not found): resent without looking again, even by a later push run.
    (
        "push_outbox_not_applied",
        _script("ALTER TABLE outbox ADD COLUMN not_applied INTEGER NOT NULL DEFAULT 0;"),
    ),
    # The request log moved to a file of its own (see cache.requestlog). Its old entries are
    # not carried over: the server's rate-limit headers cover the minutes they counted.
    ("request_log_own_file", _script("DROP TABLE IF EXISTS request_log;")),
    ("filter_indexes_in_default_order", _script(FILTER_INDEXES_IN_DEFAULT_ORDER_SQL)),
    ("outbox_unsure_state", _outbox_unsure_state),
    # A create that may have made one of several records: those records, for the user to
    # pick from (`suspects`); and what the cache held like it when it was last sent (`seen`):
    # a record seen before an attempt cannot be its result.
    (
        "outbox_suspects_and_seen",
        _script(
            "ALTER TABLE outbox ADD COLUMN suspects TEXT;\nALTER TABLE outbox ADD COLUMN seen TEXT;"
        ),
    ),
    # The part of an entry split off to be sent at once keeps that entry's place in the
    # queue (`cache.outbox.QUEUE_ORDER`), ahead of later writes of the same record.
    ("outbox_place", _script("ALTER TABLE outbox ADD COLUMN place INTEGER;")),
    # What the user typed and has not sent (cache.drafts): kept as they type.
    ("drafts", _script(DRAFTS_SQL)),
    # The bulk request an entry's last attempt went out in (`sent_in`, its key) and that
    # request's body: a create whose answer was lost is asked of that key, with that body,
    # where the server honours keys (cache.suspects).
    (
        "outbox_sent_in",
        _script(
            "ALTER TABLE outbox ADD COLUMN sent_in TEXT;\n"
            "CREATE TABLE bulk_requests (key TEXT PRIMARY KEY, body TEXT NOT NULL, "
            "entries TEXT NOT NULL) WITHOUT ROWID;"
        ),
    ),
    # Each record once: its members in their columns, the rest in `extra` (issue 18: the
    # record's JSON copy was half the cache, see docs/architecture.md#the-cache-file).
    ("records_stored_once", _records_stored_once),
    # The inbox's change log (cache.changelog): what the pull found changed in the issues
    # that concern the user, a row per field or new comment, pruned to a month and 2,000 rows.
    (
        "inbox_change_log",
        _script(
            "CREATE TABLE changes (id INTEGER PRIMARY KEY, issue_id TEXT NOT NULL, "
            "kind TEXT NOT NULL, field TEXT NOT NULL, old TEXT, new TEXT, "
            "elided INTEGER NOT NULL DEFAULT 0, at TEXT, who TEXT, seen_at REAL NOT NULL, "
            "read INTEGER NOT NULL DEFAULT 0);\n"
            "CREATE INDEX changes_by_issue ON changes (issue_id, id);\n"
            "CREATE INDEX changes_unread ON changes (read, id);"
        ),
    ),
    # Issues the server's search brought in ahead of the backfill (cache.searched), marked in
    # the list until a pull reaches them.
    (
        "searched_issues",
        _script("CREATE TABLE searched (id TEXT PRIMARY KEY) WITHOUT ROWID;"),
    ),
    # Issues ordered by time in their indexes by an integer key of each timestamp, not its
    # text (issue 18: 114 B an issue, see docs/architecture.md#the-cache-file).
    ("issue_timestamp_keys", _issue_timestamp_keys),
    # The values of a choice field the field table does not list (all ranked last), found by
    # hopping along a small index of those issues alone (issue 18: the status picker read
    # 20,000 table rows of 1,000,000 issues, 65-112 ms, and filled the page cache with them).
    # The ranks are those of today's table (cache.resources.unknown_rank); should the table
    # grow, reads no longer match the predicate and scan as before, until a step rebuilds it.
    (
        "issue_unknown_choices",
        _script(
            "".join(
                f"CREATE INDEX issues_unknown_{member} ON issues ({member}_rank, {member}) "
                f"WHERE {member}_rank = {rank};\n"
                for member, rank in UNKNOWN_CHOICE_RANKS.items()
            )
        ),
    ),
    # The log of changes to the issues table, the last 8,192 rows, each with the row's sort
    # and filter columns as they were (cache.anchors: positions kept along the sort indexes
    # follow the table through it; issue 18). Its last row is the table's revision; a random
    # tag tells a change rolled back from the one that took its number. A step that rebuilds
    # `issues` must create these triggers again.
    ("issue_moves", _script(ISSUE_MOVES_SQL)),
    # The unfiltered list's anchors and number of server rows, kept by the pull at the end of
    # its pass over the issues, each with the `issue_moves` revision it describes, so that a
    # new process starts with them (cache.anchor_file; issue 18: its first deep window of each
    # order walked half an index, 17-77 ms of CPU at a million issues).
    (
        "issue_anchors",
        _script(
            "CREATE TABLE issue_anchors (book TEXT PRIMARY KEY, seq INTEGER NOT NULL, "
            "tag INTEGER NOT NULL, kept TEXT NOT NULL) WITHOUT ROWID;"
        ),
    ),
    # How many times a comment's text or issue changed or a comment went, in one counter
    # (cache.fts.comment_rewrites): while it stands still, the comments since a reader last
    # looked are those above the highest rid it saw, so the search's probe index of the first
    # issues' comments is kept and given the new ones alone (issue 18: rebuilt at every page
    # of a first pull's comments, by a scan of every comment, 104-142 ms a keystroke).
    # Inserts, most of a pull's writes, pay nothing.
    ("comment_rewrites", _script(COMMENT_REWRITES_SQL)),
    # A page's new issues are logged in `issue_moves` by the page's writer, in two statements
    # (cache.bulk_load.log_inserts), not by a trigger that ran two for every row (a cold pull
    # of 100,000 paid 17-32 µs an issue for it).
    ("issue_inserts_logged", _script("DROP TRIGGER issue_moved_in;")),
)
KNOWN_STEPS = tuple(name for name, _ in STEPS)


@functools.cache
def migrations() -> Migrations:
    """The steps as sqlite_utils applies them (imported only when one is pending)."""
    from sqlite_utils import Migrations

    found = Migrations(MIGRATION_SET)
    for name, step in STEPS:
        found(name=name)(step)
    return found


def __getattr__(name: str) -> Migrations:
    """`MIGRATIONS`, built on first use (tests apply some of the steps by hand)."""
    if name == "MIGRATIONS":
        return migrations()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def database(conn: sqlite3.Connection) -> Database:
    from sqlite_utils import Database

    return Database(conn, execute_plugins=False, recursive_triggers=False)


def applied(conn: sqlite3.Connection) -> list[str]:
    """The steps the file records as applied, in order (none in a new file)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (MIGRATIONS_TABLE,)
    ).fetchone()
    if exists is None:
        return []
    rows = conn.execute(
        f"SELECT name FROM [{MIGRATIONS_TABLE}] WHERE migration_set = ? ORDER BY rowid",
        (MIGRATION_SET,),
    ).fetchall()
    return [str(name) for (name,) in rows]


def migrate(conn: sqlite3.Connection) -> None:
    """Bring the cache to the current schema, refusing one written by a newer client."""
    done = applied(conn)
    unknown = [name for name in done if name not in KNOWN_STEPS]
    if unknown:
        raise SchemaTooNewError(unknown)
    if set(KNOWN_STEPS) <= set(done):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        migrations().apply(database(conn))
        conn.execute("COMMIT")
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
