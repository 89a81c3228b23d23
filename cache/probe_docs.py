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
    # The documents' text is kept in plain TEMP tables the FTS5 indexes take their content
    # from: a document is deleted from the index with its text (an issue changed, or left
    # the first issues), and the whole index emptied at once ('delete-all'), where an FTS5
    # table keeping its own text deleted its documents one by one, tokenizing each again
    # (15-18 ms for 1,024 issues, as long as indexing them).
    "CREATE TEMP TABLE IF NOT EXISTS probe_doc_text (rid INTEGER PRIMARY KEY, body TEXT)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.probe_docs USING fts5(body, content='probe_doc_text', "
    f"content_rowid='rid', detail=none, tokenize='{TOKENIZER}')",
    # A comment's document (rowid: the comment's) says which issue it belongs to (`owner`, its
    # rid), so that a match needs no join through the comments and an issue's comments go
    # with it.
    "CREATE TEMP TABLE IF NOT EXISTS probe_comment_text "
    "(rid INTEGER PRIMARY KEY, owner INTEGER NOT NULL, body TEXT)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.probe_comment_docs USING fts5(body, "
    f"content='probe_comment_text', content_rowid='rid', detail=none, tokenize='{TOKENIZER}')",
    "CREATE TEMP TABLE IF NOT EXISTS probe_comment_new "
    "(rid INTEGER PRIMARY KEY, owner INTEGER NOT NULL, body TEXT)",
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


def _changed(conn: sqlite3.Connection) -> None:
    """Count one more change to the index (`generation`)."""
    conn.execute(
        "INSERT INTO temp.probe_generation (one, generation) VALUES (1, 1) "
        "ON CONFLICT (one) DO UPDATE SET generation = generation + 1"
    )


def index_issues(
    conn: sqlite3.Connection, add: Sequence[int], drop: Sequence[int], *, afresh: bool
) -> frozenset[int] | None:
    """Index the text of the issues `add` (title and description, as `issues_fts` holds it)
    after deleting the documents of `drop` (or all of them, `afresh`); which of `add` exist,
    or None when the index did not take every one of them."""
    _ensure(conn)
    if afresh:
        conn.execute("INSERT INTO temp.probe_docs (probe_docs) VALUES ('delete-all')")
        conn.execute("DELETE FROM temp.probe_doc_text")
    elif drop:
        _delete(conn, "probe_docs", "probe_doc_text", "rid", drop)
    wanted = dumps(sorted(add))
    added = conn.execute(
        "INSERT INTO temp.probe_doc_text (rid, body) "
        "SELECT rid, coalesce(title, '') || char(10) || coalesce(description, '') FROM issues "
        "WHERE rid IN (SELECT value FROM json_each(?))",
        (wanted,),
    ).rowcount
    # In rowid order: FTS5 writes out its pending terms whenever a rowid comes below the one
    # before (512 comments out of order took 70 ms instead of 4).
    indexed = conn.execute(
        "INSERT INTO temp.probe_docs (rowid, body) SELECT rid, body FROM temp.probe_doc_text "
        "WHERE rid IN (SELECT value FROM json_each(?)) ORDER BY rid",
        (wanted,),
    ).rowcount
    _changed(conn)
    # A window served from an index missing some of its documents would miss rows, so the
    # index is used only when it holds every one (once, in the app's worker threads under a
    # debugging wrapper, such inserts indexed nothing: not understood, not seen since).
    if indexed != added:
        return None
    if added == len(add):
        return frozenset(add)
    return frozenset(
        int(row[0])
        for row in conn.execute(
            "SELECT rid FROM issues WHERE rid IN (SELECT value FROM json_each(?))", (wanted,)
        )
    )


