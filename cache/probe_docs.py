"""The probe index: the text of the first issues in the list's order and of their comments,
in FTS5 tables of the connection's TEMP schema, which a search's first rows are matched
against (cache.hits decides which issues it holds, and when to bring it up to date).

A search's first rows need to know which of a few hundred issues match, not how many issues
do: matched against this small index, any search costs a fraction of a millisecond, where the
big one costs what its terms' doclists hold (a common prefix at 1,000,000 issues, 100-250 ms:
FTS5 3.40 merges every matching term's doclist before the first row, even for a rowid range).
Kept from one snapshot to the next, it serves every keystroke typed in it (issue 18).

TEMP tables belong to the connection, hence to one thread; writing them takes no lock on the
database, so reads can use them inside a read transaction. A transaction rolled back (a count
abandoned mid-way) takes their changes back with it, so every change counts one more
`generation`, which a caller remembering what the index holds checks first.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from cache.fts import TextQuery
from cache.resources import dumps
from cache.schema import TOKENIZER

_TABLES = (
    # Issue documents keep their text, so that a row can be deleted by its rowid when its
    # issue changes or leaves the first issues.
    f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.probe_docs USING fts5(body, detail=none, "
    f"tokenize='{TOKENIZER}')",
    # A comment's document (rowid: the comment's) says which issue it belongs to (`owner`, its
    # rid), so that a match needs no join and an issue's comments go with it.
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.probe_comment_docs "
    f"USING fts5(body, owner UNINDEXED, detail=none, tokenize='{TOKENIZER}')",
    "CREATE TEMP TABLE IF NOT EXISTS probe_generation "
    "(one INTEGER PRIMARY KEY CHECK (one = 1), generation INTEGER NOT NULL)",
)


def _ensure(conn: sqlite3.Connection) -> None:
    for sql in _TABLES:
        conn.execute(sql)


def generation(conn: sqlite3.Connection) -> int:
    """How many changes this connection made to the index, as its transaction sees them."""
    _ensure(conn)
    row = conn.execute("SELECT generation FROM temp.probe_generation").fetchone()
    return 0 if row is None else int(row[0])


def _changed(conn: sqlite3.Connection) -> int:
    return int(
        conn.execute(
            "INSERT INTO temp.probe_generation (one, generation) VALUES (1, 1) "
            "ON CONFLICT (one) DO UPDATE SET generation = generation + 1 RETURNING generation"
        ).fetchone()[0]
    )


def index_issues(
    conn: sqlite3.Connection, add: Sequence[int], drop: Sequence[int], *, afresh: bool
) -> frozenset[int]:
    """Index the text of the issues `add` (title and description, as `issues_fts` holds it)
    after deleting the documents of `drop` (or all of them, `afresh`); which of `add` exist."""
    _ensure(conn)
    if afresh:
        conn.execute("DELETE FROM temp.probe_docs")
    elif drop:
        conn.execute(
            "DELETE FROM temp.probe_docs WHERE rowid IN (SELECT value FROM json_each(?))",
            (dumps(sorted(drop)),),
        )
    wanted = dumps(sorted(add))
    # In rowid order: FTS5 writes out its pending terms whenever a rowid comes below the one
    # before (512 comments out of order took 70 ms instead of 4).
    added = conn.execute(
        "INSERT INTO temp.probe_docs (rowid, body) "
        "SELECT rid, coalesce(title, '') || char(10) || coalesce(description, '') FROM issues "
        "WHERE rid IN (SELECT value FROM json_each(?)) ORDER BY rid",
        (wanted,),
    ).rowcount
    existing = frozenset(add)
    if added != len(existing):
        existing = frozenset(
            int(row[0])
            for row in conn.execute(
                "SELECT rid FROM issues WHERE rid IN (SELECT value FROM json_each(?))", (wanted,)
            )
        )
    _changed(conn)
    return existing


def issue_docs(conn: sqlite3.Connection) -> int:
    """How many issue documents the index holds."""
    return int(conn.execute("SELECT count(*) FROM temp.probe_docs").fetchone()[0])


class CommentDocs:
    """What the index holds of comments: `count` documents, every comment of its issues up to
    the comments' highest rid `top`, as of the comments' count of rewrites `rewrites` (None in
    a file without it, which is then indexed afresh each time). A plain class: this module
    loads with the app's first frame, where each dataclass costs its build."""

    __slots__ = ("count", "rewrites", "top")

    def __init__(self, top: int, rewrites: int | None, count: int) -> None:
        self.top = top
        self.rewrites = rewrites
        self.count = count


