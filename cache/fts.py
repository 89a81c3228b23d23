"""Full-text search: turning what the user typed into a safe FTS5 query, evaluating it, and
keeping the FTS5 indexes in step with their tables.

User text never reaches FTS5's query parser as syntax. It is split into tokens by FTS5's own
tokenizer (through a TEMP FTS5 table and its `fts5vocab` view), each token is double-quoted,
so `"`, `*`, `(`, `NEAR`, `OR` are plain text, and the last one gets a prefix star for
search-as-you-type. Because every quoted string is exactly one token of the same tokenizer,
the indexes can use `detail=none` (no positions, so less to write), which rejects the
multi-token phrases a tokenizer of our own could produce on exotic scripts. The star is only
added from `MIN_PREFIX` characters on: a one- or two-letter prefix expands to most of the
vocabulary on every keystroke, so those short tokens match whole words.

A search is evaluated once per snapshot into `temp.fts_hits`, the rids of matching issues (by
title, description or a comment), which windows and counts then probe. The few issues that
local edits change are matched by the same FTS5 machinery over their effective text in
`temp.overlay_docs`, so the rule is identical for server and local rows.

The indexes are external-content tables kept current by statements issued in the same
transaction as the row changes, one statement per page rather than a trigger per row: FTS5
flushes its pending terms at every statement boundary, so with per-row triggers indexing
100,000 issues took about four times as long as one `INSERT ... SELECT` over the page
(9.8 s against 2.3 s when measured). `detail=none` and a 32 MB pending-terms hash (fewer
segments to merge during a big page) roughly halved that again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from cache.resources import ResourceSpec, dumps
from cache.schema import TOKENIZER

MIN_PREFIX = 3
HITS_TABLE = "temp.fts_hits"

_TEMP_TABLES = (
    "CREATE TEMP TABLE IF NOT EXISTS fts_hits (rid INTEGER PRIMARY KEY)",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.text_probe USING fts5(body, tokenize='{TOKENIZER}')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.text_probe_terms "
    "USING fts5vocab(temp, text_probe, instance)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.overlay_docs "
    f"USING fts5(body, detail=none, tokenize='{TOKENIZER}')",
)


def ensure_temp_tables(conn: sqlite3.Connection) -> None:
    """TEMP tables belong to the connection, hence to one thread; writing them takes no lock
    on the database, so reads can use them inside a read transaction."""
    for sql in _TEMP_TABLES:
        conn.execute(sql)


@dataclass(frozen=True, slots=True)
class TextQuery:
    words: tuple[str, ...]
    prefix: str | None

    @property
    def expression(self) -> str:
        """The FTS5 MATCH string: quoted terms, implicitly ANDed."""
        terms = [_quote(word) for word in self.words]
        if self.prefix is not None:
            terms.append(_quote(self.prefix) + "*")
        return " ".join(terms)


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def tokenize(conn: sqlite3.Connection, text: str) -> list[str]:
    """FTS5's own tokens of `text` (case-folded, diacritics removed), in order."""
    ensure_temp_tables(conn)
    conn.execute("DELETE FROM temp.text_probe")
    conn.execute("INSERT INTO temp.text_probe (rowid, body) VALUES (1, ?)", (text,))
    rows = conn.execute("SELECT term FROM temp.text_probe_terms ORDER BY offset")
    return [str(row[0]) for row in rows]


def parse(conn: sqlite3.Connection, text: str) -> TextQuery | None:
    """None when the text holds no token at all (then there is nothing to filter on)."""
    tokens = tokenize(conn, text) if text.strip() else []
    if not tokens:
        return None
    last = tokens[-1]
    if text[-1:].isspace() or len(last) < MIN_PREFIX:
        return TextQuery(tuple(dict.fromkeys(tokens)), None)
    words = tuple(dict.fromkeys(token for token in tokens[:-1] if token != last))
    return TextQuery(words, last)


def load_hits(conn: sqlite3.Connection, query: TextQuery) -> None:
    """Evaluate a search into `temp.fts_hits`: issues matching by their own text or by one of
    their comments."""
    ensure_temp_tables(conn)
    conn.execute(f"DELETE FROM {HITS_TABLE}")
    expression = query.expression
    conn.execute(
        f"INSERT INTO {HITS_TABLE} (rid) "
        "SELECT rowid FROM issues_fts WHERE issues_fts MATCH ? ORDER BY rowid",
        (expression,),
    )
    conn.execute(
        f"INSERT OR IGNORE INTO {HITS_TABLE} (rid) SELECT i.rid FROM comments_fts "
        "JOIN comments c ON c.rid = comments_fts.rowid JOIN issues i ON i.id = c.issue_id "
        "WHERE comments_fts MATCH ?",
        (expression,),
    )


def load_overlay_docs(conn: sqlite3.Connection, docs: Iterable[tuple[int, str]]) -> None:
    """Index the effective text of locally changed issues: `(doc id, text)` pairs."""
    ensure_temp_tables(conn)
    conn.execute("DELETE FROM temp.overlay_docs")
    conn.executemany("INSERT INTO temp.overlay_docs (rowid, body) VALUES (?, ?)", docs)


def overlay_matches(conn: sqlite3.Connection, query: TextQuery) -> set[int]:
    rows = conn.execute(
        "SELECT rowid FROM temp.overlay_docs WHERE overlay_docs MATCH ?", (query.expression,)
    )
    return {int(row[0]) for row in rows}


def delete_rows(conn: sqlite3.Connection, spec: ResourceSpec, rids: list[int]) -> None:
    """Remove rows' terms from the index; must run while the rows still hold the indexed text."""
    if spec.fts_table is None or not rids:
        return
    cols = ", ".join(spec.fts_columns)
    conn.execute(
        f"INSERT INTO {spec.fts_table} ({spec.fts_table}, rowid, {cols}) "
        f"SELECT 'delete', rid, {cols} FROM {spec.table} "
        "WHERE rid IN (SELECT value FROM json_each(?))",
        (dumps(rids),),
    )


def index_rows(conn: sqlite3.Connection, spec: ResourceSpec, rids: list[int]) -> None:
    if spec.fts_table is None or not rids:
        return
    cols = ", ".join(spec.fts_columns)
    conn.execute(
        f"INSERT INTO {spec.fts_table} (rowid, {cols}) SELECT rid, {cols} FROM {spec.table} "
        "WHERE rid IN (SELECT value FROM json_each(?))",
        (dumps(rids),),
    )


def index_range(conn: sqlite3.Connection, spec: ResourceSpec, first_rid: int) -> None:
    """Index every row from `first_rid` on: fresh rows get consecutive rids in a page."""
    if spec.fts_table is None:
        return
    cols = ", ".join(spec.fts_columns)
    conn.execute(
        f"INSERT INTO {spec.fts_table} (rowid, {cols}) SELECT rid, {cols} FROM {spec.table} "
        "WHERE rid >= ?",
        (first_rid,),
    )


def clear(conn: sqlite3.Connection, spec: ResourceSpec) -> None:
    if spec.fts_table is not None:
        conn.execute(f"INSERT INTO {spec.fts_table} ({spec.fts_table}) VALUES ('delete-all')")
