"""The effective issue list: windows and counts against an independent model, and the query
plan behind every filter and sort."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from cache_factories import Clock, Record, comment, issue, query_plans, stamp
from cache_oracle import Row, expected

from cache import (
    Cache,
    EntryState,
    FieldConflict,
    IssueFilter,
    IssueSort,
    Operation,
    Resource,
)
from cache.resources import unknown_rank
from cache.schema import UNKNOWN_CHOICE_RANKS
from issuefields import ASSIGNEE, LABELS, PRIORITY, PROJECT, SORT_KEYS, STATUS

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "theta",
    "kappa",
    "lambda",
    "sigma",
    "omega",
]
STATUSES = ["backlog", "todo", "in_progress", "in_review", "done", "canceled", "triage", None]
PRIORITIES = ["urgent", "high", "medium", "low", "none", "p0"]
LOCAL_BASE = 1 << 62

FILTERS: dict[str, IssueFilter] = {
    "all": IssueFilter(),
    "status": IssueFilter(status=frozenset({"todo", "done"})),
    "status unknown": IssueFilter(status=frozenset({"triage"})),
    "status mixed": IssueFilter(status=frozenset({"backlog", "triage"})),
    "priority": IssueFilter(priority=frozenset({"urgent", "p0"})),
    "assignee": IssueFilter(assignee=frozenset({"usr_1", None})),
    "project": IssueFilter(project=frozenset({"prj_2"})),
    "no project": IssueFilter(project=frozenset({None})),
    "label": IssueFilter(label=frozenset({"bug"})),
    "labels": IssueFilter(label=frozenset({"bug", "api"})),
    "mine": IssueFilter(mine="usr_2"),
    "text": IssueFilter(text="gamma"),
    "text prefix": IssueFilter(text="alpha eps"),
    "text comment": IssueFilter(text="sigma"),
    "text space": IssueFilter(text="kap "),
    "combined": IssueFilter(
        status=frozenset({"todo", "in_progress", "triage"}),
        mine="usr_1",
        label=frozenset({"ui"}),
        text="a",
    ),
}
SORTS = [IssueSort(key, descending) for key in SORT_KEYS for descending in (False, True)]


def random_issue(rnd: random.Random, n: int) -> Record:
    title = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 3)))
    record: Record = {
        "id": f"iss_{n:04d}",
        "number": rnd.choice([n, n, n, None, "X-1"]),
        "title": rnd.choice([title, title.upper(), title.capitalize(), "Zed"]),
        "description": " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 6))),
        "status": rnd.choice(STATUSES),
        "priority": rnd.choice(PRIORITIES),
        "assignee": rnd.choice(["usr_1", "usr_2", "usr_3", None]),
        "project_id": rnd.choice(["prj_1", "prj_2", None]),
        "labels": rnd.sample(["bug", "ui", "api"], rnd.randint(0, 2)),
        "created_at": stamp(rnd.randint(0, 40)),
        "updated_at": rnd.choice([stamp(rnd.randint(0, 20)), None]),
    }
    return record


class World:
    """A cache with server rows and local edits, and the model of what it should show."""

    def __init__(self, path: Path, seed: int = 3, size: int = 150) -> None:
        rnd = random.Random(seed)
        self.cache = Cache.open(path, clock=Clock(start=1000.0))
        records = [random_issue(rnd, n) for n in range(1, size + 1)]
        self.cache.server.apply_page(Resource.ISSUES, records)
        self.rows = {r["id"]: Row(r["id"], i + 1, dict(r), []) for i, r in enumerate(records)}
        bodies = {"iss_0007": "sigma words", "iss_0012": "more sigma", "iss_0020": "plain"}
        self.cache.server.apply_page(
            Resource.COMMENTS,
            [comment(i, issue_id, body) for i, (issue_id, body) in enumerate(bodies.items())],
        )
        for issue_id, body in bodies.items():
            self.rows[issue_id].comments.append(body)
        for n in rnd.sample(range(1, size + 1), 25):
            changes = {
                "title": rnd.choice(WORDS).capitalize(),
                "status": rnd.choice(STATUSES),
                "priority": rnd.choice(PRIORITIES),
                "labels": rnd.sample(["bug", "ui", "api"], rnd.randint(0, 2)),
            }
            changes = dict(rnd.sample(sorted(changes.items()), rnd.randint(1, 4)))
            self.edit(f"iss_{n:04d}", changes)
        for n in (3, 44, 90):
            self.cache.outbox.delete(Resource.ISSUES, f"iss_{n:04d}")
            del self.rows[f"iss_{n:04d}"]
        for title in ("omega gamma", "Alpha local", "zzz"):
            local = self.cache.outbox.create(
                Resource.ISSUES, {"title": title, "status": "todo", "assignee": "usr_1"}
            )
            detail = self.cache.reads.issue(local)
            assert detail is not None
            entry_id = detail.entries[0].id
            self.rows[local] = Row(local, LOCAL_BASE + entry_id, dict(detail.record), [])
        self.cache.outbox.create(Resource.COMMENTS, {"issue_id": "iss_0030", "body": "sigma local"})
        self.rows["iss_0030"].comments.append("sigma local")
        pending = [e for e in self.cache.outbox.entries() if e.state is EntryState.PENDING]
        refused = pending[0]
        assert refused.operation is Operation.UPDATE
        self.cache.push.mark_sending(refused.id)
        self.cache.push.mark_failed(refused.id, "rejected")
        self.rows[refused.target_id].record.update(refused.base)
        self.cache.push.record_conflicts(pending[1].id, [FieldConflict("title", "a", "b", "c")])

    def edit(self, issue_id: str, changes: Record) -> None:
        self.cache.outbox.update(Resource.ISSUES, issue_id, changes)
        self.rows[issue_id].record.update(changes)

    def expected(self, flt: IssueFilter, sort: IssueSort) -> list[str]:
        return expected(list(self.rows.values()), flt, sort)


@pytest.fixture
def world(tmp_path: Path) -> World:
    built = World(tmp_path / "cache.db")
    yield built
    built.cache.close()


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_windows_and_counts_match_the_model(world: World, name: str) -> None:
    flt = FILTERS[name]
    for sort in SORTS:
        want = world.expected(flt, sort)
        assert world.cache.reads.count(flt) == len(want), sort
        full = [row.id for row in world.cache.reads.window(flt, sort, 0, 1000)]
        assert full == want, sort
        for offset, limit in ((0, 7), (5, 10), (len(want) // 2, 9), (len(want) - 4, 10), (3, 0)):
            page = [row.id for row in world.cache.reads.window(flt, sort, offset, limit)]
            assert page == want[max(0, offset) : max(0, offset) + limit], (sort, offset, limit)


def test_rows_carry_effective_values_and_markers(world: World) -> None:
    rows = {row.id: row for row in world.cache.reads.window(IssueFilter(), IssueSort(), 0, 1000)}
    states = {row.sync_state.value for row in rows.values()}
    assert states == {"synced", "pending", "failed", "conflict"}
    for issue_id, model in world.rows.items():
        row = rows[issue_id]
        assert (row.title, row.status, row.priority) == (
            model.record.get("title"),
            model.record.get("status"),
            model.record.get("priority"),
        )
        assert list(row.labels) == [x for x in model.record.get("labels") or []]


def test_picker_values_include_local_edits(world: World) -> None:
    world.edit("iss_0001", {"status": "blocked", "labels": ["brand-new"]})
    statuses = world.cache.reads.distinct_values(STATUS)
    assert statuses[:6] == ["backlog", "todo", "in_progress", "in_review", "done", "canceled"]
    assert statuses[6:] == ["blocked", "triage"]
    assert world.cache.reads.distinct_values(PRIORITY)[-1] == "p0"
    assert "brand-new" in world.cache.reads.distinct_values(LABELS)
    assert world.cache.reads.distinct_values(ASSIGNEE) == ["usr_1", "usr_2", "usr_3", None]
    assert world.cache.reads.distinct_values(PROJECT) == ["prj_1", "prj_2", None]


def test_unknown_choice_values_are_read_from_their_own_index(tmp_path: Path) -> None:
    """The values a choice field's table does not list are found by hopping along a small
    index of those issues, not by reading every such issue's row (issue 18: 20,000 rows of
    1,000,000, 65-112 ms for the status picker); the answer is the one the rows give."""
    statuses = ["todo", "triage", "blocked", "triage", None, "x-late", "done", "blocked"]
    priorities = ["high", "p0", "p1", "p0", "low", "none", "urgent", None]
    with Cache.open(tmp_path / "cache.db") as cache:
        cache.server.apply_page(
            Resource.ISSUES,
            [
                issue(n, status=status, priority=priority)
                for n, (status, priority) in enumerate(zip(statuses, priorities, strict=True), 1)
            ],
        )
        assert cache.reads.distinct_values(STATUS)[6:] == ["blocked", "triage", "x-late"]
        assert cache.reads.distinct_values(PRIORITY)[5:] == ["p0", "p1"]
        conn = sqlite3.connect(cache.path)
        for field in (STATUS, PRIORITY):
            rank = unknown_rank(field)
            assert UNKNOWN_CHOICE_RANKS[field.member] == rank
            plan = conn.execute(
                f"EXPLAIN QUERY PLAN SELECT min({field.member}) FROM issues "
                f"INDEXED BY issues_unknown_{field.member} WHERE {field.member}_rank = {rank}"
            ).fetchall()
            assert f"COVERING INDEX issues_unknown_{field.member}" in str(plan), plan
        conn.close()


@pytest.mark.parametrize(
    "text", ['"', "*", "NEAR", "(", ")", 'a"b', "NEAR(a b)", "x OR", "AND", "-", "^", ":", "'"]
)
def test_search_syntax_in_user_text_never_raises(cache: Cache, text: str) -> None:
    for typed in (text, f"alpha {text}", f"{text} beta", text * 3):
        cache.reads.count(IssueFilter(text=typed))
        cache.reads.window(IssueFilter(text=typed), IssueSort(), 0, 10)


def bad_plan_lines(lines: list[str]) -> list[str]:
    return [
        line
        for line in lines
        if line == "SCAN issues"
        or (line.startswith("SCAN issues ") and "INDEX" not in line)
        or "TEMP B-TREE FOR ORDER BY" in line
        or "TEMP B-TREE FOR RIGHT PART OF ORDER BY" in line
        or "TEMP B-TREE FOR LAST" in line
    ]


DRIVEN = {
    "status": ("status", "status_rank=?", 2),
    "status unknown": ("status", "status_rank=?", 1),
    "status mixed": ("status", "status_rank=?", 2),
    "priority": ("priority", "priority_rank=?", 2),
    "assignee": ("assignee", "assignee=?", 2),
    "project": ("project", "project_id=?", 1),
    "no project": ("project", "project_id=?", 1),
    "mine": ("assignee", "assignee=?", 1),
    "combined": ("assignee", "assignee=?", 1),
}
"""Filters whose windows in the default order read ranges of their field's index (the
field, the seek, how many ranges)."""


@pytest.mark.parametrize("key", list(SORT_KEYS))
@pytest.mark.parametrize("name", sorted(FILTERS))
def test_every_filter_and_sort_is_served_by_an_index(cache: Cache, name: str, key: str) -> None:
    cache.server.apply_page(Resource.ISSUES, [issue(1, labels=["bug", "ui", "api"])])
    for descending in (False, True):
        lines = query_plans(cache, FILTERS[name], IssueSort(key, descending))
        assert bad_plan_lines(lines) == [], lines
        index = "INDEX" if unknown_values(FILTERS[name]) else "COVERING INDEX"
        if key == "updated" and name in DRIVEN:
            field, seek, ranges = DRIVEN[name]
            searches = [line for line in lines if line.startswith("SEARCH issues USING")]
            assert len(searches) >= ranges, lines
            assert all(f"INDEX issues_by_{field} ({seek})" in line for line in searches[:ranges])
            assert lines[0] == ("MERGE (UNION ALL)" if ranges > 1 else searches[0]), lines
        else:
            assert lines[0] == f"SCAN issues USING {index} issues_by_{key}"


def unknown_values(flt: IssueFilter) -> bool:
    """Unknown statuses and priorities share a rank, so their text is read from the row."""
    return bool(flt.status - set(STATUSES[:6]) or flt.priority - set(PRIORITIES[:5]))


def test_label_filters_match_whole_labels_only(cache: Cache) -> None:
    tricky = ['a","b', "a", "b", 'x"', "\x1f", "é", "a b", "bug"]
    cache.server.apply_page(
        Resource.ISSUES,
        [issue(n, labels=[label]) for n, label in enumerate(tricky, start=1)]
        + [issue(20, labels=['a","b', "bug", "bug"]), issue(21, labels="bug")],
    )
    for n, label in enumerate(tricky, start=1):
        rows = cache.reads.window(IssueFilter(label=frozenset({label})), IssueSort("number"), 0, 50)
        want = {f"iss_{n:06d}"} | ({"iss_000020"} if label in ('a","b', "bug") else set())
        assert {row.id for row in rows} == want, label
        assert cache.reads.count(IssueFilter(label=frozenset({label}))) == len(want)
    assert cache.reads.distinct_values(LABELS) == sorted(tricky)


def test_labels_past_the_mask_bits_still_filter_exactly(cache: Cache) -> None:
    names = [f"label{n:02d}" for n in range(70)]
    cache.server.apply_page(
        Resource.ISSUES,
        [issue(n + 1, labels=[name, names[(n + 1) % 70]]) for n, name in enumerate(names)],
    )
    for wanted in ({"label01"}, {"label65"}, {"label03", "label66"}, {"label69", "never"}):
        flt = IssueFilter(label=frozenset(wanted))
        want = sorted(
            f"iss_{n + 1:06d}"
            for n, name in enumerate(names)
            if {name, names[(n + 1) % 70]} & wanted
        )
        assert sorted(row.id for row in cache.reads.window(flt, IssueSort(), 0, 100)) == want
        assert cache.reads.count(flt) == len(want)
        assert bad_plan_lines(query_plans(cache, flt, IssueSort())) == []


def test_several_labels_are_counted_from_the_label_masks(cache: Cache) -> None:
    sets = [["bug"], ["ui"], ["bug", "ui"], ["api"], [], ["ui", "api"], ["bug", "api", "ui"]]
    cache.server.apply_page(
        Resource.ISSUES, [issue(n, labels=s) for n, s in enumerate(sets, start=1)]
    )
    cache.outbox.update(Resource.ISSUES, "iss_000004", {"labels": ["bug"]})
    cache.outbox.update(Resource.ISSUES, "iss_000003", {"labels": []})
    for wanted, count in (({"bug", "ui"}, 5), ({"ui", "api"}, 3), ({"db", "ui"}, 3)):
        flt = IssueFilter(label=frozenset(wanted))
        assert cache.reads.count(flt) == count, wanted
        plans = query_plans(cache, flt, IssueSort())
        assert any("issues_by_label_mask" in line for line in plans), plans


def test_an_issue_is_found_by_its_number_as_shown(cache: Cache) -> None:
    cache.server.apply_page(
        Resource.ISSUES, [issue(n) for n in (1, 2, 3)] + [issue(4, number="X-4")]
    )
    cache.outbox.update(Resource.ISSUES, "iss_000002", {"title": "Edited here"})
    cache.outbox.delete(Resource.ISSUES, "iss_000003")
    cache.outbox.create(Resource.ISSUES, {"title": "Offline, no number yet"})
    ids = {n: cache.reads.resolve_issue(f"#{n}") for n in (1, 2, 3, 4, 99)}
    found = {n: cache.reads.issue(i) for n, i in ids.items() if i is not None}
    assert {n: d.issue.id for n, d in found.items() if d is not None} == {
        1: "iss_000001",
        2: "iss_000002",
    }
    detail = found[2]
    assert detail is not None
    assert (detail.issue.title, len(detail.entries)) == ("Edited here", 1)
