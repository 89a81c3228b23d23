"""Windows read from anchors (cache.anchors) are exactly the windows of plain OFFSET, under
every sort and filter, with local edits laid over, and after pulls that move rows.

Anchors every few rows and a low "shallow" line make a few hundred issues behave as a
million do: most windows start from an anchor, and the far half is read from the other end.
Every order and filter keeps its anchors, so each pull repairs all of them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cache_factories import Clock, Record, issue, stamp
from cache_oracle import Row, expected

from cache import Cache, IssueFilter, IssueSort, Resource, anchors, query
from cache.filtering import compile_filter
from issuefields import SORT_KEYS

ISSUE = Resource.ISSUES
SORTS = [IssueSort(key, descending) for key in SORT_KEYS for descending in (False, True)]
TITLES = ["alpha", "Alpha", "beta", "BETA", "gamma", "Zeta", "zeta", "éclair", "a b"]
STATUSES = ["backlog", "todo", "in_progress", "done", "canceled", "triage"]
PRIORITIES = ["urgent", "high", "medium", "low", "none", "p9"]
ASSIGNEES = [None, "usr_1", "usr_2", "usr_3"]
PROJECTS = [None, "prj_1", "prj_2"]
LABELS = ["bug", "ui", "api"]
FILTERS = [
    IssueFilter(),
    IssueFilter(status=frozenset({"todo", "done"})),
    IssueFilter(status=frozenset({"triage"})),
    IssueFilter(priority=frozenset({"urgent", "p9"})),
    IssueFilter(mine="usr_1"),
    IssueFilter(assignee=frozenset({None, "usr_2"})),
    IssueFilter(project=frozenset({"prj_1", None}), priority=frozenset({"low", "none"})),
    IssueFilter(label=frozenset({"bug"})),
    IssueFilter(label=frozenset({"bug", "ui"}), status=frozenset(STATUSES[:3])),
    IssueFilter(text="alpha"),
]
SPACING = 5


@pytest.fixture(autouse=True)
def deep_at_small_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(anchors, "SPACING", SPACING)
    monkeypatch.setattr(anchors, "STRIDE", 4 * SPACING)
    monkeypatch.setattr(anchors, "BOOKS_KEPT", len(FILTERS) * len(SORTS))  # all repaired
    monkeypatch.setattr(query, "SHALLOW_ROWS", 12)


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[Cache]:
    """A clock in 1970: a local edit keeps its server row's `updated_at` (the overlay shows
    the later of the two), which the model leaves alone."""
    opened = Cache.open(tmp_path / "cache.db", clock=Clock(start=1000.0))
    yield opened
    opened.close()


def random_issue(rnd: random.Random, n: int) -> Record:
    """Few distinct values per column, so every order has long runs of ties, and NULLs."""
    return issue(
        n,
        number=rnd.choice([n, n, None]),
        title=rnd.choice(TITLES),
        status=rnd.choice(STATUSES),
        priority=rnd.choice(PRIORITIES),
        assignee=rnd.choice(ASSIGNEES),
        project_id=rnd.choice(PROJECTS),
        labels=rnd.sample(LABELS, rnd.randint(0, 2)),
        created_at=rnd.choice([stamp(rnd.randint(0, 30)), None]),
        updated_at=rnd.choice([stamp(rnd.randint(0, 30)), stamp(rnd.randint(0, 30)), None]),
    )


class Model:
    """The list as the oracle sees it: rows by id, in the order the cache gives them rids."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self.next_position = 1

    def pulled(self, record: Record) -> None:
        if record.get("deleted"):
            self.rows.pop(record["id"], None)
        elif record["id"] in self.rows:
            self.rows[record["id"]].record = dict(record)
        else:
            self.rows[record["id"]] = Row(record["id"], self.next_position, dict(record), [])
            self.next_position += 1


def pull(cache: Cache, model: Model, page: list[Record]) -> None:
    cache.server.apply_page(ISSUE, page)
    for record in page:
        model.pulled(record)


