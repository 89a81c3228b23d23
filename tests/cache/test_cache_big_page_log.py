"""A page as big as its table, and a reset of the server copy, write the issues without their
change log's triggers (cache.bulk_load.log_set_aside): one change is logged for all of them,
after which anchors kept from before start afresh, and the triggers are back however the
write ends.

Small sizes stand in for big ones: a "big" page from 100 rows, anchors every 5 rows.
"""

from __future__ import annotations

import contextlib
import random
from pathlib import Path

import pytest
from cache_factories import Record, comment, issue, reset_server_copy, stamp
from cache_oracle import Row, expected
from test_cache_query_anchors import counted_steps

from cache import Cache, IssueFilter, IssueSort, Resource, anchors, bulk_load, query
from cache.resources import SPECS
from issuefields import SORT_KEYS

ISSUE = Resource.ISSUES
SORTS = [IssueSort(key, descending) for key in SORT_KEYS for descending in (False, True)]
FILTERS = [
    IssueFilter(),
    IssueFilter(status=frozenset({"todo", "done"})),
    IssueFilter(mine="usr_1"),
    IssueFilter(project=frozenset({"prj_1", None})),
]
TRIGGERS = {"issue_moved", "issue_moved_out"}


@pytest.fixture(autouse=True)
def big_at_small_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bulk_load, "BIG_PAGE_ROWS", 100)
    monkeypatch.setattr(anchors, "SPACING", 5)
    monkeypatch.setattr(anchors, "STRIDE", 20)
    monkeypatch.setattr(anchors, "BOOKS_KEPT", len(FILTERS) * len(SORTS))
    monkeypatch.setattr(query, "SHALLOW_ROWS", 12)


def made(rnd: random.Random, numbers: range, newest: int = 30) -> list[Record]:
    """Few distinct values a column, so every order has long runs of ties."""
    return [
        issue(
            n,
            title=rnd.choice(["alpha", "Beta", "gamma", "Zeta"]),
            status=rnd.choice(["backlog", "todo", "done", "triage"]),
            priority=rnd.choice(["urgent", "low", "none"]),
            assignee=rnd.choice([None, "usr_1", "usr_2"]),
            project_id=rnd.choice([None, "prj_1", "prj_2"]),
            updated_at=stamp(rnd.randint(newest - 30, newest)),
        )
        for n in numbers
    ]