def _delete(
    conn: sqlite3.Connection, index: str, text: str, column: str, keys: Sequence[int]
) -> int:
    """Delete from `index` (and its `text` table) the documents whose `column` is in `keys`;
    how many."""
    chosen = f"{column} IN (SELECT value FROM json_each(?))"
    keyed = (dumps(sorted(keys)),)
    conn.execute(
        f"INSERT INTO temp.{index} ({index}, rowid, body) "
        f"SELECT 'delete', rid, body FROM temp.{text} WHERE {chosen} ORDER BY rid",
        keyed,
    )
    return int(conn.execute(f"DELETE FROM temp.{text} WHERE {chosen}", keyed).rowcount)


def issue_docs(conn: sqlite3.Connection) -> int:
    """How many issue documents the index holds."""
    return int(conn.execute("SELECT count(*) FROM temp.probe_doc_text").fetchone()[0])


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


def _index_comment_text(conn: sqlite3.Connection, select: str, params: Sequence[object]) -> int:
    """Index the comments `select` gives as (rid, owner, body); how many, or -1 when the
    index did not take every one of them. They pass through a table of their own, so that
    each is read from the comments once and indexed in rowid order."""
    conn.execute("DELETE FROM temp.probe_comment_new")
    added = conn.execute(
        f"INSERT INTO temp.probe_comment_new (rid, owner, body) {select}", params
    ).rowcount
    if not added:
        return 0
    conn.execute("INSERT INTO temp.probe_comment_text SELECT * FROM temp.probe_comment_new")
    indexed = conn.execute(
        "INSERT INTO temp.probe_comment_docs (rowid, body) "
        "SELECT rid, body FROM temp.probe_comment_new ORDER BY rid"
    ).rowcount
    return added if indexed == added else -1


def index_comments(conn: sqlite3.Connection, owners: Sequence[int]) -> CommentDocs | None:
    """Index the comments of the issues `owners` in place of what the index held; None when
    it does not hold every one of them. This reads every comment of those issues (during a
    cold load of comments, every comment: 104-142 ms at 50,000), so it is done once, and the
    index then kept up to date (`update_comments`)."""
    _ensure(conn)
    top, rewrites = _comments_now(conn)
    conn.execute("INSERT INTO temp.probe_comment_docs (probe_comment_docs) VALUES ('delete-all')")
    conn.execute("DELETE FROM temp.probe_comment_text")
    wanted = dumps(sorted(owners))
    indexed = _index_comment_text(
        conn, f"SELECT c.rid, {_OWNER}, c.body FROM comments c WHERE {_OF_ISSUES}", (wanted,)
    )
    _changed(conn)
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
    removed = (
        _delete(conn, "probe_comment_docs", "probe_comment_text", "owner", leave) if leave else 0
    )
    added = 0
    if join or top > held.top:
        added = _index_comment_text(
            conn,
            f"SELECT c.rid, {_OWNER}, c.body FROM comments c WHERE {_OF_ISSUES} UNION ALL "
            f"SELECT rid, owner, body FROM (SELECT c.rid, {_OWNER} AS owner, c.body "
            "FROM comments c WHERE c.rid > ?) WHERE owner IN (SELECT value FROM json_each(?))",
            (dumps(sorted(join)), held.top, dumps(sorted(stay))),
        )
        if added < 0:
            return None
    if removed or added:
        _changed(conn)
    count = held.count - removed + added
    held_now = conn.execute("SELECT count(*) FROM temp.probe_comment_text").fetchone()[0]
    return CommentDocs(top, rewrites, count) if int(held_now) == count else None


def matches(conn: sqlite3.Connection, query: TextQuery) -> frozenset[int]:
    """The issues (rids) of the index that `query` matches by their own text, and those one of
    whose comments it matches."""
    found: list[int] = json.loads(
        conn.execute(
            "SELECT json_group_array(rid) FROM ("
            "SELECT rowid AS rid FROM temp.probe_docs WHERE probe_docs MATCH ? UNION ALL "
            "SELECT t.owner FROM temp.probe_comment_text t WHERE t.rid IN "
            "(SELECT rowid FROM temp.probe_comment_docs WHERE probe_comment_docs MATCH ?))",
            (query.expression, query.expression),
        ).fetchone()[0]
    )
    return frozenset(found)
