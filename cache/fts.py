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
title, description or a comment), which windows and counts then probe; when a window only
needs its first rows, only the matches among a few hundred probed issues are stored and the
total is counted in the same pass (`load_probed_hits`, chosen by cache.hits). A prefix is
spelled out as the index's own terms where FTS5's prefix evaluation would cost more
(`matching`). The few issues that local edits change are matched by the same FTS5 machinery
over their effective text in `temp.overlay_docs`, so the rule is identical for server and
local rows.

The indexes are external-content tables kept current by statements issued in the same
transaction as the row changes, one statement per page rather than a trigger per row: FTS5
flushes its pending terms at every statement boundary, so with per-row triggers indexing
100,000 issues took about four times as long as one `INSERT ... SELECT` over the page
(9.8 s against 2.3 s when measured). `detail=none` and a 32 MB pending-terms hash (fewer
segments to merge during a big page) roughly halved that again.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence

from cache.resources import ResourceSpec, dumps
from cache.schema import TOKENIZER
from issuefields.frozen import Frozen

MIN_PREFIX = 3
MAX_EXPANSION = 32
HITS_TABLE = "temp.fts_hits"
PROBE_TABLE = "temp.fts_probe"
COMMENT_PROBE_TABLE = "temp.fts_by_comment"
ISSUE_TERMS = "temp.issues_fts_terms"
COMMENT_TERMS = "temp.comments_fts_terms"

