"""The text parts of a search beyond plain words (cache.search_syntax): excluded words,
phrases, an issue's number, and words that name labels, evaluated into `temp.fts_hits` for
the server rows and over the effective text for the issues local edits change, by the same
rules.

The indexes keep no positions (`detail=none`, see cache.fts), so a phrase is matched in two
steps: its words through the index, then the few candidates' text is read and the words
checked in order. A word matches an issue's labels when it is one of a label's tokens (`bug`
finds `bug` and `ui-bug`); each word may then match either way, so `crash bug` finds an issue
titled "crash" labelled `bug`.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Mapping, Sequence

from cache import fts
from cache.fts import HITS_TABLE, TextQuery
from cache.resources import as_int, dumps
from cache.search_syntax import Search

_TOKEN = re.compile(r"[^\W_]+")


def words_of(text: str) -> str:
    """Text as space-separated folded tokens, padded with spaces, close to what the FTS5
    tokenizer makes of it (case and accents ignored), for checking a phrase's word order."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(char for char in folded if not unicodedata.combining(char))
    return " " + " ".join(_TOKEN.findall(plain)) + " "


def _phrase_in(phrase: Sequence[str], texts: Iterable[str]) -> bool:
    needle = " " + " ".join(phrase) + " "
    return any(needle in words_of(text) for text in texts)


def text_query(conn: sqlite3.Connection, search: Search) -> TextQuery | None:
    """The FTS side of a parsed search; None when it has no text part at all."""
    base = fts.parse(conn, search.text) if search.text.strip() else None
    words = base.words if base else ()
    prefix = base.prefix if base else None
    phrases = tuple(
        tuple(words_of(phrase).split()) for phrase in search.phrases if words_of(phrase).strip()
    )
    excluded = tuple(
        " ".join(f'"{token}"' for token in tokens)
        for tokens in (fts.tokenize(conn, word) for word in search.excluded)
        if tokens
    )
    found = TextQuery(
        words,
        prefix,
        excluded,
        phrases,
        search.number,
        search.exact_number,
        label_terms(conn, words, prefix),
    )
    if not (found.positive or found.excluded or found.number is not None):
        return None
    return found