def _comments_now(conn: sqlite3.Connection) -> tuple[int, int | None]:
    top = int(conn.execute("SELECT coalesce(max(rid), 0) FROM comments").fetchone()[0])
    try:
        row = conn.execute("SELECT n FROM rewrites WHERE tbl = 'comments'").fetchone()
    except sqlite3.OperationalError:
        return top, None  # a file before migration `comment_rewrites` (tests build those)
    return top, None if row is None else int(row[0])


# A comment's issue by a lookup per comment, not a join: the planner could otherwise walk the
# issues first and look each one's comments up in `comments_by_issue`, which during a cold
# load of comments, and after one cut short, is a stand-in on `rid` (cache/bulk_load.py): that
# scanned every comment once per issue (49,501 comments, 768 issues: 15 s for a search's first
# key after a pull of 100,000 was stopped). The list of issues' ids is one scan then.
_OWNER = "(SELECT i.rid FROM issues i WHERE i.id = c.issue_id)"
_OF_ISSUES = "c.issue_id IN (SELECT id FROM issues WHERE rid IN (SELECT value FROM json_each(?)))"


def index_comments(conn: sqlite3.Connection, owners: Sequence[int]) -> CommentDocs | None:
    """Index the comments of the issues `owners` in place of what the index held; None when
    it does not hold every one of them. This reads every comment of those issues (during a
    cold load of comments, every comment: 104-142 ms at 50,000), so it is done once, and the
    index then kept up to date (`update_comments`)."""
    _ensure(conn)
    top, rewrites = _comments_now(conn)
    conn.execute("DELETE FROM temp.probe_comment_docs")
    wanted = dumps(sorted(owners))
    indexed = conn.execute(
        "INSERT INTO temp.probe_comment_docs (rowid, body, owner) "
        f"SELECT c.rid, c.body, {_OWNER} FROM comments c WHERE {_OF_ISSUES} ORDER BY c.rid",
        (wanted,),
    ).rowcount
    _changed(conn)
    # A window served from an index missing some of its documents would miss rows, so the
    # index is used only when it holds every one (once, in the app's worker threads under a
    # debugging wrapper, these inserts indexed nothing: not understood, not seen since).
    expected = conn.execute(
        f"SELECT count(*) FROM comments c WHERE {_OF_ISSUES}", (wanted,)
    ).fetchone()[0]
    return CommentDocs(top, rewrites, indexed) if indexed == int(expected) else None


def update_comments(
    conn: sqlite3.Connection,
    held: CommentDocs,
    join: Sequence[int],
    leave: Sequence[int],
    stay: Sequence[int],
) -> CommentDocs | None:
    """Bring the comments `held` up to date for the issues `stay` (held before and now, each
    the same issue), `join` (new to the index, or changed) and `leave` (gone from it, or
    changed): the comments of `leave` deleted, all of `join`'s indexed, and of `stay`'s only
    those added since. None when that cannot be told (a comment rewritten, moved or deleted
    since: `rewrites` moved) or the index no longer holds what it should; the caller then
    indexes afresh (`index_comments`)."""
    _ensure(conn)
    top, rewrites = _comments_now(conn)
    if rewrites is None or rewrites != held.rewrites or top < held.top:
        return None
    removed = 0
    if leave:
        removed = conn.execute(
            "DELETE FROM temp.probe_comment_docs WHERE owner IN (SELECT value FROM json_each(?))",
            (dumps(sorted(leave)),),
        ).rowcount
    added = 0
    if join or top > held.top:
        added = conn.execute(
            "INSERT INTO temp.probe_comment_docs (rowid, body, owner) SELECT * FROM ("
            f"SELECT c.rid, c.body, {_OWNER} AS owner FROM comments c WHERE {_OF_ISSUES} "
            f"UNION ALL SELECT rid, body, owner FROM (SELECT c.rid, c.body, {_OWNER} AS owner "
            "FROM comments c WHERE c.rid > ?) "
            "WHERE owner IN (SELECT value FROM json_each(?))"
            ") ORDER BY 1",
            (dumps(sorted(join)), held.top, dumps(sorted(stay))),
        ).rowcount
    if removed or added:
        _changed(conn)
    count = held.count - removed + added
    held_now = conn.execute("SELECT count(*) FROM temp.probe_comment_docs").fetchone()[0]
    return CommentDocs(top, rewrites, count) if int(held_now) == count else None


def matches(conn: sqlite3.Connection, query: TextQuery) -> frozenset[int]:
    """The issues (rids) of the index that `query` matches by their own text, and those one of
    whose comments it matches."""
    found: list[int] = json.loads(
        conn.execute(
            "SELECT json_group_array(rid) FROM ("
            "SELECT rowid AS rid FROM temp.probe_docs WHERE probe_docs MATCH ? "
            "UNION ALL SELECT owner FROM temp.probe_comment_docs WHERE probe_comment_docs MATCH ?)",
            (query.expression, query.expression),
        ).fetchone()[0]
    )
    return frozenset(found)
