"""The database schema, as numbered migrations applied when a database is opened.

`PRAGMA user_version` records how many migrations a file has seen, so opening an older file
brings it up to date and opening a current one costs a single pragma read.

Stamps (`created_at`, `updated_at`, `deleted_at`, `expires_at`) are integer microseconds since
the epoch (see `server.timestamps`). Every listing query filters on `workspace_id` first, so each
table has one index per list order and per issue filter, all leading with the workspace (or with
a globally unique id, which implies it).
"""

from __future__ import annotations

import sqlite3

FTS_TRIGGERS = (
    """
    CREATE TRIGGER issues_fts_insert AFTER INSERT ON issues BEGIN
        INSERT INTO issues_fts (rowid, title, description)
        VALUES (new.seq, new.title, new.description);
    END
    """,
    """
    CREATE TRIGGER issues_fts_delete AFTER DELETE ON issues BEGIN
        INSERT INTO issues_fts (issues_fts, rowid, title, description)
        VALUES ('delete', old.seq, old.title, old.description);
    END
    """,
    """
    CREATE TRIGGER issues_fts_update AFTER UPDATE OF title, description ON issues BEGIN
        INSERT INTO issues_fts (issues_fts, rowid, title, description)
        VALUES ('delete', old.seq, old.title, old.description);
        INSERT INTO issues_fts (rowid, title, description)
        VALUES (new.seq, new.title, new.description);
    END
    """,
)
"""Keep the external-content search index in step with `issues`; `server.seed` drops and
recreates them around a bulk load so that the index is built once."""

FTS_TRIGGER_NAMES = ("issues_fts_insert", "issues_fts_delete", "issues_fts_update")

_SCHEMA_1 = """
CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    plan TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    last_stamp INTEGER NOT NULL,
    issue_counter INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE users (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX users_by_created ON users (workspace_id, created_at, id);
CREATE INDEX users_by_updated ON users (workspace_id, updated_at, id);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    user_id TEXT NOT NULL REFERENCES users (id),
    name TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    permissions TEXT NOT NULL,
    expires_at INTEGER,
    revoked_at INTEGER,
    created_at INTEGER NOT NULL
);

CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    state TEXT NOT NULL,
    lead TEXT REFERENCES users (id),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (workspace_id, key)
);
CREATE INDEX projects_by_created ON projects (workspace_id, created_at, id);
CREATE INDEX projects_by_updated ON projects (workspace_id, updated_at, id);

CREATE TABLE issues (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    number INTEGER NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    status TEXT NOT NULL,
    priority TEXT NOT NULL,
    assignee TEXT REFERENCES users (id),
    project_id TEXT REFERENCES projects (id),
    labels TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (workspace_id, number)
);
CREATE INDEX issues_by_created ON issues (workspace_id, created_at, id);
CREATE INDEX issues_by_updated ON issues (workspace_id, updated_at, id);
CREATE INDEX issues_by_status ON issues (workspace_id, status, created_at, id);
CREATE INDEX issues_by_priority ON issues (workspace_id, priority, created_at, id);
CREATE INDEX issues_by_assignee ON issues (assignee, created_at, id);
CREATE INDEX issues_by_project ON issues (project_id, created_at, id);

CREATE TABLE issue_labels (
    workspace_id TEXT NOT NULL,
    label TEXT NOT NULL,
    issue_seq INTEGER NOT NULL REFERENCES issues (seq) ON DELETE CASCADE,
    PRIMARY KEY (workspace_id, label, issue_seq)
) WITHOUT ROWID;
CREATE INDEX issue_labels_by_issue ON issue_labels (issue_seq);

CREATE TABLE comments (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    issue_id TEXT NOT NULL REFERENCES issues (id),
    body TEXT NOT NULL,
    author TEXT NOT NULL REFERENCES users (id),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX comments_by_created ON comments (workspace_id, created_at, id);
CREATE INDEX comments_by_updated ON comments (workspace_id, updated_at, id);
CREATE INDEX comments_by_issue ON comments (issue_id, created_at, id);

CREATE TABLE tombstones (
    workspace_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    deleted_at INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, kind, deleted_at, id)
) WITHOUT ROWID;

CREATE TABLE idempotency_keys (
    key_id TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status INTEGER NOT NULL,
    headers TEXT NOT NULL,
    body BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (key_id, idempotency_key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);

CREATE VIRTUAL TABLE issues_fts USING fts5 (
    title, description,
    content = 'issues', content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
);
"""

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (*(part for part in _SCHEMA_1.split(";") if part.strip()), *FTS_TRIGGERS),
)
"""One tuple of statements per schema version; `_SCHEMA_1` has no `;` inside a statement."""


def migrate(conn: sqlite3.Connection) -> None:
    """Bring the file up to the current schema, one transaction per migration.

    The version is read again inside each transaction, so two processes opening a new file at
    once do not both apply the same migration.
    """
    conn.execute("PRAGMA journal_mode = WAL")
    for number, statements in enumerate(MIGRATIONS, start=1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            if version < number:
                for statement in statements:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number}")
        except BaseException:
            conn.rollback()
            raise
        conn.execute("COMMIT")