class Model:
    """The issues as the oracle sees them, each at the position its rid gives it."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}

    def pull(self, cache: Cache, page: list[Record]) -> None:
        cache.server.apply_page(ISSUE, page)
        for record in page:
            if record["id"] not in self.rows:
                self.rows[record["id"]] = Row(record["id"], len(self.rows) + 1, record, [])


def windows_checked(cache: Cache, model: Model) -> int:
    """Every order and filter: deep windows (which lay anchors) and the count are the
    oracle's; how many windows were read."""
    read = 0
    for flt in FILTERS:
        for sort in SORTS:
            want = expected(list(model.rows.values()), flt, sort)
            assert cache.reads.count(flt) == len(want), (flt, sort)
            for offset in sorted({0, 7, 33, len(want) // 2, max(len(want) - 4, 0)}):
                got = [row.id for row in cache.reads.window(flt, sort, offset, 8)]
                assert got == want[offset : offset + 8], (flt, sort, offset)
                read += 1
    return read


def log(cache: Cache) -> list[tuple[int, int | None]]:
    """`issue_moves` as (seq, rid): rid None for a change that moves no row."""
    with cache.server._db.read() as conn:
        rows = conn.execute("SELECT seq, rid FROM issue_moves ORDER BY seq").fetchall()
    return [(int(seq), rid) for seq, rid in rows]


def triggers(cache: Cache) -> dict[str, str]:
    with cache.server._db.read() as conn:
        rows = conn.execute(
            "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'issues'"
        ).fetchall()
    return {str(name): str(sql) for name, sql in rows}


def test_a_big_page_logs_one_change_for_all_its_rows_and_keeps_the_triggers(
    tmp_path: Path,
) -> None:
    """The triggers added two statements to each row of a page of 100,000 issues (0.5-1.3 s
    of CPU beside a bare insert's 3-4 s; issue 18). A page as big as its table logs one
    change, a new revision; a small page after it is logged row by row as before."""
    with Cache.open(tmp_path / "cache.db") as cache:
        kept = triggers(cache)
        assert set(kept) == TRIGGERS
        first = log(cache)
        cache.server.apply_page(ISSUE, [issue(n) for n in range(1, 151)])
        assert triggers(cache) == kept
        after = log(cache)
        assert [rid for _, rid in after] == [None]
        assert after[0][0] > first[-1][0]
        cache.server.apply_page(ISSUE, [issue(n) for n in range(151, 154)])
        assert [rid for _, rid in log(cache)] == [None, 151, 152, 153]
        assert cache.reads.count(IssueFilter()) == 153
        assert cache.integrity_check() == ["ok"]


def test_anchors_laid_before_a_big_page_start_afresh_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The big page's rows are not in the log: the anchors and totals found before it would
    keep their old positions were their revision still there. The one change it logs
    empties the log before it, so every shelf starts afresh and walks from the top."""
    rnd = random.Random(7)
    model = Model()
    with Cache.open(tmp_path / "cache.db") as cache:
        for start in range(1, 101, 50):
            model.pull(cache, made(rnd, range(start, start + 50)))
        assert windows_checked(cache, model) > 100
        steps = counted_steps(monkeypatch)
        # Newer than every held issue: each lands ahead of them in the default order, so
        # every deep window moves, and every filter's total grows.
        model.pull(cache, made(rnd, range(101, 261), newest=90))
        assert windows_checked(cache, model) > 100
        assert steps and steps[0] is None


def test_a_big_page_that_fails_leaves_the_triggers_and_the_log(tmp_path: Path) -> None:
    """A page whose inserts fail halfway (a number SQLite cannot hold, which only a page
    prepared by hand can carry: `prepare` makes one a float) rolls back with the triggers it
    had dropped: they, the log and the rows are as before, and the next page is logged row
    by row."""
    with Cache.open(tmp_path / "cache.db") as cache:
        cache.server.apply_page(ISSUE, [issue(n) for n in range(1, 61)])
        kept, logged = triggers(cache), log(cache)
        page = cache.server.prepare(ISSUE, [issue(n) for n in range(61, 201)])
        place = SPECS[ISSUE].column_names.index("number")
        cells = list(page[-1].cells)
        cells[place] = 2**70
        page[-1] = page[-1]._replace(cells=tuple(cells))
        with pytest.raises(OverflowError):
            cache.server.apply_prepared(ISSUE, page)
        assert triggers(cache) == kept
        assert log(cache) == logged
        assert cache.reads.count(IssueFilter()) == 60
        cache.server.apply_page(ISSUE, [issue(61)])
        assert log(cache)[:-1] == logged and log(cache)[-1][1] == 61


def test_the_triggers_are_back_when_a_transaction_commits_past_a_failure(
    tmp_path: Path,
) -> None:
    """A writer that catches a failure inside the set-aside writes and commits what it did:
    the triggers are created again on the way out, with the one change logged."""
    with Cache.open(tmp_path / "cache.db") as cache:
        cache.server.apply_page(ISSUE, [issue(n) for n in range(1, 6)])
        kept = triggers(cache)
        with (
            cache.server._db.write() as conn,
            contextlib.suppress(RuntimeError),
            bulk_load.log_set_aside(conn, "issues"),
        ):
            conn.execute("DELETE FROM issues WHERE rid = 2")
            raise RuntimeError("a failure the writer goes on past")
        assert triggers(cache) == kept
        assert [rid for _, rid in log(cache)] == [None]
        cache.server.apply_page(ISSUE, [issue(9)])
        assert [rid for _, rid in log(cache)] == [None, 6]


def test_a_reset_logs_one_change_and_the_pull_after_it_reads_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wiping the server copy deleted and logged the issues one by one; it now logs one
    change (SQLite empties the table whole), and anchors kept from before start afresh."""
    rnd = random.Random(8)
    model = Model()
    with Cache.open(tmp_path / "cache.db") as cache:
        for start in range(1, 91, 30):
            model.pull(cache, made(rnd, range(start, start + 30)))
        windows_checked(cache, model)
        kept = triggers(cache)
        reset_server_copy(cache)
        assert triggers(cache) == kept
        assert [rid for _, rid in log(cache)] == [None]
        steps = counted_steps(monkeypatch)
        model = Model()
        for start in range(500, 560, 20):
            model.pull(cache, made(rnd, range(start, start + 20)))
        assert [rid for _, rid in log(cache)] == [None, *range(1, 61)]
        assert windows_checked(cache, model) > 100
        assert steps and steps[0] is None


def test_the_comments_count_a_rewrite_for_each_change_but_an_insert_and_one_for_a_reset(
    tmp_path: Path,
) -> None:
    """The comments' count of rewrites (migration `comment_rewrites`) tells the search's probe
    index whether the comments stored since it last looked are only those above the highest
    rid it saw (cache.probe_docs): inserts leave it, an edit or a deletion moves it, and a
    reset, which empties the table without its triggers, moves it once for all."""

    def rewrites() -> int:
        with cache.server._db.read() as conn:
            return int(conn.execute("SELECT n FROM rewrites WHERE tbl = 'comments'").fetchone()[0])

    with Cache.open(tmp_path / "cache.db") as cache:
        cache.server.apply_page(ISSUE, [issue(n) for n in range(1, 4)])
        cache.server.apply_page(Resource.COMMENTS, [comment(n, "iss_000001", "a") for n in (1, 2)])
        assert rewrites() == 0
        cache.server.apply_page(
            Resource.COMMENTS, [comment(1, "iss_000001", "a"), comment(3, "iss_000002", "b")]
        )
        assert rewrites() == 0
        cache.server.apply_page(
            Resource.COMMENTS, [comment(1, "iss_000001", "edited", updated_at=stamp(50))]
        )
        assert rewrites() == 1
        cache.server.apply_page(
            Resource.COMMENTS, [{"id": "cmt_000002", "deleted": True, "updated_at": stamp(51)}]
        )
        assert rewrites() == 2
        reset_server_copy(cache)
        assert rewrites() == 3
        cache.server.apply_page(Resource.COMMENTS, [comment(4, "iss_000003", "c")])
        cache.server.apply_page(
            Resource.COMMENTS, [comment(4, "iss_000001", "moved", updated_at=stamp(52))]
        )
        assert rewrites() == 4
