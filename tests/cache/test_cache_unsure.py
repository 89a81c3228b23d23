"""Creates whose answer was lost (cache.suspects): look-alikes seen before an attempt, records
already made by a local create, and the `unsure` state the user settles (issue 15)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from cache_factories import Record, issue
from sqlite_utils import Database

from cache import (
    ACTIVE_STATES,
    Cache,
    EntryState,
    OutboxStateError,
    Resource,
    SyncState,
)
from cache.schema import MIGRATIONS

AddIssues = Callable[..., list[Record]]
ISSUE = Resource.ISSUES


def sent_and_lost(cache: Cache, title: str) -> tuple[str, int]:
    """A create sent once whose answer never came: pending, its outcome unknown."""
    local = cache.outbox.create(ISSUE, {"title": title})
    [entry] = [e for e in cache.push.sendable() if e.record_id == local]
    cache.push.mark_sending(entry.id)
    cache.push.release(entry.id, "outcome unknown: the connection dropped")
    return local, entry.id


def test_a_create_notes_the_look_alikes_the_cache_held_when_it_was_sent(
    cache: Cache, add_issues: AddIssues
) -> None:
    add_issues(issue(1, title="Weekly review"), issue(2, title="weekly REVIEW"), issue(3))
    _, entry_id = sent_and_lost(cache, "  Weekly review ")
    add_issues(issue(4, title="Weekly review"))  # pulled after the attempt: not "seen before"
    assert cache.push.seen_before([entry_id]) == {entry_id: {"iss_000001", "iss_000002"}}


def test_records_made_by_a_local_create_are_linked(cache: Cache) -> None:
    local = cache.outbox.create(ISSUE, {"title": "made here"})
    [entry] = cache.push.sendable()
    cache.push.mark_sending(entry.id)
    cache.push.mark_done(entry.id, issue(7, title="made here"))
    assert cache.outbox.resolve_id(local) == "iss_000007"
    assert cache.push.linked(ISSUE, ["iss_000007", "iss_000008"]) == {"iss_000007"}
    assert cache.push.linked(Resource.PROJECTS, ["iss_000007"]) == set()


def test_an_unsure_create_is_kept_shown_and_not_sent_nor_its_dependents(cache: Cache) -> None:
    local, entry_id = sent_and_lost(cache, "twin")
    cache.outbox.create(Resource.COMMENTS, {"issue_id": local, "body": "on the twin"})
    found = [issue(5, title="twin"), issue(6, title="twin")]
    entry = cache.push.mark_unsure(entry_id, found, "may be a duplicate: check #5, #6")
    assert (entry.state, entry.last_error) == (
        EntryState.UNSURE,
        "may be a duplicate: check #5, #6",
    )
    assert entry_id in [e.id for e in cache.outbox.entries(ACTIVE_STATES)]
    assert cache.push.sendable() == [] and entry_id not in cache.push.doubtful()
    assert [r["id"] for r in cache.outbox.suspects(entry_id)] == ["iss_000005", "iss_000006"]
    detail = cache.reads.issue(local)
    assert detail is not None and detail.issue.sync_state is SyncState.FAILED


def test_same_as_links_the_create_to_the_chosen_record(cache: Cache) -> None:
    local, entry_id = sent_and_lost(cache, "twin")
    cache.outbox.create(Resource.COMMENTS, {"issue_id": local, "body": "on the twin"})
    cache.push.mark_unsure(entry_id, [issue(5, title="twin"), issue(6, title="twin")], "check")
    with pytest.raises(OutboxStateError, match="say which"):
        cache.outbox.same_as(entry_id)
    with pytest.raises(OutboxStateError, match="not among"):
        cache.outbox.same_as(entry_id, "iss_000009")
    entry = cache.outbox.same_as(entry_id, "iss_000006")
    assert entry.state is EntryState.DONE
    assert cache.outbox.resolve_id(local) == "iss_000006"
    assert cache.server.server_record(ISSUE, "iss_000006") == issue(6, title="twin")
    [comment] = cache.push.sendable()
    assert comment.parent_id == "iss_000006" and comment.changes["issue_id"] == "iss_000006"


def test_same_as_refuses_a_record_another_local_write_made(cache: Cache) -> None:
    _, first = sent_and_lost(cache, "twin")
    _, second = sent_and_lost(cache, "twin")
    both = [issue(5, title="twin"), issue(6, title="twin")]
    cache.push.mark_unsure(first, both, "check")
    cache.push.mark_unsure(second, both, "check")
    cache.outbox.same_as(first, "iss_000005")
    with pytest.raises(OutboxStateError, match="another local write"):
        cache.outbox.same_as(second, "iss_000005")
    assert cache.outbox.entry(second).state is EntryState.UNSURE


def test_send_anyway_queues_it_without_another_look(cache: Cache) -> None:
    _, entry_id = sent_and_lost(cache, "twin")
    cache.push.mark_unsure(entry_id, [issue(5, title="twin"), issue(6, title="twin")], "check")
    entry = cache.outbox.send_anyway(entry_id)
    assert entry.state is EntryState.PENDING and entry.last_error is None
    assert [e.id for e in cache.push.sendable()] == [entry_id]
    assert entry_id not in cache.push.doubtful() and cache.outbox.suspects(entry_id) == []
    with pytest.raises(OutboxStateError):
        cache.outbox.send_anyway(entry_id)


def test_discarding_an_unsure_create_drops_it_and_its_dependents(cache: Cache) -> None:
    local, entry_id = sent_and_lost(cache, "twin")
    cache.outbox.create(Resource.COMMENTS, {"issue_id": local, "body": "on the twin"})
    cache.push.mark_unsure(entry_id, [issue(5, title="twin"), issue(6, title="twin")], "check")
    cache.outbox.discard(entry_id)
    assert cache.outbox.entries(ACTIVE_STATES) == []


OLD_ENTRY = (
    "INSERT INTO outbox (id, resource, record_id, server_id, parent_id, operation, base, "
    "changes, idempotency_key, attempts, state, created_at, updated_at) "
    "VALUES (?, 'issues', ?, ?, NULL, ?, ?, ?, ?, 1, ?, 1.0, 1.0)"
)


def test_an_old_outbox_is_rebuilt_with_its_entries_conflicts_and_numbering(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cache.db"
    db = Database(path)
    MIGRATIONS.apply(db, stop_before="outbox_unsure_state")
    db.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(
            OLD_ENTRY,
            (1, "iss_1", "iss_1", "update", '{"title":"a"}', '{"title":"b"}', "k1", "conflict"),
        )
        conn.execute(
            OLD_ENTRY, (2, "local_2", None, "create", "{}", '{"title":"c"}', "k2", "failed")
        )
        conn.execute(OLD_ENTRY, (3, "local_3", None, "create", "{}", '{"title":"d"}', "k3", "done"))
        conn.execute(
            "INSERT INTO conflicts (entry_id, field, base, mine, theirs, created_at) "
            "VALUES (1, 'title', '\"a\"', '\"b\"', '\"z\"', 1.0)"
        )
        conn.execute("DELETE FROM outbox WHERE id = 3")  # the high-water mark stays 3
    with Cache.open(path) as cache:
        entries = [(e.id, e.state, e.changes) for e in cache.outbox.entries()]
        [conflict] = cache.outbox.conflicts()
        _, lost = sent_and_lost(cache, "new")
        unsure = cache.push.mark_unsure(lost, [issue(2, title="new")], "check")
        cache.outbox.discard(1)
        left = cache.outbox.conflicts(unresolved_only=False)
    assert entries == [
        (1, EntryState.CONFLICT, {"title": "b"}),
        (2, EntryState.FAILED, {"title": "c"}),
    ]
    assert (conflict.entry_id, conflict.mine, conflict.theirs) == (1, "b", "z")
    assert unsure.id == 4 and unsure.state is EntryState.UNSURE  # no number given twice
    assert left == []  # the conflicts still go with their entry
