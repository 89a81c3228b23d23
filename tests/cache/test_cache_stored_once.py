"""Each server record is stored once: its members in their columns, the rest in `extra`, and
read back whole (issue 18: the JSON copy of every record beside its columns was half the
cache). A cache written before the `records_stored_once` step is converted on open with
nothing lost: records, search, labels, the outbox, conflicts and drafts."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from cache_factories import Record, comment, issue, reset_server_copy, stamp
from sqlite_utils import Database

from cache import Cache, IssueFilter, IssueSort, Resource
from cache.labels import mask_of
from cache.resources import KEY_COLUMNS, SPECS, dumps, labels_of
from cache.schema import KNOWN_STEPS, MIGRATIONS

ODD_ISSUES: list[Record] = [
    issue(1, title="", description="", labels=["bug"]),
    issue(2, assignee="usr_1", project_id="prj_1", labels=["bug", "ui", 7]),
    {"id": "iss_000003", "updated_at": stamp(3)},  # almost every member missing
    issue(4, updated_at="2026-01-01T00:00:04+00:00", created_at="yesterday"),
    issue(5, number="A-5", status=5, priority=None, title=None, description=["x"]),
    issue(6, number=True, assignee="", custom={"nested": [1, 2.5, None]}, huge=2**70),
    issue(7, title="Ça plante à l'ouverture", description="ünïcödé\n\ttabs"),
]


def stored_extra(cache: Cache, table: str) -> dict[str, dict[str, Any]]:
    with closing(sqlite3.connect(cache.path)) as conn:
        rows = conn.execute(f"SELECT id, extra FROM {table}").fetchall()
    return {key: json.loads(text) for key, text in rows}


def test_members_held_by_columns_are_not_stored_again(cache: Cache) -> None:
    cache.server.apply_page(
        Resource.ISSUES, [issue(1, labels=["bug"], custom=3, description="words")]
    )
    cache.server.apply_page(Resource.COMMENTS, [comment(1, "iss_000001", "a long body")])
    assert stored_extra(cache, "issues") == {
        "iss_000001": {"labels": ["bug"], "assignee": None, "project_id": None, "custom": 3}
    }
    assert stored_extra(cache, "comments") == {"cmt_000001": {}}


@pytest.mark.parametrize("record", ODD_ISSUES, ids=lambda r: str(r["id"]))
def test_a_record_of_any_shape_reads_back_whole(cache: Cache, record: Record) -> None:
    cache.server.apply_page(Resource.ISSUES, [record])
    assert cache.server.server_record(Resource.ISSUES, str(record["id"])) == record
    detail = cache.reads.issue(str(record["id"]))
    assert detail is not None and detail.record == record
    again = cache.server.apply_page(Resource.ISSUES, [dict(record)])
    assert (again.unchanged, again.updated) == (1, 0)


def test_a_changed_member_that_only_extra_holds_is_an_update(cache: Cache) -> None:
    cache.server.apply_page(Resource.ISSUES, [issue(1, custom=1)])
    result = cache.server.apply_page(Resource.ISSUES, [issue(1, custom=2)])
    assert (result.updated, result.unchanged) == (1, 0)
    assert cache.server.server_record(Resource.ISSUES, "iss_000001") == issue(1, custom=2)


def test_a_tombstone_and_a_reset_keep_the_whole_record(cache: Cache) -> None:
    kept = issue(1, labels=["bug"], custom="x", title="kept whole")
    cache.server.apply_page(Resource.ISSUES, [kept, issue(2)])
    cache.outbox.update(Resource.ISSUES, "iss_000001", {"priority": "high"})
    cache.outbox.update(Resource.ISSUES, "iss_000002", {"priority": "high"})
    cache.server.apply_page(
        Resource.ISSUES, [{"id": "iss_000001", "deleted": True, "updated_at": stamp(9)}]
    )
    reset_server_copy(cache)
    with closing(sqlite3.connect(cache.path)) as conn:
        bodies = dict(conn.execute("SELECT id, record FROM tombstones").fetchall())
    assert json.loads(bodies["iss_000001"]) == kept
    assert json.loads(bodies["iss_000002"]) == issue(2)
    detail = cache.reads.issue("iss_000001")
    assert detail is not None
    shown = {**detail.record, "updated_at": kept["updated_at"]}  # an edit moves its time
    assert shown == {**kept, "priority": "high"}


OLD_ISSUE = (
    "INSERT INTO issues (rid, id, {columns}, label_mask, record) VALUES (?, ?, {marks}, ?, ?)"
)


def old_cache(path: Path, issues: list[Record], comments: list[Record]) -> None:
    """A cache at the schema before `records_stored_once`, its rows written as that schema's
    code wrote them: each record's JSON whole in `record`, beside its columns."""
    db = Database(path)
    MIGRATIONS.apply(db, stop_before="records_stored_once")
    conn = db.conn
    bits: dict[str, int | None] = {}
    spec = SPECS[Resource.ISSUES]
    kept = [n for n, name in enumerate(spec.column_names) if name not in KEY_COLUMNS.values()]
    columns = [spec.column_names[n] for n in kept]  # the key columns came later
    for rid, record in enumerate(issues, start=1):
        found = labels_of(record)
        for label in found:
            bits.setdefault(label, len(bits))
        cells = spec.cells(record)
        conn.execute(
            OLD_ISSUE.format(columns=", ".join(columns), marks=", ".join("?" * len(columns))),
            (rid, record["id"], *(cells[n] for n in kept), mask_of(found, bits), dumps(record)),
        )
        conn.executemany(
            "INSERT INTO issue_labels (label, issue) VALUES (?, ?)", [(x, rid) for x in found]
        )
    conn.executemany("INSERT INTO label_bits (label, bit) VALUES (?, ?)", list(bits.items()))
    conn.execute("INSERT INTO issues_fts (issues_fts) VALUES ('rebuild')")
    spec = SPECS[Resource.COMMENTS]
    for rid, record in enumerate(comments, start=1):
        conn.execute(
            "INSERT INTO comments (rid, id, issue_id, body, author, created_at, updated_at, "
            "record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (rid, record["id"], *spec.cells(record), dumps(record)),
        )
    conn.execute("INSERT INTO comments_fts (comments_fts) VALUES ('rebuild')")
    conn.execute(
        "INSERT INTO users (id, name, email, record) VALUES "
        """('usr_1', 'Ada', NULL, '{"id":"usr_1","name":"Ada","email":null,"role":"admin"}')"""
    )
    conn.execute(
        "INSERT INTO outbox (id, resource, record_id, server_id, operation, base, changes, "
        "idempotency_key, attempts, state, created_at, updated_at) VALUES "
        """(1, 'issues', 'iss_000002', 'iss_000002', 'update', '{"title":"Issue 2"}', """
        """'{"title":"mine"}', 'k1', 1, 'conflict', 1.0, 1.0), """
        """(2, 'issues', 'local_1', NULL, 'create', '{}', '{"title":"typed offline"}', 'k2', """
        "0, 'pending', 2.0, 2.0)"
    )
    conn.execute(
        "INSERT INTO conflicts (entry_id, field, base, mine, theirs, created_at) "
        """VALUES (1, 'title', '"Issue 2"', '"mine"', '"theirs"', 3.0)"""
    )
    conn.execute(
        "INSERT INTO drafts (key, value, updated_at) VALUES "
        """('comment:iss_000001', '{"body":"half a thought"}', 4.0)"""
    )
    conn.commit()
    db.close()


