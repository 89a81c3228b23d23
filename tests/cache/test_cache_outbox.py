"""The outbox: coalescing, temporary ids, transitions, undo and conflicts."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from cache_factories import Clock, Record, issue, stamp

from cache import (
    SETTLED_RETENTION,
    Cache,
    EntryState,
    FieldConflict,
    IssueFilter,
    IssueSort,
    Operation,
    OutboxStateError,
    RecordNotFoundError,
    Resolution,
    Resource,
    SyncState,
)

AddIssues = Callable[..., list[Record]]
ISSUE = Resource.ISSUES


def row(cache: Cache, issue_id: str) -> tuple[str, str | None, SyncState]:
    detail = cache.reads.issue(issue_id)
    assert detail is not None
    return detail.issue.title, detail.issue.status, detail.issue.sync_state


@pytest.fixture
def one(add_issues: AddIssues) -> str:
    add_issues(issue(1, title="original", status="todo"))
    return "iss_000001"


def test_an_edit_is_queued_with_base_changes_and_a_key(cache: Cache, one: str) -> None:
    entry = cache.outbox.update(ISSUE, one, {"title": "edited", "status": "todo"})
    assert entry is not None
    assert (entry.operation, entry.state, entry.attempts) == (
        Operation.UPDATE,
        EntryState.PENDING,
        0,
    )
    assert (entry.base, entry.changes) == ({"title": "original"}, {"title": "edited"})
    assert len(entry.idempotency_key) >= 32
    assert row(cache, one) == ("edited", "todo", SyncState.PENDING)


def test_repeated_edits_of_a_field_keep_the_original_base_and_key(cache: Cache, one: str) -> None:
    first = cache.outbox.update(ISSUE, one, {"title": "a"})
    second = cache.outbox.update(ISSUE, one, {"title": "b", "status": "done"})
    assert first is not None and second is not None
    assert second.id == first.id and second.idempotency_key == first.idempotency_key
    assert second.base == {"title": "original", "status": "todo"}
    assert second.changes == {"title": "b", "status": "done"}
    assert len(cache.outbox.entries()) == 1


def test_editing_back_to_the_base_leaves_nothing_to_send(cache: Cache, one: str) -> None:
    cache.outbox.update(ISSUE, one, {"title": "a"})
    assert cache.outbox.update(ISSUE, one, {"title": "original"}) is None
    assert cache.outbox.entries() == []
    assert row(cache, one) == ("original", "todo", SyncState.SYNCED)


def test_a_no_op_edit_queues_nothing(cache: Cache, one: str) -> None:
    assert cache.outbox.update(ISSUE, one, {"title": "original"}) is None
    assert cache.outbox.entries() == []


def test_edits_of_different_batches_stay_apart(cache: Cache, one: str) -> None:
    cache.outbox.update(ISSUE, one, {"status": "in_progress"}, batch_id="b1")
    cache.outbox.update(ISSUE, one, {"status": "done"})
    entries = cache.outbox.entries()
    assert [(e.batch_id, e.base, e.changes) for e in entries] == [
        ("b1", {"status": "todo"}, {"status": "in_progress"}),
        (None, {"status": "in_progress"}, {"status": "done"}),
    ]


@pytest.mark.parametrize("how", ["sending", "released"])
def test_entries_ever_sent_are_never_coalesced_into(cache: Cache, one: str, how: str) -> None:
    first = cache.outbox.update(ISSUE, one, {"title": "a"})
    assert first is not None
    cache.push.mark_sending(first.id)
    if how == "released":
        cache.push.release(first.id, "timeout after sending")
    second = cache.outbox.update(ISSUE, one, {"title": "b"})
    assert second is not None and second.id != first.id
    assert cache.outbox.entry(first.id).changes == {"title": "a"}
    assert second.base == {"title": "a"}


def test_create_then_edit_becomes_one_create(cache: Cache) -> None:
    local = cache.outbox.create(ISSUE, {"title": "draft"})
    entry = cache.outbox.update(ISSUE, local, {"title": "final", "priority": "high"})
    assert entry is not None and entry.operation is Operation.CREATE
    assert entry.changes == {"title": "final", "priority": "high"}
    assert len(cache.outbox.entries()) == 1
    assert row(cache, local) == ("final", "todo", SyncState.PENDING)


def test_create_then_delete_vanishes_with_what_depends_on_it(cache: Cache) -> None:
    local = cache.outbox.create(ISSUE, {"title": "draft"})
    cache.outbox.create(Resource.COMMENTS, {"issue_id": local, "body": "on a draft"})
    assert cache.outbox.delete(ISSUE, local) is None
    assert cache.outbox.entries() == []
    assert cache.reads.count(IssueFilter()) == 0


def test_edit_then_delete_becomes_the_delete(cache: Cache, one: str) -> None:
    cache.outbox.update(ISSUE, one, {"title": "a"})
    cache.outbox.update(ISSUE, one, {"status": "done"}, batch_id="b")
    entry = cache.outbox.delete(ISSUE, one)
    assert entry is not None and entry.operation is Operation.DELETE
    assert entry.base == {"title": "original", "status": "todo"}
    assert cache.outbox.entries() == [entry]
    assert cache.reads.issue(one) is None
    assert cache.reads.count(IssueFilter()) == 0


def test_an_edit_in_flight_is_kept_before_the_delete(cache: Cache, one: str) -> None:
    sent = cache.outbox.update(ISSUE, one, {"title": "a"})
    assert sent is not None
    cache.push.mark_sending(sent.id)
    cache.outbox.delete(ISSUE, one)
    assert [e.operation for e in cache.outbox.entries()] == [Operation.UPDATE, Operation.DELETE]


def test_writes_to_missing_records_are_refused(cache: Cache, one: str) -> None:
    with pytest.raises(RecordNotFoundError):
        cache.outbox.update(ISSUE, "iss_999", {"title": "x"})
    cache.outbox.delete(ISSUE, one)
    with pytest.raises(RecordNotFoundError):
        cache.outbox.update(ISSUE, one, {"title": "x"})
    with pytest.raises(RecordNotFoundError):
        cache.outbox.delete(ISSUE, one)
    with pytest.raises(OutboxStateError):
        cache.outbox.update(Resource.USERS, "usr_1", {"name": "x"})


def test_transitions_count_attempts_and_keep_the_key(cache: Cache, one: str) -> None:
    entry = cache.outbox.update(ISSUE, one, {"title": "a"})
    assert entry is not None
    sending = cache.push.mark_sending(entry.id)
    assert (sending.state, sending.attempts) == (EntryState.SENDING, 1)
    assert sending.sent_at is not None
    cache.push.release(entry.id, "503")
    again = cache.push.mark_sending(entry.id)
    assert (again.attempts, again.idempotency_key) == (2, entry.idempotency_key)
    failed = cache.push.mark_failed(entry.id, "400 invalid_transition")
    assert (failed.state, failed.last_error) == (EntryState.FAILED, "400 invalid_transition")
    assert row(cache, one)[2] is SyncState.FAILED
    assert cache.outbox.retry(entry.id).state is EntryState.PENDING
    with pytest.raises(OutboxStateError):
        cache.push.release(entry.id)
    with pytest.raises(OutboxStateError):
        cache.outbox.retry(entry.id)


def test_done_applies_the_servers_answer_in_the_same_step(cache: Cache, one: str) -> None:
    entry = cache.outbox.update(ISSUE, one, {"title": "a"})
    assert entry is not None
    cache.push.mark_sending(entry.id)
    cache.push.mark_done(entry.id, issue(1, title="a", updated_at=stamp(99)))
    assert row(cache, one) == ("a", "todo", SyncState.SYNCED)
    assert cache.outbox.entry(entry.id).state is EntryState.DONE
    assert cache.push.sendable() == []
    with pytest.raises(OutboxStateError):
        cache.outbox.discard(entry.id)


def test_entries_done_longer_ago_than_the_retention_are_forgotten(
    cache: Cache, clock: Clock, one: str
) -> None:
    """Only done entries go, and only once `keep` has passed since they were done; what is
    still to send, or failed, stays however old."""
    done = cache.outbox.update(ISSUE, one, {"title": "sent"})
    assert done is not None
    cache.push.mark_sending(done.id)
    cache.push.mark_done(done.id)
    failed = cache.outbox.update(ISSUE, one, {"status": "done"})
    assert failed is not None
    cache.push.mark_sending(failed.id)
    cache.push.mark_failed(failed.id, "400: refused")
    waiting = cache.outbox.update(ISSUE, one, {"priority": "high"})
    assert waiting is not None
    assert cache.push.prune_settled() == 0
    clock.now += SETTLED_RETENTION
    assert cache.push.prune_settled() == 1
    assert {e.id for e in cache.outbox.entries()} == {failed.id, waiting.id}
    assert cache.push.prune_settled(keep=0.0) == 0


def test_a_pull_never_hides_a_local_edit(cache: Cache, one: str) -> None:
    cache.outbox.update(ISSUE, one, {"title": "mine"})
    cache.server.apply_page(ISSUE, [issue(1, title="theirs", status="done", updated_at=stamp(80))])
    assert row(cache, one) == ("mine", "done", SyncState.PENDING)


def test_offline_records_wait_for_their_create_then_get_the_server_id(cache: Cache) -> None:
    local = cache.outbox.create(ISSUE, {"title": "offline"})
    note = cache.outbox.create(Resource.COMMENTS, {"issue_id": local, "body": "first"})
    create = cache.outbox.entries()[0]
    assert [e.record_id for e in cache.push.sendable()] == [local]
    cache.push.mark_sending(create.id)
    edit = cache.outbox.update(ISSUE, local, {"title": "renamed"})
    assert edit is not None and edit.id != create.id and edit.server_id is None
    assert cache.push.sendable() == []
    cache.push.mark_done(create.id, issue(500, title="offline"))
    assert cache.outbox.resolve_id(local) == "iss_000500"
    ready = cache.push.sendable()
    assert [(e.operation, e.target_id) for e in ready] == [
        (Operation.CREATE, note),
        (Operation.UPDATE, "iss_000500"),
    ]
    assert ready[0].changes == {"issue_id": "iss_000500", "body": "first"}
    assert ready[0].parent_id == "iss_000500"
    detail = cache.reads.issue(local)
    assert detail is not None and detail.issue.id == "iss_000500"
    assert detail.issue.title == "renamed"
    assert [c.body for c in detail.comments] == ["first"]


def test_a_bulk_answer_is_settled_in_one_step(cache: Cache, add_issues: AddIssues) -> None:
    add_issues(issue(1, title="one"), issue(2, title="two"))
    edit = cache.outbox.update(ISSUE, "iss_000001", {"title": "edited"})
    gone = cache.outbox.delete(ISSUE, "iss_000002")
    local = cache.outbox.create(ISSUE, {"title": "made"})
    made = cache.outbox.entries()[-1]
    assert edit is not None and gone is not None
    sending = cache.push.mark_sending_many([edit.id, gone.id, made.id])
    assert [e.state for e in sending] == [EntryState.SENDING] * 3
    assert all(e.attempts == 1 for e in sending)
    cache.push.mark_done_many(
        [
            (edit.id, issue(1, title="edited", updated_at=stamp(90))),
            (gone.id, None),
            (made.id, issue(600, title="made")),
        ]
    )
    assert {e.state for e in cache.outbox.entries()} == {EntryState.DONE}
    assert row(cache, "iss_000001") == ("edited", "todo", SyncState.SYNCED)
    assert cache.reads.issue("iss_000002") is None
    assert cache.outbox.resolve_id(local) == "iss_000600"
    assert row(cache, local) == ("made", "todo", SyncState.SYNCED)
    with pytest.raises(OutboxStateError):
        cache.push.mark_done_many([(made.id, issue(600, title="made"))])


def test_a_create_is_done_only_with_the_servers_record(cache: Cache) -> None:
    cache.outbox.create(ISSUE, {"title": "x"})
    entry = cache.outbox.entries()[0]
    cache.push.mark_sending(entry.id)
    with pytest.raises(OutboxStateError):
        cache.push.mark_done(entry.id)


def test_entries_of_one_record_go_out_in_order(cache: Cache, add_issues: AddIssues) -> None:
    add_issues(issue(1), issue(2))
    a = cache.outbox.update(ISSUE, "iss_000001", {"title": "a"}, batch_id="x")
    b = cache.outbox.update(ISSUE, "iss_000001", {"title": "b"})
    c = cache.outbox.update(ISSUE, "iss_000002", {"title": "c"})
    assert a and b and c
    assert [e.id for e in cache.push.sendable()] == [a.id, c.id]
    cache.push.mark_sending(a.id)
    assert [e.id for e in cache.push.sendable()] == [c.id]
    cache.push.mark_failed(a.id, "rejected")
    assert [e.id for e in cache.push.sendable()] == [b.id, c.id]


def test_discarding_rebases_later_entries_of_the_record(cache: Cache, one: str) -> None:
    first = cache.outbox.update(ISSUE, one, {"status": "in_progress"}, batch_id="x")
    later = cache.outbox.update(ISSUE, one, {"status": "done"})
    assert first and later
    cache.outbox.discard(first.id)
    assert cache.outbox.entry(later.id).base == {"status": "todo"}
    assert row(cache, one)[1] == "done"


def test_undo_discards_unsent_writes_and_reverts_sent_ones(
    cache: Cache, add_issues: AddIssues
) -> None:
    add_issues(issue(1), issue(2), issue(3))
    batch = cache.outbox.update_many(
        ISSUE, ["iss_000001", "iss_000002", "iss_000003"], {"priority": "high"}
    )
    entries = cache.outbox.entries()
    assert {e.batch_id for e in entries} == {batch} and len(entries) == 3
    cache.push.mark_sending(entries[0].id)
    cache.push.mark_done(entries[0].id, issue(1, priority="high", updated_at=stamp(90)))
    undone = cache.outbox.undo_batch(batch)
    inverse = undone.batch_id
    assert inverse is not None
    assert undone.restored == ("iss_000001",)
    assert set(undone.dropped) == {"iss_000002", "iss_000003"}
    remaining = [e for e in cache.outbox.entries() if e.state is not EntryState.DONE]
    assert [(e.target_id, e.changes, e.batch_id) for e in remaining] == [
        ("iss_000001", {"priority": "none"}, inverse)
    ]
    rows = cache.reads.window(IssueFilter(), IssueSort(), 0, 5)
    assert {r.priority for r in rows} == {"none"}


def test_conflicts_are_recorded_per_field_and_settled(cache: Cache, one: str) -> None:
    entry = cache.outbox.update(ISSUE, one, {"title": "mine", "status": "in_progress"})
    assert entry is not None
    cache.push.mark_sending(entry.id)
    server = issue(1, title="theirs", status="in_progress", updated_at=stamp(70))
    found = cache.push.detect_conflicts(cache.outbox.entry(entry.id), server)
    assert found == [FieldConflict("title", "original", "mine", "theirs")]
    [conflict] = cache.push.record_conflicts(entry.id, found)
    assert cache.outbox.entry(entry.id).state is EntryState.CONFLICT
    assert row(cache, one) == ("mine", "in_progress", SyncState.CONFLICT)
    detail = cache.reads.issue(one)
    assert detail is not None and [c.field for c in detail.conflicts] == ["title"]
    settled = cache.outbox.resolve_conflict(conflict.id, Resolution.MINE)
    assert settled is not None and settled.state is EntryState.PENDING
    assert settled.base["title"] == "theirs"
    assert cache.outbox.conflicts() == []
    assert cache.outbox.conflicts(entry.id, unresolved_only=False)[0].resolution is Resolution.MINE
    with pytest.raises(OutboxStateError):
        cache.outbox.resolve_conflict(conflict.id, Resolution.THEIRS)


def test_parking_a_partial_conflict_splits_off_the_clean_fields(cache: Cache, one: str) -> None:
    entry = cache.outbox.update(ISSUE, one, {"title": "mine", "status": "in_progress"})
    assert entry is not None
    cache.push.mark_sending(entry.id)
    found = [FieldConflict("title", "original", "mine", "theirs")]
    going = cache.push.park_conflicts(entry.id, found)
    assert going is not None and going.id != entry.id
    assert (going.state, going.changes, going.base) == (
        EntryState.SENDING,
        {"status": "in_progress"},
        {"status": "todo"},
    )
    parked = cache.outbox.entry(entry.id)
    assert (parked.state, parked.changes, parked.base) == (
        EntryState.CONFLICT,
        {"title": "mine"},
        {"title": "original"},
    )
    assert [c.entry_id for c in cache.outbox.conflicts()] == [entry.id]
    assert row(cache, one) == ("mine", "in_progress", SyncState.CONFLICT)
    cache.push.mark_done(
        going.id, issue(1, title="theirs", status="in_progress", updated_at=stamp(70))
    )
    assert row(cache, one) == ("mine", "in_progress", SyncState.CONFLICT)
    [conflict] = cache.outbox.conflicts()
    assert cache.outbox.resolve_conflict(conflict.id, Resolution.THEIRS) is None
    assert row(cache, one) == ("theirs", "in_progress", SyncState.SYNCED)


def test_a_write_held_as_a_conflict_holds_back_later_writes_of_its_fields(
    cache: Cache, one: str
) -> None:
    """Sent past it, a newer title was overwritten by the older one once the user kept theirs;
    later writes of other fields still go."""
    first = cache.outbox.update(ISSUE, one, {"title": "first"})
    assert first is not None
    cache.push.mark_sending(first.id)
    cache.push.record_conflicts(first.id, [FieldConflict("title", "original", "first", "theirs")])
    second = cache.outbox.update(ISSUE, one, {"title": "second"})
    other = cache.outbox.update(ISSUE, one, {"status": "in_progress"}, batch_id="other")
    assert second is not None and other is not None
    assert cache.push.sendable() == []
    cache.outbox.discard(second.id)
    assert [entry.id for entry in cache.push.sendable()] == [other.id]
    [conflict] = cache.outbox.conflicts()
    cache.outbox.resolve_conflict(conflict.id, Resolution.MINE)
    assert [entry.id for entry in cache.push.sendable()] == [first.id]


def test_parking_every_field_parks_the_entry_whole(cache: Cache, one: str) -> None:
    entry = cache.outbox.update(ISSUE, one, {"title": "mine"})
    assert entry is not None
    found = [FieldConflict("title", "original", "mine", "theirs")]
    assert cache.push.park_conflicts(entry.id, found) is None
    assert [(e.id, e.state) for e in cache.outbox.entries()] == [(entry.id, EntryState.CONFLICT)]


def test_taking_theirs_for_every_field_drops_the_entry(cache: Cache, one: str) -> None:
    entry = cache.outbox.update(ISSUE, one, {"title": "mine"})
    assert entry is not None
    [conflict] = cache.push.record_conflicts(
        entry.id, [FieldConflict("title", "original", "mine", "x")]
    )
    assert cache.outbox.resolve_conflict(conflict.id, Resolution.THEIRS) is None
    assert cache.outbox.entries() == []


def test_comments_show_local_writes(cache: Cache, one: str) -> None:
    cache.server.apply_page(
        Resource.COMMENTS,
        [{"id": "cmt_1", "issue_id": one, "body": "server", "created_at": stamp(1)}],
    )
    cache.outbox.update(Resource.COMMENTS, "cmt_1", {"body": "edited"})
    cache.outbox.create(Resource.COMMENTS, {"issue_id": one, "body": "new"})
    detail = cache.reads.issue(one)
    assert detail is not None
    comments = detail.comments
    assert [(c.body, c.sync_state) for c in comments] == [
        ("edited", SyncState.PENDING),
        ("new", SyncState.PENDING),
    ]
    assert row(cache, one)[2] is SyncState.PENDING
    assert cache.outbox.entries()[0].parent_id == one


def test_projects_show_local_writes(cache: Cache) -> None:
    cache.server.apply_page(Resource.PROJECTS, [{"id": "prj_1", "key": "B", "name": "beta"}])
    local = cache.outbox.create(Resource.PROJECTS, {"key": "A", "name": "alpha"})
    cache.outbox.update(Resource.PROJECTS, "prj_1", {"name": "Beta 2"})
    assert [(p.id, p.name, p.sync_state) for p in cache.reads.projects()] == [
        (local, "alpha", SyncState.PENDING),
        ("prj_1", "Beta 2", SyncState.PENDING),
    ]


def test_a_delete_that_lands_removes_the_server_row(cache: Cache, one: str) -> None:
    entry = cache.outbox.delete(ISSUE, one)
    assert entry is not None
    cache.push.mark_sending(entry.id)
    cache.push.mark_done(entry.id)
    assert cache.server.local_count(ISSUE) == 0
    assert cache.reads.issue(one) is None
    cache.server.apply_page(ISSUE, [issue(1, title="original", status="todo")])
    assert cache.reads.issue(one) is not None, "nothing local hides a record the server still has"


def test_deleting_a_record_whose_create_is_in_flight_waits_for_its_id(cache: Cache) -> None:
    local = cache.outbox.create(ISSUE, {"title": "offline"})
    [create] = cache.outbox.entries()
    cache.push.mark_sending(create.id)
    delete = cache.outbox.delete(ISSUE, local)
    assert delete is not None and delete.server_id is None
    assert cache.reads.count(IssueFilter()) == 0
    assert cache.push.sendable() == []
    cache.push.mark_done(create.id, issue(77, title="offline"))
    [ready] = cache.push.sendable()
    assert (ready.id, ready.operation, ready.target_id) == (
        delete.id,
        Operation.DELETE,
        "iss_000077",
    )
    assert cache.reads.count(IssueFilter()) == 0


def test_undoing_an_unsent_create_removes_it_and_its_dependents(cache: Cache) -> None:
    batch = cache.outbox.new_batch_id()
    local = cache.outbox.create(ISSUE, {"title": "draft"}, batch_id=batch)
    cache.outbox.create(Resource.COMMENTS, {"issue_id": local, "body": "note"})
    undone = cache.outbox.undo_batch(batch)
    assert undone.batch_id is None and undone.dropped == (local,)
    assert cache.outbox.entries() == []
    assert cache.reads.issue(local) is None


def test_a_create_known_not_applied_stays_so_across_reopening_until_sent_again(
    cache: Cache,
) -> None:
    """What a push learned about a create's last attempt is in the file, not in one run's
    memory: doubtful after an unknown outcome, not after a refusal before the server acted or
    a look that did not find it, and doubtful again once a new attempt goes out."""
    cache.outbox.create(ISSUE, {"title": "lost answer"})
    cache.outbox.create(ISSUE, {"title": "refused"})
    lost, refused = cache.push.sendable()
    assert cache.push.doubtful() == set()
    for entry in (lost, refused):
        cache.push.mark_sending(entry.id)
    cache.push.release(lost.id, "outcome unknown")
    cache.push.release(refused.id, "503", not_applied=True)
    assert cache.push.doubtful() == {lost.id}
    cache.push.mark_not_applied([lost.id])
    with Cache.open(cache.path) as reopened:
        assert reopened.push.doubtful() == set()
        reopened.push.mark_sending(lost.id)
        reopened.push.release(lost.id, "outcome unknown")
        assert reopened.push.doubtful() == {lost.id}


def test_discarding_an_offline_project_unlinks_the_writes_that_name_it(
    cache: Cache, one: str
) -> None:
    """Nothing may wait forever on a temporary id that will never get a server id."""
    project = cache.outbox.create(Resource.PROJECTS, {"name": "Offline"})
    new = cache.outbox.create(ISSUE, {"title": "in it", "project_id": project, "priority": "low"})
    moved = cache.outbox.update(ISSUE, one, {"project_id": project})
    assert moved is not None
    create = next(e for e in cache.outbox.entries() if e.record_id == project)
    cache.outbox.discard(create.id)
    left = {entry.record_id: entry for entry in cache.outbox.entries()}
    assert project not in left and one not in left
    assert left[new].changes == {"title": "in it", "priority": "low"}
    assert [entry.record_id for entry in cache.push.sendable()] == [new]


def test_two_status_moves_that_the_workflow_cannot_join_stay_two(cache: Cache, one: str) -> None:
    """todo -> in_progress -> in_review, typed before the first is sent, is two writes:
    todo -> in_review, as one, would be refused by the server."""
    first = cache.outbox.update(ISSUE, one, {"status": "in_progress", "priority": "high"})
    second = cache.outbox.update(ISSUE, one, {"status": "in_review", "title": "moved on"})
    assert first is not None and second is not None and second.id != first.id
    assert [(e.base, e.changes) for e in cache.outbox.entries()] == [
        ({"status": "todo", "priority": "none"}, {"status": "in_progress", "priority": "high"}),
        (
            {"status": "in_progress", "title": "original"},
            {"status": "in_review", "title": "moved on"},
        ),
    ]
    assert row(cache, one) == ("moved on", "in_review", SyncState.PENDING)


def test_status_moves_the_workflow_joins_go_as_one(cache: Cache, one: str) -> None:
    """todo -> backlog -> in_progress is todo -> in_progress; back to todo is no move."""
    first = cache.outbox.update(ISSUE, one, {"status": "backlog"})
    second = cache.outbox.update(ISSUE, one, {"status": "in_progress"})
    assert first is not None and second is not None and second.id == first.id
    assert (second.base, second.changes) == ({"status": "todo"}, {"status": "in_progress"})
    assert cache.outbox.update(ISSUE, one, {"status": "todo"}) is None
    assert cache.outbox.entries() == []
