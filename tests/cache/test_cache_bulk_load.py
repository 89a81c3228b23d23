"""A cold load's deferred indexes: reads work while they are stand-ins, and come out the same
once they are built; the swap happens only into an empty table and is undone exactly."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest
from cache_factories import Record, comment, issue, query_plans, reset_server_copy

from cache import Cache, IssueFilter, IssueSort, Resource, bulk_load
from cache.bulk_load import BULK_LOAD_INDEXES, REPACKED_AFTER_LOAD
from issuefields import ASSIGNEE, SORT_KEYS

ALL_ISSUE_INDEXES = (
    "issues_by_updated",
    "issues_by_created",
    "issues_by_number",
    "issues_by_title",
    *REPACKED_AFTER_LOAD,
)
WORDS = ["alpha", "beta", "gamma", "delta", "sigma", "omega", "kappa"]
FILTERS = (
    IssueFilter(),
    IssueFilter(status=frozenset({"todo", "done"})),
    IssueFilter(assignee=frozenset({"usr_1", None})),
    IssueFilter(project=frozenset({"prj_2"})),
    IssueFilter(label=frozenset({"bug", "api"})),
    IssueFilter(text="gamma"),
    IssueFilter(text="sig"),
)


def index_sql(path: Path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL"
        ).fetchall()
    return {str(name): str(sql) for name, sql in rows}


def issues(count: int) -> list[Record]:
    """Issues in sync order (`updated_at` ascending) with values spread over every field
    a filter or a sort reads, numbered out of that order as a real tracker's are."""
    rng = random.Random(11)
    numbers = rng.sample(range(1, count + 1), count)
    return [
        issue(
            n,
            number=numbers[n - 1],
            title=" ".join(rng.choices(WORDS, k=3)),
            description=" ".join(rng.choices(WORDS, k=5)),
            status=rng.choice(["backlog", "todo", "in_progress", "done", "triage"]),
            priority=rng.choice(["urgent", "high", "low", "none"]),
            assignee=rng.choice(["usr_1", "usr_2", None]),
            project_id=rng.choice(["prj_1", "prj_2", None]),
            labels=rng.sample(["bug", "ui", "api", "docs"], k=rng.randint(0, 2)),
            created_at=issue(rng.randint(1, count))["created_at"],
        )
        for n in range(1, count + 1)
    ]


def everything_read(cache: Cache) -> list[object]:
    """What the list shows for every filter and sort: the first rows and the count."""
    seen: list[object] = []
    for flt in FILTERS:
        seen.append(cache.reads.count(flt))
        for key in SORT_KEYS:
            for descending in (False, True):
                rows = cache.reads.window(flt, IssueSort(key, descending), 0, 40)
                seen.append([row.id for row in rows])
    seen.append(cache.reads.resolve_issue("#7"))
    seen.append(cache.reads.distinct_values(ASSIGNEE))
    return seen


def test_reads_during_a_cold_load_are_those_after_it(tmp_path: Path) -> None:
    records = issues(600)
    with Cache.open(tmp_path / "cache.db") as cache:
        real = index_sql(cache.path)
        assert cache.server.begin_bulk_load(Resource.ISSUES)
        assert cache.server.begin_bulk_load(Resource.COMMENTS)
        during = index_sql(cache.path)
        assert {name for name in real if during[name] != real[name]} == set(BULK_LOAD_INDEXES)
        for start in range(0, len(records), 100):
            cache.server.apply_page(Resource.ISSUES, records[start : start + 100])
        cache.server.apply_page(Resource.COMMENTS, [comment(1, "iss_000007", "sigma says hi")])
        loading = everything_read(cache)
        assert cache.server.finish_bulk_load(Resource.ISSUES)
        assert cache.server.finish_bulk_load(Resource.COMMENTS)
        assert index_sql(cache.path) == real
        assert everything_read(cache) == loading
        assert cache.integrity_check() == ["ok"]


def test_only_an_empty_table_is_loaded_cold_and_finishing_twice_is_harmless(
    tmp_path: Path,
) -> None:
    with Cache.open(tmp_path / "cache.db") as cache:
        real = index_sql(cache.path)
        cache.server.apply_page(Resource.ISSUES, [issue(1)])
        assert not cache.server.begin_bulk_load(Resource.ISSUES)
        assert index_sql(cache.path) == real
        assert not cache.server.finish_bulk_load(Resource.ISSUES)
        reset_server_copy(cache)
        assert cache.server.begin_bulk_load(Resource.ISSUES)
        assert cache.server.begin_bulk_load(Resource.ISSUES)  # a load already going on goes on
        assert cache.server.finish_bulk_load(Resource.ISSUES)
        assert not cache.server.finish_bulk_load(Resource.ISSUES)
        assert index_sql(cache.path) == real


def test_a_load_left_unfinished_by_a_dead_process_is_finished_from_its_record(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cache.db"
    with Cache.open(path) as cache:
        real = index_sql(path)
        assert cache.server.begin_bulk_load(Resource.ISSUES)
        cache.server.apply_page(Resource.ISSUES, issues(150))
    with Cache.open(path) as cache:  # what a kill leaves: stand-ins and their record
        assert index_sql(path) != real
        assert cache.server.finish_bulk_load(Resource.ISSUES)
        assert index_sql(path) == real
        plans = query_plans(cache, IssueFilter(), IssueSort("title", False))
        assert plans[0].startswith("SCAN issues USING COVERING INDEX issues_by_title"), plans
        assert not any("TEMP B-TREE" in line for line in plans), plans


def unused_share(path: Path, names: tuple[str, ...]) -> dict[str, float]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT name, 1.0 * SUM(unused) / SUM(pgsize) FROM dbstat "
            "WHERE name IN (SELECT value FROM json_each(?)) GROUP BY name",
            (json.dumps(list(names)),),
        ).fetchall()
    return {str(name): float(share) for name, share in rows}