_TEMP_TABLES = (
    "CREATE TEMP TABLE IF NOT EXISTS fts_hits (rid INTEGER PRIMARY KEY)",
    "CREATE TEMP TABLE IF NOT EXISTS fts_probe (rid INTEGER PRIMARY KEY)",
    "CREATE TEMP TABLE IF NOT EXISTS fts_by_comment (rid INTEGER PRIMARY KEY)",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {ISSUE_TERMS} USING fts5vocab(main, issues_fts, row)",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {COMMENT_TERMS} USING fts5vocab(main, comments_fts, row)",
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


class TextQuery(Frozen):
    """The text part of a search in FTS5's tokens. Beyond the words (all must match, the
    `prefix` as a prefix), the parts cache.search_text evaluates: `excluded` expressions
    whose matches are left out, `phrases` (token runs) that must appear in order, the issue
    `number` that matches too, and `label_terms`, each term with the labels it matches (an
    issue carrying one matches that term)."""

    _fields = ("words", "prefix", "excluded", "phrases", "number", "only_number", "label_terms")
    __slots__ = _fields
    words: tuple[str, ...]
    prefix: str | None
    excluded: tuple[str, ...]
    phrases: tuple[tuple[str, ...], ...]
    number: int | None
    only_number: bool
    label_terms: tuple[tuple[str, tuple[str, ...]], ...]

    def __init__(
        self,
        words: tuple[str, ...],
        prefix: str | None,
        excluded: tuple[str, ...] = (),
        phrases: tuple[tuple[str, ...], ...] = (),
        number: int | None = None,
        only_number: bool = False,
        label_terms: tuple[tuple[str, tuple[str, ...]], ...] = (),
    ) -> None:
        self._init(words, prefix, excluded, phrases, number, only_number, label_terms)

    @property
    def positive(self) -> bool:
        """Whether there are words to match (else every issue but the excluded ones matches,
        or only the number)."""
        return bool(self.words) or self.prefix is not None

    @property
    def plain(self) -> bool:
        """Words alone, which the fast paths of cache.hits serve."""
        return self.positive and not (
            self.excluded or self.phrases or self.number is not None or self.label_terms
        )

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


def _successor(prefix: str) -> str | None:
    """The least string above every string starting with `prefix` (code point order is
    UTF-8 byte order, which is how FTS5 orders its terms); None when there is none."""
    code = ord(prefix[-1]) + 1
    if 0xD800 <= code <= 0xDFFF:
        code = 0xE000
    return None if code > 0x10FFFF else prefix[:-1] + chr(code)


def _prefix_terms(conn: sqlite3.Connection, terms_table: str, prefix: str) -> str | None:
    """The prefix as an OR of the index's own terms that start with it, when there are few.

    FTS5 (3.40) evaluates `"pre"*` by merging the doclists of every matching term into one
    buffer before returning a row, even for a rowid range, which for a common prefix such
    as `the` costs several times what iterating an OR of the same terms does (20 ms against
    8 ms at 100,000 issues). The terms come from the index itself, so the matches are
    exactly the same; past `MAX_EXPANSION` terms the OR loses (each row tests every term)
    and None says to keep the native prefix query."""
    upper = _successor(prefix)
    if upper is None:
        return None
    rows = conn.execute(
        f"SELECT term FROM {terms_table} WHERE term >= ? AND term < ? LIMIT ?",
        (prefix, upper, MAX_EXPANSION + 1),
    )
    terms = [str(row[0]) for row in rows if str(row[0]).startswith(prefix)]
    if not terms or len(terms) > MAX_EXPANSION:
        return None
    return "(" + " OR ".join(_quote(term) for term in terms) + ")"


class Matching(Frozen):
    """A search as the MATCH expressions of the issue and comment indexes. `spelled_out`
    says the issue expression holds no native prefix query, so evaluating it over a rowid
    range costs only what that range holds (see `_prefix_terms`)."""

    _fields = ("issues", "comments", "spelled_out")
    __slots__ = _fields
    issues: str
    comments: str
    spelled_out: bool

    def __init__(self, issues: str, comments: str, spelled_out: bool) -> None:
        self._init(issues, comments, spelled_out)


def _expression(conn: sqlite3.Connection, terms_table: str, query: TextQuery) -> str | None:
    """None when the prefix is better left to FTS5 (see `_prefix_terms`)."""
    terms = [_quote(word) for word in query.words]
    if query.prefix is not None:
        spelled = _prefix_terms(conn, terms_table, query.prefix)
        if spelled is None:
            return None
        terms.append(spelled)
    # Explicit AND: FTS5 (3.40) refuses an implicit AND next to a parenthesised OR group.
    return " AND ".join(terms)


def matching(conn: sqlite3.Connection, query: TextQuery) -> Matching:
    """The expressions for `query`, prefixes spelled out as each index's own terms where
    that pays; reading the terms costs a few ms, so callers keep the result per snapshot."""
    ensure_temp_tables(conn)
    issues = _expression(conn, ISSUE_TERMS, query)
    comments = _expression(conn, COMMENT_TERMS, query)
    return Matching(issues or query.expression, comments or query.expression, issues is not None)


_COMMENT_HITS_SQL = (
    "SELECT i.rid FROM comments_fts JOIN comments c ON c.rid = comments_fts.rowid "
    "JOIN issues i ON i.id = c.issue_id WHERE comments_fts MATCH ?"
)


def load_hits(conn: sqlite3.Connection, search: Matching) -> int:
    """Evaluate a search into `temp.fts_hits`: issues matching by their own text or by one of
    their comments. Returns how many."""
    ensure_temp_tables(conn)
    conn.execute(f"DELETE FROM {HITS_TABLE}")
    conn.execute(
        f"INSERT INTO {HITS_TABLE} (rid) "
        "SELECT rowid FROM issues_fts WHERE issues_fts MATCH ? ORDER BY rowid",
        (search.issues,),
    )
    conn.execute(
        f"INSERT OR IGNORE INTO {HITS_TABLE} (rid) {_COMMENT_HITS_SQL}", (search.comments,)
    )
    return int(conn.execute(f"SELECT count(*) FROM {HITS_TABLE}").fetchone()[0])


def recent_matches(conn: sqlite3.Connection, search: Matching, span: int) -> tuple[int, int]:
    """How many of the (up to) `span` most recently stored issues match by their own text,
    and how many were looked at: a cheap sample (FTS5 seeks to a rowid range) of how common
    the match is."""
    top = int(conn.execute("SELECT coalesce(max(rid), 0) FROM issues").fetchone()[0])
    row = conn.execute(
        "SELECT count(*) FROM issues_fts WHERE issues_fts MATCH ? AND rowid > ?",
        (search.issues, top - span),
    ).fetchone()
    return int(row[0]), min(span, top)


def comment_matches(conn: sqlite3.Connection, search: Matching) -> frozenset[int]:
    """The issues (rids) one of whose comments matches. Joining every matching comment to
    its issue is most of what a common word costs when comments hold it too (49 ms of SQL
    for 35,000 comments of 50,000 at 100,000 issues), so callers keep it per snapshot. The
    rids come back as one JSON array: a Python row apiece cost as much again as the join."""
    found = conn.execute(
        _COMMENT_HITS_SQL.replace("SELECT i.rid", "SELECT json_group_array(i.rid)", 1),
        (search.comments,),
    ).fetchone()[0]
    return frozenset(json.loads(found))


def load_probed_hits(
    conn: sqlite3.Connection,
    search: Matching,
    probes: Sequence[int],
    by_comment: frozenset[int],
) -> tuple[int, frozenset[int]]:
    """Evaluate a search exactly for the issues `probes` only, into `temp.fts_hits`; return
    how many issues match in all, and which of `probes` match. `by_comment` are the issues
    matched through a comment (`comment_matches`).

    When most issues match, storing every match is what a search costs (about 200 ns a row,
    18 ms for 90,000); one pass that counts the matches and keeps those among a few hundred
    probes costs a fraction of that. The same pass counts the issues that match both by
    their own text and through a comment, which makes the total exact without storing the
    issues matched through a comment (29,413 for `self` at 100,000 issues with 50,000
    comments). The rowid range test in front of the probe lookup is cheap and rejects most
    rows when the probes cluster (recent issues)."""
    ensure_temp_tables(conn)
    for table in (HITS_TABLE, PROBE_TABLE, COMMENT_PROBE_TABLE):
        conn.execute(f"DELETE FROM {table}")
    probed = frozenset(probes)
    for table, rids in ((PROBE_TABLE, probed), (COMMENT_PROBE_TABLE, by_comment)):
        conn.execute(
            f"INSERT INTO {table} (rid) SELECT value FROM json_each(?)", (dumps(sorted(rids)),)
        )
    both = f"count(*) FILTER (WHERE rowid IN {COMMENT_PROBE_TABLE})" if by_comment else "0"
    total, found, shared = conn.execute(
        "SELECT count(*), json_group_array(rowid) FILTER "
        f"(WHERE rowid BETWEEN ? AND ? AND rowid IN {PROBE_TABLE}), {both} "
        "FROM issues_fts WHERE issues_fts MATCH ?",
        (min(probed, default=1), max(probed, default=0), search.issues),
    ).fetchone()
    matched = frozenset(json.loads(found)) | (by_comment & probed)
    conn.execute(
        f"INSERT INTO {HITS_TABLE} (rid) SELECT value FROM json_each(?)", (dumps(sorted(matched)),)
    )
    return int(total) + len(by_comment) - int(shared), matched


def store_hits(conn: sqlite3.Connection, rids: Iterable[int]) -> None:
    """Make `temp.fts_hits` hold exactly `rids`."""
    ensure_temp_tables(conn)
    conn.execute(f"DELETE FROM {HITS_TABLE}")
    conn.execute(
        f"INSERT INTO {HITS_TABLE} (rid) SELECT value FROM json_each(?)", (dumps(sorted(rids)),)
    )


def count_matches(conn: sqlite3.Connection, search: Matching, by_comment: frozenset[int]) -> int:
    """How many issues match, by their own text or through a comment (`by_comment`, from
    `comment_matches`), without storing any: the count a list shows after its first rows."""
    ensure_temp_tables(conn)
    conn.execute(f"DELETE FROM {COMMENT_PROBE_TABLE}")
    conn.execute(
        f"INSERT INTO {COMMENT_PROBE_TABLE} (rid) SELECT value FROM json_each(?)",
        (dumps(sorted(by_comment)),),
    )
    both = f"count(*) FILTER (WHERE rowid IN {COMMENT_PROBE_TABLE})" if by_comment else "0"
    total, shared = conn.execute(
        f"SELECT count(*), {both} FROM issues_fts WHERE issues_fts MATCH ?", (search.issues,)
    ).fetchone()
    return int(total) + len(by_comment) - int(shared)


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
