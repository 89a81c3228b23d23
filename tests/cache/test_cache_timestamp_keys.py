"""The indexes that order issues by time hold an integer key of each timestamp, not its text
(issue 18: 27 bytes became 8 in six indexes). The text columns stay what every read shows and
compares; the keys must sort exactly as the text did, and a cache written before the
`issue_timestamp_keys` step is converted on open with nothing lost: records, their order in
every sort, search, labels, the outbox, conflicts and drafts."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cache_factories import Record, comment, issue, stamp
from cache_oracle import Row, expected
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlite_utils import Database

from cache import Cache, IssueFilter, IssueSort, Resource, suspects
from cache.ordering import value_key
from cache.resources import KEY_COLUMNS, SPECS, as_timestamp, stamp_key, stamp_order
from cache.schema import (
    FILTER_INDEXES_IN_DEFAULT_ORDER_SQL,
    KNOWN_STEPS,
    MIGRATIONS,
    SERVER_COPY_SQL,
    UNKNOWN_CHOICE_RANKS,
    _stamp_order_v1,
)
from issuefields import SORT_KEYS

canonical = st.datetimes(
    min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999999)
).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
shaped = st.builds(
    lambda y, mo, d, h, mi, s, f: f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}.{f:06d}Z",
    st.integers(0, 9999),
    st.integers(0, 19),
    st.integers(0, 39),
    st.integers(0, 29),
    st.integers(0, 59),
    st.integers(0, 69),
    st.integers(0, 999999),
)
"""Text of the canonical shape whose fields need not make a date (month 19, second 69)."""
odd = st.one_of(
    st.none(),
    st.text(max_size=30),
    st.sampled_from(
        ["yesterday", "1700000000", "2026-13-01T00:00:00.000000Z", "2026-01-01T00:00:00Z", ""]
    ),
    canonical.map(lambda text: text[:-1] + "z"),
    canonical.map(lambda text: " " + text),
)


@settings(max_examples=400)
@given(st.one_of(canonical, shaped), st.one_of(canonical, shaped))
def test_keys_of_timestamps_compare_as_their_texts(a: str, b: str) -> None:
    ka, kb = stamp_order(a), stamp_order(b)
    assert isinstance(ka, int) and isinstance(kb, int)
    assert 0 <= ka < 2**63
    assert (ka < kb, ka == kb) == (a < b, a == b)


@settings(max_examples=400)
@given(st.one_of(canonical, shaped, odd))
def test_the_migration_writes_the_keys_the_code_writes(value: str | None) -> None:
    assert _stamp_order_v1(value) == stamp_order(value)


@settings(max_examples=100)
@given(st.lists(st.one_of(canonical, shaped, odd), min_size=1, max_size=12))
def test_sqlite_orders_the_keys_as_the_list_merges_them(values: list[str | None]) -> None:
    """Local edits are placed among server rows by `value_key` (cache.ordering): SQLite must
    sort the stored keys the same way, text that is not a timestamp after every number."""
    with closing(sqlite3.connect(":memory:")) as conn:
        conn.execute("CREATE TABLE t (rid INTEGER PRIMARY KEY, k)")
        conn.executemany("INSERT INTO t (k) VALUES (?)", [(stamp_key(v),) for v in values])
        by_sqlite = [rid for (rid,) in conn.execute("SELECT rid FROM t ORDER BY k, rid")]
    keys = [stamp_key(v) for v in values]
    assert by_sqlite == sorted(range(1, len(values) + 1), key=lambda r: value_key(keys[r - 1]))


ODD_TIMES: list[Record] = [
    issue(1, updated_at=stamp(5)),
    issue(2, updated_at=stamp(5)),  # a tie: by rid
    issue(3, updated_at="2026-03-01T00:00:04+00:00", created_at="2026-03-01T00:00:09Z"),
    issue(4, updated_at=None, created_at=None),
    issue(5, updated_at="yesterday", created_at="later"),
    {"id": "iss_000006", "title": "no times at all"},
    issue(7, updated_at="2026-03-01T00:00:04.000001Z", status="done", priority="urgent"),
]


def test_every_sort_of_odd_times_is_the_order_of_their_text(cache: Cache) -> None:
    """The order as it was when the indexes held the text (what `cache_oracle` computes),
    for times sent in another form, missing, tied, or not times at all."""
    cache.server.apply_page(Resource.ISSUES, ODD_TIMES)
    rows = [Row(str(r["id"]), n, r, []) for n, r in enumerate(ODD_TIMES)]
    normalised = [
        Row(row.id, row.position, {**row.record, **_canonical_times(row.record)}, [])
        for row in rows
    ]
    for key in SORT_KEYS:
        for descending in (False, True):
            sort = IssueSort(key, descending)
            shown = [r.id for r in cache.reads.window(IssueFilter(), sort, 0, 50)]
            assert shown == expected(normalised, IssueFilter(), sort), sort


def _canonical_times(record: Record) -> dict[str, Any]:
    return {member: as_timestamp(record.get(member)) for member in KEY_COLUMNS}


OLD_TIME_INDEXES = [
    *SERVER_COPY_SQL.split(";")[1:3],
    *FILTER_INDEXES_IN_DEFAULT_ORDER_SQL.split(";")[4:8],
]
"""The six indexes as the steps before `issue_timestamp_keys` made them."""


def downgrade(path: Path) -> None:
    """Put a cache back at the schema before `issue_timestamp_keys`, its rows as that schema's
    code wrote them (the same columns less the keys), every other table untouched (the
    indexes of the later step `issue_unknown_choices`, the log of the later steps
    `issue_moves` and `issue_inserts_logged`, the anchors of `issue_anchors` and the
    comments' count of `comment_rewrites` dropped)."""
    with closing(sqlite3.connect(path)) as conn:
        for trigger in ("comment_rewritten", "comment_gone"):
            conn.execute(f"DROP TRIGGER {trigger}")
        conn.execute("DROP TABLE rewrites")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'comment_rewrites'")
        conn.execute("DROP TABLE issue_anchors")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'issue_anchors'")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'issue_inserts_logged'")
        for trigger in ("issue_moved", "issue_moved_out"):
            conn.execute(f"DROP TRIGGER {trigger}")
        conn.execute("DROP TABLE issue_moves")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'issue_moves'")
        for member in UNKNOWN_CHOICE_RANKS:
            conn.execute(f"DROP INDEX issues_unknown_{member}")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'issue_unknown_choices'")
        for statement in OLD_TIME_INDEXES:
            conn.execute(f"DROP INDEX {statement.split()[2]}")
            conn.execute(statement)
        for key in KEY_COLUMNS.values():
            conn.execute(f"ALTER TABLE issues DROP COLUMN {key}")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'issue_timestamp_keys'")
        conn.commit()
        sql = "\n".join(str(r[0]) for r in conn.execute("SELECT sql FROM sqlite_master"))
    assert "created_key" not in sql and "updated_key" not in sql and "updated_at DESC" in sql