def test_a_cold_load_leaves_its_filter_indexes_full(tmp_path: Path) -> None:
    """A load in sync order fills each filter index at the front of a value's range, which
    leaves its pages half empty; the end of the load rebuilds them full (issue 18)."""
    records = issues(4000)
    with Cache.open(tmp_path / "cache.db") as cache:
        assert cache.server.begin_bulk_load(Resource.ISSUES)
        for start in range(0, len(records), 100):
            cache.server.apply_page(Resource.ISSUES, records[start : start + 100])
        loaded = unused_share(cache.path, REPACKED_AFTER_LOAD)
        reads = everything_read(cache)
        assert cache.server.finish_bulk_load(Resource.ISSUES)
        finished = unused_share(cache.path, REPACKED_AFTER_LOAD)
        assert everything_read(cache) == reads
        with sqlite3.connect(cache.path) as conn:
            free = conn.execute("PRAGMA freelist_count").fetchone()[0]
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
    assert free == 0 and pages > 100  # what the rebuilds freed went back to the file system
    assert set(finished) == set(REPACKED_AFTER_LOAD)
    assert all(share > 0.3 for share in loaded.values()), loaded
    assert all(share < 0.15 for share in finished.values()), finished


def test_one_big_page_builds_its_indexes_full_and_reads_as_pages_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page at least as big as its table (from `BIG_PAGE_ROWS` rows on) builds the table's
    indexes after its inserts: they come out full, the same indexes as before, and every read
    is what the same issues stored a page at a time give (one page of 1,000,000 issues took
    18 minutes inserted into every index; issue 18)."""
    monkeypatch.setattr(bulk_load, "BIG_PAGE_ROWS", 1000)
    records = issues(4000)
    with Cache.open(tmp_path / "paged.db") as paged:
        for start in range(0, len(records), 100):
            paged.server.apply_page(Resource.ISSUES, records[start : start + 100])
        expected = everything_read(paged)
        scattered = unused_share(paged.path, ALL_ISSUE_INDEXES)
    with Cache.open(tmp_path / "cache.db") as cache:
        real = index_sql(cache.path)
        cache.server.apply_page(Resource.ISSUES, records[:1500])
        cache.server.apply_page(Resource.ISSUES, records[1500:])  # 2,500 new beside 1,500
        assert index_sql(cache.path) == real
        assert everything_read(cache) == expected
        assert cache.integrity_check() == ["ok"]
        built = unused_share(cache.path, ALL_ISSUE_INDEXES)
    assert set(built) == set(ALL_ISSUE_INDEXES)
    assert max(scattered.values()) > 0.3, scattered
    assert all(share < 0.15 for share in built.values()), built


def test_a_big_page_into_a_bigger_table_or_a_cold_load_keeps_their_indexes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bulk_load, "BIG_PAGE_ROWS", 100)
    records = issues(900)
    with Cache.open(tmp_path / "cache.db") as cache:
        real = index_sql(cache.path)
        assert cache.server.begin_bulk_load(Resource.ISSUES)
        during = index_sql(cache.path)
        cache.server.apply_page(Resource.ISSUES, records[:500])
        assert index_sql(cache.path) == during  # the stand-ins stay stand-ins
        cache.server.apply_page(Resource.ISSUES, records[500:])  # 400 beside 500
        assert cache.server.finish_bulk_load(Resource.ISSUES)
        assert index_sql(cache.path) == real
        assert cache.reads.count(IssueFilter()) == 900
        assert cache.integrity_check() == ["ok"]


def test_a_search_during_a_cold_load_of_comments_reads_each_comment_once(
    tmp_path: Path,
) -> None:
    """A search's first rows index the comments of the first issues in the list's order
    (`probe_docs.index_comments`). While comments load cold, and after a load cut short (an app
    quit during its first sync), `comments_by_issue` is a stand-in on `rid`: looking the
    comments up by a join scanned every comment once per probed issue (49,501 comments, 768
    issues: 15 s for one key after a pull of 100,000). Counted in SQLite's instructions, the
    search now costs what one pass over the comments does, and finds what it finds once the
    real index is back."""
    path = tmp_path / "cache.db"
    records = issues(600)
    rng = random.Random(5)
    flt, sort = IssueFilter(text="gamma"), IssueSort("updated", True)
    with Cache.open(path) as cache:
        assert cache.server.begin_bulk_load(Resource.COMMENTS)
        cache.server.apply_page(Resource.ISSUES, records)
        cache.server.apply_page(
            Resource.COMMENTS,
            [
                comment(n, str(rng.choice(records)["id"]), " ".join(rng.choices(WORDS, k=4)))
                for n in range(1, 3001)
            ],
        )
        conn = cache.reads._db.conn()
        steps = [0]
        statements: list[str] = []

        def step() -> int:
            steps[0] += 1
            return 0

        conn.set_progress_handler(step, 1000)
        conn.set_trace_callback(statements.append)
        try:
            with cache.reads.snapshot():
                during = [row.id for row in cache.reads.window(flt, sort, 0, 40)]
        finally:
            conn.set_progress_handler(None, 0)
            conn.set_trace_callback(None)
        assert any("INSERT INTO temp.probe_docs" in sql for sql in statements)
        assert cache.server.finish_bulk_load(Resource.COMMENTS)
    with Cache.open(path) as cache:
        after = [row.id for row in cache.reads.window(flt, sort, 0, 40)]
    assert len(during) == 40
    assert during == after
    # One pass over 3,000 comments and the issues' rows: 173,000 instructions here; the
    # join's lookups of every comment for each of 512 issues: 10.9 million.
    assert steps[0] * 1000 < 2_000_000, steps
