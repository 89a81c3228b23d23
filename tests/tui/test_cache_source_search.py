"""A search keystroke through the list's source: the count and the first window it reads in
one snapshot agree with the text, and the search is evaluated once for both (issue 18: a
word most comments hold cost two joins of every matching comment to its issue, one for the
count and one for the window)."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from cache import Cache, IssueFilter, IssueSort, Resource
from issuefields import SORT_KEYS
from tracker_tui.data.cache_source import CacheIssueSource
from tracker_tui.data.source import IssueQuery

WORDS = ["alpha", "beta", "gamma", "the", "then", "there", "other", "rare"]
ISSUES = 1500
SORTS = [IssueSort(key, descending) for key in SORT_KEYS for descending in (False, True)]


def _stamp(n: int) -> str:
    return f"2026-01-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00Z"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cache, dict[str, list[str]]]]:
    """More issues than a first window probes, most matching `the` by their own text, many
    by a comment only; each issue's searchable texts (its own, then each comment's) kept
    for the check."""
    rnd = random.Random(18)
    texts: dict[str, list[str]] = {}
    records: list[dict[str, Any]] = []
    for n in range(1, ISSUES + 1):
        words = rnd.choices(WORDS, k=rnd.randint(1, 6))
        issue_id = f"iss_{n:06d}"
        title, description = " ".join(words[:2]), " ".join(words[2:])
        texts[issue_id] = [f"{title} {description}"]
        records.append(
            {
                "id": issue_id,
                "number": n,
                "title": title,
                "description": description,
                "status": rnd.choice(["todo", "done", None]),
                "priority": rnd.choice(["urgent", "low", "none"]),
                "assignee": None,
                "project_id": None,
                "labels": [],
                "created_at": _stamp(n),
                "updated_at": _stamp(rnd.randint(0, 5000)),
            }
        )
    comments: list[dict[str, Any]] = []
    for n, issue_id in enumerate(rnd.sample(sorted(texts), ISSUES // 2)):
        body = " ".join(rnd.choices(WORDS, k=3))
        texts[issue_id].append(body)
        comments.append(
            {
                "id": f"cmt_{n:06d}",
                "issue_id": issue_id,
                "body": body,
                "author": "usr_1",
                "created_at": _stamp(n),
                "updated_at": _stamp(n),
            }
        )
    cache = Cache.open(tmp_path_factory.mktemp("search") / "cache.db")
    cache.server.apply_page(Resource.ISSUES, records)
    cache.server.apply_page(Resource.COMMENTS, comments)
    with cache:
        yield cache, texts


def _matching(texts: dict[str, list[str]], text: str) -> set[str]:
    """Issues with one text (their own, or a comment) holding every typed word, the last
    one (three letters or more) as a prefix."""
    *whole, last = text.split()

    def holds(body: str) -> bool:
        tokens = body.split()
        return all(word in tokens for word in whole) and any(t.startswith(last) for t in tokens)

    return {issue_id for issue_id, bodies in texts.items() if any(map(holds, bodies))}


def _keystroke(source: CacheIssueSource, query: IssueQuery) -> tuple[int, list[str]]:
    """What the list reads for a new search: the count, then its first rows."""
    with source.snapshot():
        count = source.count(query)
        rows = source.window(query, 0, 128)
    return count, [row.id for row in rows]


@pytest.mark.parametrize("text", ["the", "ther", "alpha the", "rare"])
def test_a_search_keystroke_counts_and_shows_exactly_the_matching_issues(
    world: tuple[Cache, dict[str, list[str]]], text: str
) -> None:
    cache, texts = world
    source = CacheIssueSource(cache)
    want = _matching(texts, text)
    for tick, sort in enumerate(SORTS):
        cache.state.set("test:tick", f"{text}:{tick}")
        query = IssueQuery(IssueFilter(text=text), sort)
        count, first = _keystroke(source, query)
        assert count == len(want), sort
        assert set(first) <= want, sort
        assert len(first) == min(128, len(want)), sort
        cache.state.set("test:tick", f"{text}:{tick}:fresh")
        alone = [row.id for row in cache.reads.window(query.filter, sort, 0, 128)]
        assert first == alone, sort


@pytest.mark.parametrize("sort", [IssueSort(), IssueSort("priority", False)])
def test_a_search_keystroke_joins_the_matching_comments_once(
    world: tuple[Cache, dict[str, list[str]]], sort: IssueSort
) -> None:
    """The count and the first window share one evaluation of a common word."""
    cache, texts = world
    source = CacheIssueSource(cache)
    cache.state.set("test:tick", f"once:{sort}")
    conn: sqlite3.Connection = cache.reads._db.conn()
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        count, first = _keystroke(source, IssueQuery(IssueFilter(text="the"), sort))
    finally:
        conn.set_trace_callback(None)
    assert count == len(_matching(texts, "the"))
    assert len(first) == 128
    joins = [sql for sql in statements if "comments_fts MATCH" in sql]
    assert len(joins) == 1, joins