def test_an_old_cache_is_converted_keeping_every_row(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    issues = [*ODD_ISSUES, *(issue(n, labels=["ui"]) for n in range(8, 40))]
    comments = [comment(1, "iss_000002", "findable words"), comment(2, "iss_000002", "")]
    old_cache(path, issues, comments)
    with Cache.open(path) as cache:
        applied = [m.name for m in MIGRATIONS.applied(Database(path))]
        held = {
            str(r["id"]): cache.server.server_record(Resource.ISSUES, str(r["id"])) for r in issues
        }
        detail = cache.reads.issue("iss_000002")
        said = [c.record for c in detail.comments] if detail else []
        user = cache.server.server_record(Resource.USERS, "usr_1")
        entries = [(e.id, e.state.value, e.changes) for e in cache.outbox.entries()]
        [conflict] = cache.outbox.conflicts()
        draft = cache.drafts.get("comment:iss_000001")
        by_label = cache.reads.count(IssueFilter(label=frozenset({"ui"})))
        found = [r.id for r in cache.reads.window(IssueFilter(text="findable"), IssueSort(), 0, 9)]
        extra = stored_extra(cache, "issues")
    assert applied == list(KNOWN_STEPS)
    assert held == {str(r["id"]): r for r in issues}
    assert said == comments
    assert user == {"id": "usr_1", "name": "Ada", "email": None, "role": "admin"}
    assert entries == [
        (1, "conflict", {"title": "mine"}),
        (2, "pending", {"title": "typed offline"}),
    ]
    assert (conflict.entry_id, conflict.mine, conflict.theirs) == (1, "mine", "theirs")
    assert draft == {"body": "half a thought"}
    assert by_label == 33
    assert found == ["iss_000002"]
    assert extra["iss_000010"] == {
        "description": "",
        "labels": ["ui"],
        "assignee": None,
        "project_id": None,
    }


def test_a_converted_cache_takes_new_pages_as_a_new_one_does(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    old_cache(path, [issue(1, custom="a"), issue(2)], [])
    with Cache.open(path) as cache:
        result = cache.server.apply_page(
            Resource.ISSUES, [issue(1, custom="a"), issue(2, title="new", updated_at=stamp(9))]
        )
        assert (result.unchanged, result.updated) == (1, 1)
        assert cache.server.server_record(Resource.ISSUES, "iss_000002") == issue(
            2, title="new", updated_at=stamp(9)
        )
