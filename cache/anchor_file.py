"""The anchors of the unfiltered list kept in the cache file, so that a new process starts
with them (issue 18: every CLI command and every app start walked to its first deep window
again, 17-77 ms of CPU at a million issues).

Table `issue_anchors` (migration `issue_anchors`) holds one row per order of the unfiltered
list (`<sort key> asc|desc`) and one for its number of server rows (`total`), each with the
revision of the issues table it describes (`issue_moves`'s last `seq` and `tag`, as
cache.anchors' shelf). A reader takes them as the in-memory shelf takes its own: brought to
its revision from the log, or left out when the log no longer holds theirs
(cache.anchors). Only a writer keeps them (cache.anchor_keeping, at the end of a pull's
pass over the issues): a read never writes the file.
"""

from __future__ import annotations

import json
import sqlite3

from cache.models import IssueSort

TOTAL = "total"
"""The row of the unfiltered list's number of server rows."""

Token = tuple[int, int]
Saved = tuple[Token, object]
"""A row's revision and what it keeps: `[[rows, [cells...]], ...]` for an order (by
position), an int for `TOTAL`."""


def name(sort: IssueSort) -> str:
    return f"{sort.key} {'desc' if sort.descending else 'asc'}"


def read(conn: sqlite3.Connection, book: str) -> Saved | None:
    """What the file keeps under `book`, None when nothing (or a file before the
    migration: tests build those by hand)."""
    try:
        row = conn.execute(
            "SELECT seq, tag, kept FROM issue_anchors WHERE book = ?", (book,)
        ).fetchone()
    except sqlite3.OperationalError:
        return None
    return None if row is None else ((int(row[0]), int(row[1])), json.loads(row[2]))


def revisions(conn: sqlite3.Connection) -> dict[str, Token]:
    """Each row's revision, without decoding what it keeps."""
    try:
        rows = conn.execute("SELECT book, seq, tag FROM issue_anchors").fetchall()
    except sqlite3.OperationalError:
        return {}
    return {str(book): (int(seq), int(tag)) for book, seq, tag in rows}


def read_all(conn: sqlite3.Connection) -> dict[str, Saved]:
    try:
        rows = conn.execute("SELECT book, seq, tag, kept FROM issue_anchors").fetchall()
    except sqlite3.OperationalError:
        return {}
    return {str(book): ((int(seq), int(tag)), json.loads(kept)) for book, seq, tag, kept in rows}


def write(conn: sqlite3.Connection, token: Token, kept: dict[str, object]) -> None:
    """Replace every row by `kept`, all at revision `token` (inside a write transaction)."""
    conn.execute("DELETE FROM issue_anchors")
    conn.executemany(
        "INSERT INTO issue_anchors (book, seq, tag, kept) VALUES (?, ?, ?, ?)",
        [
            (book, token[0], token[1], json.dumps(value, separators=(",", ":")))
            for book, value in kept.items()
        ],
    )