def windows(rnd: random.Random, total: int) -> list[tuple[int, int]]:
    """Offsets everywhere, on and beside anchors, past the end; in a random order, so some
    find their anchors made and some make them."""
    offsets = {0, 1, SPACING - 1, SPACING, SPACING + 1, total // 2, total - 1, total, total + 3}
    offsets |= {rnd.randrange(total + 2) for _ in range(6)}
    found = [(offset, rnd.choice([1, 3, 7, 16])) for offset in sorted(offsets) if offset >= 0]
    rnd.shuffle(found)
    return found


def check(cache: Cache, model: Model, rnd: random.Random) -> int:
    """Every window of every sort and filter is the model's slice, and issues stand where
    the model has them; how many windows were read."""
    read = 0
    for flt in FILTERS:
        for sort in SORTS:
            want = expected(list(model.rows.values()), flt, sort)
            for offset, limit in windows(rnd, len(want)):
                got = [row.id for row in cache.reads.window(flt, sort, offset, limit)]
                assert got == want[offset : offset + limit], (flt, sort, offset, limit)
                read += 1
            for key in rnd.sample(sorted(model.rows), 6):
                at = want.index(key) if key in want else None
                assert cache.reads.position(flt, sort, key) == at, (flt, sort, key)
    return read


def filled(cache: Cache, rnd: random.Random, n: int = 160) -> Model:
    model = Model()
    made = [random_issue(rnd, number) for number in range(1, n + 1)]
    for start in range(0, n, 50):
        pull(cache, model, made[start : start + 50])
    return model


@pytest.mark.parametrize("seed", [1, 2])
def test_anchored_windows_are_the_offset_windows_through_edits_and_pulls(
    cache: Cache, seed: int
) -> None:
    rnd = random.Random(seed)
    model = filled(cache, rnd)
    assert check(cache, model, rnd) > 1000

    ids = list(model.rows)
    edited = rnd.sample(ids, 12)
    for key in edited[:8]:
        changes: dict[str, Any] = {
            "title": rnd.choice(TITLES),
            "status": rnd.choice(STATUSES),
            "priority": rnd.choice(PRIORITIES),
            "assignee": rnd.choice(ASSIGNEES),
        }
        cache.outbox.update(ISSUE, key, changes)
        model.rows[key].record.update(changes)
    for key in edited[8:]:
        cache.outbox.delete(ISSUE, key)
        del model.rows[key]
    for title in ("alpha", "Zeta", "beta"):
        local = cache.outbox.create(ISSUE, {"title": title, "status": "todo"})
        detail = cache.reads.issue(local)
        assert detail is not None
        position = (1 << 62) + detail.entries[0].id
        model.rows[local] = Row(local, position, dict(detail.record), [])
    check(cache, model, rnd)

    untouched = [key for key in ids if key not in edited]
    moved = [  # newer than every stored row: the cache skips a record older than its own
        {**random_issue(rnd, int(key[4:])), "id": key, "updated_at": stamp(rnd.randint(31, 40))}
        for key in rnd.sample(untouched, 15)
    ]
    gone = [
        {"id": key, "deleted": True, "updated_at": stamp(99)}
        for key in rnd.sample(untouched, 6)
        if all(key != record["id"] for record in moved)
    ]
    new = [random_issue(rnd, number) for number in range(1000, 1020)]
    pull(cache, model, [*moved, *gone, *new])
    check(cache, model, rnd)


def test_a_pull_moves_every_deep_window_read_before_it(cache: Cache) -> None:
    """Anchors made before a pull must not place rows after it: the newest issues arrive at
    the top of the default order, and every deep window shifts by as many."""
    rnd = random.Random(3)
    model = filled(cache, rnd, 120)
    newest_first = IssueSort("updated", True)
    before = [row.id for row in cache.reads.window(IssueFilter(), newest_first, 60, 10)]
    assert before == expected(list(model.rows.values()), IssueFilter(), newest_first)[60:70]
    pull(cache, model, [issue(500 + n, updated_at=stamp(1000 + n)) for n in range(7)])
    want = expected(list(model.rows.values()), IssueFilter(), newest_first)
    for offset in (60, 30, 100, 119):
        got = [row.id for row in cache.reads.window(IssueFilter(), newest_first, offset, 10)]
        assert got == want[offset : offset + 10]
    assert [row.id for row in cache.reads.window(IssueFilter(), newest_first, 67, 10)] == before


def test_every_change_to_the_issues_table_draws_a_new_revision(cache: Cache) -> None:
    """Insert, update and delete, by the pull or by hand: each moves the revision anchors
    are kept at, and a write to another table does not."""
    db = cache.server._db

    def revision() -> tuple[int, int]:
        with db.read() as conn:
            row = conn.execute("SELECT seq, tag FROM issue_moves ORDER BY seq DESC LIMIT 1")
            seq, tag = row.fetchone()
            return int(seq), int(tag)

    seen = {revision()}
    cache.server.apply_page(ISSUE, [issue(1), issue(2)])
    seen.add(revision())
    cache.server.apply_page(ISSUE, [issue(1, title="Renamed")])
    seen.add(revision())
    cache.server.apply_page(
        ISSUE, [{"id": issue(2)["id"], "deleted": True, "updated_at": stamp(9)}]
    )
    seen.add(revision())
    with db.write() as conn:
        conn.execute("UPDATE issues SET number = 7")
    seen.add(revision())
    assert len(seen) == 5
    cache.state.set("elsewhere", 1)
    cache.outbox.update(ISSUE, issue(1)["id"], {"title": "Mine"})
    assert revision() == max(seen)


def counted_steps(patch: pytest.MonkeyPatch) -> list[object]:
    """The boundaries `anchors.walk` reads the next anchor after, from now on (None: the
    top of the list)."""
    steps: list[object] = []
    walk = anchors.walk

    def counting(book: anchors.Book, token: Any, start: int, step: Any) -> Any:
        def counted(after: Any, rows: int) -> Any:
            steps.append(after)
            return step(after, rows)

        return walk(book, token, start, counted)

    patch.setattr(anchors, "walk", counting)
    return steps


def test_anchors_outlive_writes_elsewhere_and_follow_the_table_through_its_log(
    cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deep window after a write to another table (sync state, the outbox), or after a
    pull of a few issues, starts from the anchors already found, moved by the log; a pull
    of more than `MOVES_REPAIRED` issues starts them again from the top."""
    rnd = random.Random(4)
    model = filled(cache, rnd, 100)
    steps = counted_steps(monkeypatch)
    sort = IssueSort("title", False)
    cache.reads.window(IssueFilter(), sort, 40, 5)
    made = len(steps)
    assert made > 0
    cache.state.set("elsewhere", 1)
    cache.reads.window(IssueFilter(), sort, 40, 5)
    cache.reads.window(IssueFilter(), sort, 20, 5)
    assert len(steps) == made

    ahead = expected(list(model.rows.values()), IssueFilter(), sort)[:40]
    pull(
        cache,
        model,
        [issue(700, title="a"), issue(int(ahead[5][4:]), title="zzz", updated_at=stamp(50))],
    )
    pull(cache, model, [{"id": ahead[20], "deleted": True, "updated_at": stamp(60)}])
    for offset in (40, 20, 6):
        got = [row.id for row in cache.reads.window(IssueFilter(), sort, offset, 5)]
        assert got == expected(list(model.rows.values()), IssueFilter(), sort)[offset : offset + 5]
        if offset == 40:
            assert len(steps) == made  # the anchors moved by the log served it as they were

    monkeypatch.setattr(anchors, "MOVES_REPAIRED", 3)
    pull(cache, model, [issue(800 + n, title="Zeta") for n in range(4)])
    made = len(steps)
    got = [row.id for row in cache.reads.window(IssueFilter(), sort, 40, 5)]
    assert got == expected(list(model.rows.values()), IssueFilter(), sort)[40:45]
    assert steps[made] is None  # found again from the top of the list


def test_anchors_read_in_a_write_rolled_back_never_serve_later(cache: Cache) -> None:
    """Windows read inside a write that changes issues and then rolls back see a revision
    the log gives to the next change as well: its random tag tells the two apart."""
    model = Model()
    pull(cache, model, [issue(n) for n in range(1, 91)])
    newest_first = IssueSort("updated", True)
    db = cache.server._db
    with pytest.raises(RuntimeError), db.write() as conn:
        conn.execute("UPDATE issues SET updated_key = NULL WHERE rid IN (50, 51, 52)")
        cache.reads.window(IssueFilter(), newest_first, 50, 10)  # the oldest 40, from the end
        raise RuntimeError("rolled back")
    pull(cache, model, [issue(n, title="Renamed") for n in (60, 61, 62)])
    for offset in (20, 50, 75):
        got = [row.id for row in cache.reads.window(IssueFilter(), newest_first, offset, 10)]
        want = expected(list(model.rows.values()), IssueFilter(), newest_first)
        assert got == want[offset : offset + 10]


@pytest.mark.parametrize("sort", SORTS, ids=lambda s: f"{s.key}-{s.descending}")
@pytest.mark.parametrize("flt", [IssueFilter(), IssueFilter(mine="usr_1")], ids=["all", "mine"])
def test_the_rows_after_an_anchor_are_read_along_its_index_unsorted(
    cache: Cache, sort: IssueSort, flt: IssueFilter
) -> None:
    """Each range after an anchor is read (and counted, when skipped whole) along the
    order's index, or merged in order from the filter's driving index: no sort of the rows
    after the anchor, whatever its sort columns hold."""
    cache.server.apply_page(ISSUE, [issue(1), issue(2, number=None, updated_at=None)])
    db = cache.reads._db
    with db.read() as conn:
        compiled = compile_filter(flt, None, {})
        for cells in ([1, 5, 5], [2, None, 5], [3, 9, 7]):  # a rank and rid are never NULL
            after = cells[-len(query.ORDERINGS[sort.key].columns) :]
            for sql, params in query.after_queries(compiled, sort, after):
                for run in (sql, f"SELECT count(*) FROM ({sql})"):
                    plan = [
                        str(row[3])
                        for row in conn.execute(f"EXPLAIN QUERY PLAN {run}", (*params, 10, 3))
                    ]
                    assert not [line for line in plan if "TEMP B-TREE" in line], plan
