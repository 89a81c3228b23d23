"""Undoing a batch: unsent writes dropped, sent ones inverted by the ways a route allows, and
what cannot be restored named instead of written."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from cache_factories import Record, issue, stamp

from cache import Cache, EntryState, JsonValue, OutboxEntry, Resource
from cache.undo import CHANGED, DELETED, NO_ROUTE, Detour, Unrestored

ISSUE = Resource.ISSUES
MOVES = {
    "in_progress": ("todo",),
    "todo": ("backlog", "in_progress"),
    "backlog": ("todo", "in_progress"),
}
"""A small workflow for the route below: in_progress → backlog goes through todo, and
nothing leads back to done."""


def route(
    _resource: Resource, name: str, current: JsonValue, wanted: JsonValue
) -> Sequence[JsonValue] | None:
    if name != "status":
        return [wanted]
    if wanted in MOVES.get(str(current), ()):
        return [wanted]
    middle = [m for m in MOVES.get(str(current), ()) if wanted in MOVES.get(m, ())]
    return [middle[0], wanted] if middle else None


@pytest.fixture
def three(cache: Cache) -> list[str]:
    statuses = ("todo", "backlog", "done")
    cache.server.apply_page(ISSUE, [issue(n, status=s) for n, s in enumerate(statuses, start=1)])
    return [f"iss_{n:06d}" for n in (1, 2, 3)]


def send(cache: Cache, entry: OutboxEntry, server: Record) -> None:
    cache.push.mark_sending(entry.id)
    cache.push.mark_done(entry.id, server)


def bulk(cache: Cache, ids: list[str], changes: Record) -> tuple[str, list[OutboxEntry]]:
    batch = cache.outbox.update_many(ISSUE, ids, changes)
    return batch, [e for e in cache.outbox.entries() if e.batch_id == batch]


def status(cache: Cache, key: str) -> str | None:
    detail = cache.reads.issue(key)
    assert detail is not None
    return detail.issue.status


def test_a_status_goes_back_along_the_route_as_writes_in_order(
    cache: Cache, three: list[str]
) -> None:
    batch, entries = bulk(cache, three[:2], {"status": "in_progress"})
    for n, entry in enumerate(entries, start=1):
        send(cache, entry, issue(n, status="in_progress", updated_at=stamp(50 + n)))
    undone = cache.outbox.undo_batch(batch, route)
    assert undone.restored == (three[0], three[1]) and undone.unrestored == ()
    assert undone.detours == (Detour(three[1], "status", ("todo", "backlog")),)
    writes = [e for e in cache.outbox.entries() if e.batch_id == undone.batch_id]
    assert [(e.target_id, e.base, e.changes) for e in writes] == [
        (three[0], {"status": "in_progress"}, {"status": "todo"}),
        (three[1], {"status": "in_progress"}, {"status": "todo"}),
        (three[1], {"status": "todo"}, {"status": "backlog"}),
    ]
    assert [status(cache, key) for key in three[:2]] == ["todo", "backlog"]
    assert [e.target_id for e in cache.push.sendable()] == [three[0], three[1]], (
        "one step at a time"
    )


def test_a_field_changed_since_is_left_alone_and_named(cache: Cache, three: list[str]) -> None:
    batch, [entry] = bulk(cache, three[:1], {"status": "in_progress"})
    send(cache, entry, issue(1, status="in_progress", updated_at=stamp(50)))
    cache.server.apply_page(ISSUE, [issue(1, status="done", updated_at=stamp(60))])
    undone = cache.outbox.undo_batch(batch, route)
    assert undone.batch_id is None and undone.restored == ()
    assert undone.unrestored == (Unrestored(three[0], "status", CHANGED, "done", "todo"),)
    assert [e.state for e in cache.outbox.entries()] == [EntryState.DONE]


def test_no_way_back_is_named_not_written(cache: Cache, three: list[str]) -> None:
    batch, [entry] = bulk(cache, [three[2]], {"status": "in_progress"})
    send(cache, entry, issue(3, status="in_progress", updated_at=stamp(50)))
    undone = cache.outbox.undo_batch(batch, route)
    assert undone.unrestored == (Unrestored(three[2], "status", NO_ROUTE, "in_progress", "done"),)
    assert cache.outbox.entries((EntryState.PENDING,)) == []


def test_a_preview_says_what_the_undo_would_do_and_changes_nothing(
    cache: Cache, three: list[str]
) -> None:
    batch, entries = bulk(cache, three[:2], {"status": "in_progress"})
    send(cache, entries[0], issue(1, status="in_progress", updated_at=stamp(50)))
    before = cache.outbox.entries()
    preview = cache.outbox.undo_batch(batch, route, preview=True)
    assert (preview.dropped, preview.restored) == ((three[1],), (three[0],))
    assert preview.batch_id is None
    assert cache.outbox.entries() == before
    assert cache.outbox.undo_batch(batch, route).restored == preview.restored


def test_writes_that_never_landed_are_dropped_and_unknown_ones_inverted_after(
    cache: Cache, three: list[str]
) -> None:
    batch, (refused, unknown, unsent) = bulk(cache, three, {"priority": "high"})
    cache.push.mark_sending(refused.id)
    cache.push.mark_failed(refused.id, "400")
    cache.push.mark_sending(unknown.id)
    cache.push.release(unknown.id, "timed out: outcome unknown")
    undone = cache.outbox.undo_batch(batch, route)
    assert set(undone.dropped) == {refused.target_id, unsent.target_id}
    assert undone.restored == (unknown.target_id,)
    active = cache.outbox.entries((EntryState.PENDING,))
    assert [(e.id, e.changes) for e in active] == [
        (unknown.id, {"priority": "high"}),
        (active[1].id, {"priority": "none"}),
    ], "the write that may have landed goes first, then its inverse"


def test_a_delete_that_landed_cannot_be_undone(cache: Cache, three: list[str]) -> None:
    batch = cache.outbox.new_batch_id()
    entry = cache.outbox.delete(ISSUE, three[0], batch_id=batch)
    assert entry is not None
    cache.push.mark_sending(entry.id)
    cache.push.mark_done(entry.id)
    undone = cache.outbox.undo_batch(batch, route)
    assert undone.unrestored == (Unrestored(three[0], None, DELETED),)
    assert undone.empty


def test_undoing_the_undo_redoes_it(cache: Cache, three: list[str]) -> None:
    batch, [entry] = bulk(cache, [three[1]], {"status": "in_progress"})
    send(cache, entry, issue(2, status="in_progress", updated_at=stamp(50)))
    undone = cache.outbox.undo_batch(batch, route)
    assert undone.batch_id is not None
    first, second = [e for e in cache.outbox.entries() if e.batch_id == undone.batch_id]
    send(cache, first, issue(2, status="todo", updated_at=stamp(51)))
    send(cache, second, issue(2, status="backlog", updated_at=stamp(52)))
    redone = cache.outbox.undo_batch(undone.batch_id, route)
    assert redone.restored == (three[1],) and redone.detours == ()
    [write] = [e for e in cache.outbox.entries() if e.batch_id == redone.batch_id]
    assert (write.base, write.changes) == ({"status": "backlog"}, {"status": "in_progress"})
