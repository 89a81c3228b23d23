"""The server copy: pages, cursors, tombstones, sweeps and resets."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing

import pytest
from cache_factories import Record, comment, issue, reset_server_copy, stamp

from cache import (
    ApplyResult,
    Cache,
    Cursor,
    InvalidRecordError,
    IssueFilter,
    IssueSort,
    Resource,
)
from issuefields import LABELS

AddIssues = Callable[..., list[Record]]


def ids(cache: Cache, flt: IssueFilter | None = None) -> list[str]:
    rows = cache.reads.window(flt or IssueFilter(), IssueSort("number", False), 0, 1000)
    return [row.id for row in rows]


def test_a_page_is_stored_with_its_cursor(cache: Cache) -> None:
    cursor = Cursor(stamp(2), frozenset({"iss_000002"}))
    result = cache.server.apply_page(Resource.ISSUES, [issue(1), issue(2)], cursor)
    assert result == ApplyResult(inserted=2)
    assert cache.server.cursor(Resource.ISSUES) == cursor
    assert cache.server.local_count(Resource.ISSUES) == 2


def test_a_page_that_fails_leaves_rows_and_cursor_untouched(cache: Cache) -> None:
    cache.server.apply_page(Resource.ISSUES, [issue(1)], Cursor(stamp(1)))
    with pytest.raises(InvalidRecordError):
        cache.server.apply_page(Resource.ISSUES, [issue(2), {"title": "no id"}], Cursor(stamp(9)))
    assert cache.server.cursor(Resource.ISSUES) == Cursor(stamp(1))
    assert ids(cache) == ["iss_000001"]


def test_every_member_and_unknown_value_survives(cache: Cache) -> None:
    odd = issue(
        1,
        status="triage",
        priority="p0",
        labels=["bug", 7, {"name": "x"}],
        custom={"nested": [1, 2.5, None, True]},
        estimate=3,
        huge=2**70,  # beyond 64 bits: orjson refuses it, CPython's encoder writes it
        title="Ça plante à l'ouverture",
        number="A-1",
    )
    cache.server.apply_page(Resource.ISSUES, [odd])
    assert cache.server.server_record(Resource.ISSUES, "iss_000001") == odd
    detail = cache.reads.issue("iss_000001")
    assert detail is not None
    assert detail.record == odd
    assert (detail.issue.status, detail.issue.priority) == ("triage", "p0")
    assert detail.issue.labels == ("bug",)
    assert detail.issue.number is None


def test_a_newer_version_replaces_the_row_and_its_search_terms(
    cache: Cache, add_issues: AddIssues
) -> None:
    add_issues(issue(1, title="alpha", labels=["old"]))
    result = cache.server.apply_page(
        Resource.ISSUES, [issue(1, title="omega", labels=["new"], updated_at=stamp(50))]
    )
    assert result == ApplyResult(updated=1)
    assert ids(cache, IssueFilter(text="alpha")) == []
    assert ids(cache, IssueFilter(text="omega")) == ["iss_000001"]
    assert cache.reads.distinct_values(LABELS) == ["new"]
    assert cache.integrity_check() == ["ok"]


def test_an_older_version_never_replaces_a_newer_one(cache: Cache, add_issues: AddIssues) -> None:
    add_issues(issue(1, title="new", updated_at=stamp(50)))
    result = cache.server.apply_page(Resource.ISSUES, [issue(1, title="old", updated_at=stamp(10))])
    assert result == ApplyResult(unchanged=1)
    assert cache.reads.window(IssueFilter(), IssueSort(), 0, 1)[0].title == "new"


def test_same_timestamp_is_unchanged_only_when_the_content_is(
    cache: Cache, add_issues: AddIssues
) -> None:
    add_issues(issue(1, title="first"))
    assert cache.server.apply_page(Resource.ISSUES, [issue(1, title="first")]) == ApplyResult(
        unchanged=1
    )
    assert cache.server.apply_page(Resource.ISSUES, [issue(1, title="second")]) == ApplyResult(
        updated=1
    )


def test_timestamps_in_other_formats_sort_chronologically(cache: Cache) -> None:
    cache.server.apply_page(
        Resource.ISSUES,
        [
            issue(1, updated_at="2026-03-01T10:00:00+00:00"),
            issue(2, updated_at="2026-03-01T09:59:59.5Z"),
            issue(3, updated_at="2026-03-01T11:00:00+01:00"),
        ],
    )
    rows = cache.reads.window(IssueFilter(), IssueSort("updated", False), 0, 3)
    assert [row.id for row in rows] == ["iss_000002", "iss_000001", "iss_000003"]
    assert [row.updated_at for row in rows] == [
        "2026-03-01T09:59:59.500000Z",
        "2026-03-01T10:00:00.000000Z",
        "2026-03-01T10:00:00.000000Z",
    ]
    assert cache.server.server_record(Resource.ISSUES, "iss_000003") == issue(
        3, updated_at="2026-03-01T11:00:00+01:00"
    )


def test_duplicates_in_a_page_keep_the_newest(cache: Cache) -> None:
    cache.server.apply_page(
        Resource.ISSUES,
        [issue(1, title="b", updated_at=stamp(9)), issue(1, title="a", updated_at=stamp(5))],
    )
    assert cache.reads.window(IssueFilter(), IssueSort(), 0, 5)[0].title == "b"


def test_tombstones_delete_rows_terms_labels_and_comments(
    cache: Cache, add_issues: AddIssues
) -> None:
    add_issues(issue(1, title="gone", labels=["l"]), issue(2))
    cache.server.apply_page(Resource.COMMENTS, [comment(1, "iss_000001", "words")])
    result = cache.server.apply_page(
        Resource.ISSUES, [{"id": "iss_000001", "deleted": True, "updated_at": stamp(60)}]
    )
    assert result == ApplyResult(deleted=1)
    assert ids(cache) == ["iss_000002"]
    assert ids(cache, IssueFilter(text="gone")) == []
    assert cache.reads.distinct_values(LABELS) == []
    assert cache.server.local_count(Resource.COMMENTS) == 0
    assert cache.integrity_check() == ["ok"]


def test_a_stale_record_does_not_resurrect_a_deleted_one_with_a_pending_edit(
    cache: Cache, add_issues: AddIssues
) -> None:
    add_issues(issue(1))
    cache.outbox.update(Resource.ISSUES, "iss_000001", {"title": "mine"})
    cache.server.apply_page(
        Resource.ISSUES, [{"id": "iss_000001", "deleted": True, "updated_at": stamp(60)}]
    )
    result = cache.server.apply_page(Resource.ISSUES, [issue(1, updated_at=stamp(30))])
    assert result == ApplyResult(unchanged=1)
    assert cache.server.local_count(Resource.ISSUES) == 0
    detail = cache.reads.issue("iss_000001")
    assert detail is not None and detail.issue.title == "mine"


def test_tombstones_last_only_while_a_pending_write_refers_to_them(
    cache: Cache, add_issues: AddIssues
) -> None:
    add_issues(issue(1), issue(2))
    entry = cache.outbox.update(Resource.ISSUES, "iss_000001", {"title": "mine"})
    assert entry is not None
    cache.server.delete_missing(Resource.ISSUES, [])
    assert cache.reads.issue("iss_000001") is not None
    assert cache.reads.issue("iss_000002") is None
    cache.outbox.discard(entry.id)
    assert cache.reads.issue("iss_000001") is None


def test_delete_missing_removes_what_a_sweep_did_not_see(
    cache: Cache, add_issues: AddIssues
) -> None:
    add_issues(issue(1), issue(2), issue(3))
    assert cache.server.delete_missing(Resource.ISSUES, ["iss_000002"], swept_at=123.0) == 2
    assert ids(cache) == ["iss_000002"]
    assert cache.server.last_full_sweep(Resource.ISSUES) == 123.0


def test_a_comment_sweep_is_scoped_to_its_issue(cache: Cache, add_issues: AddIssues) -> None:
    add_issues(issue(1), issue(2))
    cache.server.apply_page(
        Resource.COMMENTS,
        [
            comment(1, "iss_000001", "a"),
            comment(2, "iss_000001", "b"),
            comment(3, "iss_000002", "c"),
        ],
    )
    assert (
        cache.server.delete_missing(Resource.COMMENTS, ["cmt_000001"], issue_id="iss_000001") == 1
    )
    assert cache.server.local_count(Resource.COMMENTS, issue_id="iss_000001") == 1
    assert cache.server.local_count(Resource.COMMENTS) == 2


def test_reset_wipes_the_server_copy_but_never_the_outbox(
    cache: Cache, add_issues: AddIssues
) -> None:
    add_issues(issue(1), issue(2))
    cache.server.apply_page(Resource.ISSUES, [], Cursor(stamp(2)))
    cache.server.delete_missing(Resource.ISSUES, ["iss_000001", "iss_000002"], swept_at=5.0)
    cache.state.set("plan", {"name": "pro"})
    cache.outbox.update(Resource.ISSUES, "iss_000001", {"title": "kept edit"})
    local = cache.outbox.create(Resource.ISSUES, {"title": "offline"})
    before = cache.outbox.entries()
    reset_server_copy(cache)
    assert cache.server.local_count(Resource.ISSUES) == 0
    assert cache.server.cursor(Resource.ISSUES) is None
    assert cache.server.last_full_sweep(Resource.ISSUES) is None
    assert cache.state.get("plan") == {"name": "pro"}
    assert cache.outbox.entries() == before
    assert {row.title for row in cache.reads.window(IssueFilter(), IssueSort(), 0, 10)} == {
        "kept edit",
        "offline",
    }
    assert cache.reads.issue(local) is not None
    cache.server.apply_page(Resource.ISSUES, [issue(1), issue(2)])
    assert {row.title for row in cache.reads.window(IssueFilter(), IssueSort(), 0, 10)} == {
        "kept edit",
        "offline",
        "Issue 2",
    }
    assert cache.integrity_check() == ["ok"]


@pytest.mark.parametrize(
    ("resource", "record", "column_value"),
    [
        (Resource.PROJECTS, {"id": "prj_1", "key": "ENG", "name": "Eng", "extra": 1}, "Eng"),
        (Resource.USERS, {"id": "usr_1", "name": "Ada", "email": "a@x", "tz": "UTC"}, "Ada"),
        (Resource.WORKSPACES, {"id": "wsp_1", "name": "W", "plan": "team"}, "W"),
    ],
)
def test_other_resources_keep_whole_records(
    cache: Cache, resource: Resource, record: Record, column_value: str
) -> None:
    cache.server.apply_page(resource, [record])
    assert cache.server.server_record(resource, record["id"]) == record
    names = {
        Resource.PROJECTS: [p.name for p in cache.reads.projects()],
        Resource.USERS: [u.name for u in cache.reads.users()],
    }.get(resource)
    if names is None:  # no screen lists workspaces: their column, as stored
        with closing(sqlite3.connect(cache.path)) as conn:
            names = [str(row[0]) for row in conn.execute("SELECT name FROM workspaces")]
    assert names == [column_value]


def wal_frames(cache: Cache) -> int:
    """Frames in the WAL, as a checkpoint from another connection reports them."""
    with sqlite3.connect(cache.path) as conn:
        return int(conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1])


@pytest.mark.parametrize("bulk", [True, False])
def test_bulk_writes_defer_checkpoints_until_the_run_ends(cache: Cache, bulk: bool) -> None:
    cache.server.bulk_writes(bulk)
    text = " ".join(f"word{n}" for n in range(400))
    for page in range(24):
        records = [issue(page * 100 + n, description=f"{text} {n}") for n in range(1, 101)]
        cache.server.apply_page(Resource.ISSUES, records, Cursor(stamp(page * 100 + 100)))
    frames = wal_frames(cache)
    # SQLite's default checkpoints once a commit takes the WAL past 1,000 frames
    assert (frames > 2000) is bulk, frames
    cache.server.checkpoint()
    cache.server.bulk_writes(False)
    cache.server.apply_page(Resource.ISSUES, [issue(5000)])
    assert wal_frames(cache) < 100  # checkpointed: the WAL started over


def test_reset_forgets_the_issues_the_server_search_brought(cache: Cache) -> None:
    cache.server.apply_page(Resource.ISSUES, [issue(1), issue(2)], from_search=True)
    assert cache.server.searched_count() == 2
    reset_server_copy(cache)
    assert cache.server.searched_count() == 0