SORTS = [IssueSort(key, descending) for key in SORT_KEYS for descending in (False, True)]
FILTERS = {
    "all": IssueFilter(),
    "status": IssueFilter(status=frozenset({"todo", "done"})),
    "mine": IssueFilter(mine="usr_1"),
    "project": IssueFilter(project=frozenset({"prj_1"})),
    "label": IssueFilter(label=frozenset({"ui"})),
    "search": IssueFilter(text="findable"),
}


def everything(cache: Cache) -> dict[str, Any]:
    """What the app and the CLI read, as comparable values."""
    ids = [f"iss_{n:06d}" for n in range(1, 40)] + ["iss_000006"]
    windows = {
        (name, sort.key, sort.descending): [
            (row.id, row.cells, row.labels, row.sync_state)
            for row in cache.reads.window(flt, sort, 0, 60)
        ]
        for name, flt in FILTERS.items()
        for sort in SORTS
    }
    detail = cache.reads.issue("iss_000002")
    return {
        "records": {key: cache.server.server_record(Resource.ISSUES, key) for key in ids},
        "windows": windows,
        "counts": {name: cache.reads.count(flt) for name, flt in FILTERS.items()},
        "positions": [cache.reads.position(FILTERS["all"], sort, "iss_000003") for sort in SORTS],
        "comments": [c.record for c in detail.comments] if detail else None,
        "outbox": [(e.id, e.state.value, e.base, e.changes) for e in cache.outbox.entries()],
        "conflicts": [(c.entry_id, c.field, c.mine, c.theirs) for c in cache.outbox.conflicts()],
        "draft": cache.drafts.get("comment:iss_000001"),
    }