def label_terms(
    conn: sqlite3.Connection, words: Sequence[str], prefix: str | None
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each term (a word, or the prefix with `*`) with the known labels it matches: one of
    the label's words (folded as `words_of` folds them, which costs no query per label on
    every keystroke) is the word, or starts with the prefix."""
    labels = [str(row[0]) for row in conn.execute("SELECT label FROM label_bits")]
    if not labels:
        return ()
    tokens = {label: words_of(label).split() for label in labels}
    terms: list[tuple[str, tuple[str, ...]]] = []
    for word in words:
        named = tuple(label for label, found in tokens.items() if word in found)
        terms.append((word, named))
    if prefix is not None:
        named = tuple(
            label for label, found in tokens.items() if any(t.startswith(prefix) for t in found)
        )
        terms.append((prefix + "*", named))
    return tuple(terms) if any(named for _, named in terms) else ()


def _term_expression(term: str) -> str:
    return f'"{term[:-1]}"*' if term.endswith("*") else f'"{term}"'


_COMMENT_RIDS = (
    "SELECT i.rid FROM comments_fts JOIN comments c ON c.rid = comments_fts.rowid "
    "JOIN issues i ON i.id = c.issue_id WHERE comments_fts MATCH ?"
)


def _matching_rids(conn: sqlite3.Connection, expression: str) -> set[int]:
    """Issues whose own text or one of whose comments matches `expression`."""
    own = conn.execute("SELECT rowid FROM issues_fts WHERE issues_fts MATCH ?", (expression,))
    found = {int(row[0]) for row in own}
    found.update(int(row[0]) for row in conn.execute(_COMMENT_RIDS, (expression,)))
    return found


def load_hits(conn: sqlite3.Connection, matching: fts.Matching, text: TextQuery) -> int:
    """Evaluate a search that is more than plain words into `temp.fts_hits`; how many."""
    fts.ensure_temp_tables(conn)
    if text.only_number:
        conn.execute(f"DELETE FROM {HITS_TABLE}")
    elif text.positive:
        fts.load_hits(conn, matching)
    else:
        conn.execute(f"DELETE FROM {HITS_TABLE}")
        conn.execute(f"INSERT INTO {HITS_TABLE} (rid) SELECT rid FROM issues")
    if text.label_terms and not text.only_number:
        _add_label_matches(conn, text.label_terms, text_held=text.positive)
    if text.phrases:
        _keep_phrases(conn, text.phrases)
    if text.number is not None:
        conn.execute(
            f"INSERT OR IGNORE INTO {HITS_TABLE} (rid) SELECT rid FROM issues WHERE number = ?",
            (as_int(text.number),),
        )
    for expression in text.excluded:
        conn.execute(
            f"DELETE FROM {HITS_TABLE} WHERE rid IN (SELECT value FROM json_each(?))",
            (dumps(sorted(_matching_rids(conn, expression))),),
        )
    return int(conn.execute(f"SELECT count(*) FROM {HITS_TABLE}").fetchone()[0])


def _add_label_matches(
    conn: sqlite3.Connection,
    label_terms: Sequence[tuple[str, tuple[str, ...]]],
    *,
    text_held: bool,
) -> None:
    """Issues where every term matches the text or a label, added to the text matches.

    A search of one term (a word being typed: the common case) whose text matches are the
    hits already (`text_held`) only adds the issues carrying one of its labels, in SQL. Read
    into Python sets, its text matches again and the labels' issues cost 40-80 ms for `sec`
    (which names `security`) at 100,000 issues with 50,000 comments (issue 18)."""
    if text_held and len(label_terms) == 1:
        ((_, labels),) = label_terms
        conn.execute(
            f"INSERT OR IGNORE INTO {HITS_TABLE} (rid) SELECT issue FROM issue_labels "
            "WHERE label IN (SELECT value FROM json_each(?))",
            (dumps(list(labels)),),
        )
        return
    matched: set[int] | None = None
    for term, labels in label_terms:
        rids = _matching_rids(conn, _term_expression(term))
        if labels:
            rows = conn.execute(
                "SELECT issue FROM issue_labels WHERE label IN (SELECT value FROM json_each(?))",
                (dumps(list(labels)),),
            )
            rids.update(int(row[0]) for row in rows)
        matched = rids if matched is None else matched & rids
    conn.execute(
        f"INSERT OR IGNORE INTO {HITS_TABLE} (rid) SELECT value FROM json_each(?)",
        (dumps(sorted(matched or ())),),
    )


def _keep_phrases(conn: sqlite3.Connection, phrases: Sequence[Sequence[str]]) -> None:
    """Drop the matches in which some phrase does not appear in order in one text (the title
    and description, or a comment)."""
    texts: dict[int, list[str]] = {}
    rows = conn.execute(
        f"SELECT rid, title, description FROM issues WHERE rid IN (SELECT rid FROM {HITS_TABLE})"
    )
    for rid, title, description in rows:
        texts.setdefault(int(rid), []).append(f"{title}\n{description or ''}")
    comments = conn.execute(
        "SELECT i.rid, c.body FROM comments c JOIN issues i ON i.id = c.issue_id "
        f"WHERE i.rid IN (SELECT rid FROM {HITS_TABLE})"
    )
    for rid, body in comments:
        texts.setdefault(int(rid), []).append(str(body or ""))
    gone = [rid for rid, found in texts.items() if not all(_phrase_in(p, found) for p in phrases)]
    conn.execute(
        f"DELETE FROM {HITS_TABLE} WHERE rid IN (SELECT value FROM json_each(?))", (dumps(gone),)
    )


def overlay_matches(
    conn: sqlite3.Connection,
    text: TextQuery,
    owners: Mapping[int, str],
    texts: Mapping[str, Sequence[str]],
    issues: Mapping[str, tuple[int | None, Sequence[str]]],
) -> frozenset[str]:
    """The same rules over the issues local edits change: `owners` maps each document of
    `temp.overlay_docs` to its issue, `texts` holds each issue's documents, `issues` its
    number and labels."""

    def owners_of(expression: str) -> set[str]:
        return {owners[doc] for doc in _overlay_docs(conn, expression) if doc in owners}

    if text.only_number:
        found: set[str] = set()
    elif text.positive:
        found = owners_of(text.expression)
    else:
        found = set(issues)
    if text.label_terms and not text.only_number:
        both: set[str] | None = None
        for term, labels in text.label_terms:
            ids = owners_of(_term_expression(term))
            ids.update(key for key, (_, have) in issues.items() if set(have) & set(labels))
            both = ids if both is None else both & ids
        found |= both or set()
    if text.phrases:
        found = {
            key for key in found if all(_phrase_in(p, texts.get(key, ())) for p in text.phrases)
        }
    if text.number is not None:
        found.update(key for key, (number, _) in issues.items() if number == text.number)
    for expression in text.excluded:
        found -= owners_of(expression)
    return frozenset(found)


def _overlay_docs(conn: sqlite3.Connection, expression: str) -> set[int]:
    rows = conn.execute(
        "SELECT rowid FROM temp.overlay_docs WHERE overlay_docs MATCH ?", (expression,)
    )
    return {int(row[0]) for row in rows}