def test_an_old_cache_gets_the_keys_keeping_every_row_and_every_order(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    issues = [
        *ODD_TIMES,
        *(
            issue(
                n,
                updated_at=stamp(n % 7 * 1000 + n),
                created_at=stamp(100 - n),
                status=("todo", "done", "triage")[n % 3],
                assignee=("usr_1", None)[n % 2],
                project_id=("prj_1", "prj_2")[n % 2],
                labels=["ui"] if n % 4 else ["bug", "ui"],
            )
            for n in range(8, 40)
        ),
    ]
    with Cache.open(path) as cache:
        cache.server.apply_page(Resource.ISSUES, issues)
        cache.server.apply_page(
            Resource.COMMENTS,
            [comment(1, "iss_000002", "findable words"), comment(2, "iss_000002", "")],
        )
        cache.outbox.update(Resource.ISSUES, "iss_000009", {"title": "edited offline"})
        cache.outbox.update(Resource.ISSUES, "iss_000010", {"status": "todo"})
        cache.outbox.create(Resource.ISSUES, {"title": "typed offline findable"})
        cache.drafts.save("comment:iss_000001", {"body": "half a thought"})
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE outbox SET state = 'conflict' WHERE record_id = 'iss_000009'")
        conn.execute(
            "INSERT INTO conflicts (entry_id, field, base, mine, theirs, created_at) SELECT id, "
            """'title', '"Issue 9"', '"edited offline"', '"theirs"', 3.0 FROM outbox """
            "WHERE record_id = 'iss_000009'"
        )
        conn.commit()
    with Cache.open(path) as cache:
        before = everything(cache)
    downgrade(path)
    with Cache.open(path) as cache:
        after = everything(cache)
        applied = [m.name for m in MIGRATIONS.applied(Database(path))]
    assert applied == list(KNOWN_STEPS)
    assert after == before
    assert before["counts"]["search"] == 2 and before["conflicts"] and before["draft"]
    assert len(before["outbox"]) == 3 and before["counts"]["label"] == 32
    with closing(sqlite3.connect(path)) as conn:
        rows = conn.execute("SELECT created_at, created_key, updated_at, updated_key FROM issues")
        for created, created_key, updated, updated_key in rows:
            assert (created_key, updated_key) == (stamp_order(created), stamp_order(updated))
        held = [str(r[0]) for r in conn.execute("SELECT sql FROM sqlite_master WHERE sql != ''")]
        assert sum("updated_key DESC" in sql for sql in held) == 4
        assert not any("updated_at DESC" in sql or "(created_at," in sql for sql in held), held


def test_keys_follow_every_write_of_a_record(cache: Cache) -> None:
    """A record stored again (newer, or the same time with other content) gets its new keys."""
    cache.server.apply_page(Resource.ISSUES, [issue(1), issue(2)])
    cache.server.apply_page(Resource.ISSUES, [issue(1, updated_at=stamp(9)), issue(2, title="x")])
    with closing(sqlite3.connect(cache.path)) as conn:
        rows = conn.execute(
            "SELECT id, created_key, updated_key FROM issues ORDER BY id"
        ).fetchall()
    assert rows == [
        ("iss_000001", stamp_order(stamp(1)), stamp_order(stamp(9))),
        ("iss_000002", stamp_order(stamp(2)), stamp_order(stamp(2))),
    ]


def test_issues_made_near_a_create_are_found_by_the_creation_index(cache: Cache) -> None:
    """The issues a create about to be sent could be taken for (`suspects`): those made within
    the hour, found as their text says, by a range of `issues_by_created`."""
    base = datetime(2026, 3, 1, tzinfo=UTC)
    now = (base + timedelta(hours=5)).timestamp()
    times = {
        1: stamp(5 * 3600 - 3601),  # an hour and a second before: not recent
        2: stamp(5 * 3600 - 3600),
        3: stamp(5 * 3600 - 10),
        4: "2026-03-01T04:30:00+00:00",
        5: "yesterday",  # text after every time, as it always was
        6: "0000",
    }
    cache.server.apply_page(Resource.ISSUES, [issue(n, created_at=t) for n, t in times.items()])
    seen: list[str] = []
    with closing(sqlite3.connect(cache.path)) as conn:
        conn.set_trace_callback(seen.append)
        found = suspects._recent(conn, Resource.ISSUES, now)
        conn.set_trace_callback(None)
        [sql] = [s for s in seen if "created_at >=" in s]  # as run, its values in place
        plan = [str(r[3]) for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
    assert found == ["iss_000005", "iss_000003", "iss_000004", "iss_000002"]
    assert any("INDEX issues_by_created (created_key>?)" in line for line in plan), plan


def test_only_the_issues_table_has_key_columns() -> None:
    assert set(KEY_COLUMNS.values()) <= set(SPECS[Resource.ISSUES].column_names)
    for resource, spec in SPECS.items():
        if resource is not Resource.ISSUES:
            assert not set(KEY_COLUMNS.values()) & set(spec.column_names)
