"""Refused, dropped and retried writes: what the screen shows is the server's copy plus the
writes still to be applied (never a refused one), no refused write becomes the base of a later
one, and a conflict's "theirs" is always someone else's change, never our own write.

The property test plays random sequences of local edits, pushes the server accepts or refuses,
colleagues' edits, pulls, retries, discards and conflict settlements against a model server,
driving the cache through the same calls the push engine makes."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from cache_factories import Clock, Record, issue, stamp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cache import Cache, EntryState, FieldConflict, Resolution, Resource, SyncState

ISSUE = Resource.ISSUES
ONE = "iss_000001"
TYPED = {
    "title": ["Issue 1", "mine A", "mine B"],
    "assignee": [None, "usr_me", "usr_you"],
}
"""What the user may type per field: the original value or one of two of their own. Two
fields: enough for writes that touch several, few enough that writes often meet."""
FIELDS = sorted(TYPED)
SHOWN = ("assignee", "priority", "title")


@contextmanager
def fresh_cache() -> Iterator[Cache]:
    with tempfile.TemporaryDirectory() as tmp:
        cache = Cache.open(Path(tmp) / "cache.db", clock=Clock(start=1000.0))
        try:
            yield cache
        finally:
            cache.close()


@pytest.fixture
def cache() -> Iterator[Cache]:
    with fresh_cache() as store:
        store.server.apply_page(ISSUE, [issue(1)])
        yield store


def shown(cache: Cache, key: str = ONE) -> Record:
    detail = cache.reads.issue(key)
    assert detail is not None
    return {name: detail.record.get(name) for name in SHOWN}


def refuse(cache: Cache, entry_id: int) -> None:
    cache.push.mark_sending(entry_id)
    cache.push.mark_failed(entry_id, "400: refused")


def land(cache: Cache, entry_id: int, server: Record, at: int) -> Record:
    """The server applies the entry at `at` and answers with the record."""
    entry = cache.push.mark_sending(entry_id)
    server.update(entry.changes)
    server["updated_at"] = stamp(at)
    cache.push.mark_done(entry_id, dict(server))
    return server


def test_a_refused_edit_shows_the_servers_value_marked_failed(cache: Cache) -> None:
    entry = cache.outbox.update(ISSUE, ONE, {"assignee": "me"})
    assert entry is not None
    refuse(cache, entry.id)
    assert shown(cache)["assignee"] is None
    detail = cache.reads.issue(ONE)
    assert detail is not None and detail.issue.sync_state is SyncState.FAILED
    assert [e.state for e in detail.entries] == [EntryState.FAILED]


def test_an_issue_deleted_under_a_refused_comment_stays_in_sight(cache: Cache) -> None:
    """A comment refused because someone deleted its issue: the issue stays listed, marked
    failed, until the comment is discarded (it vanished with the pull that saw the delete, the
    refused comment with it, as only writes to the issue itself kept its tombstone)."""
    cache.outbox.create(Resource.COMMENTS, {"issue_id": ONE, "body": "on a doomed issue"})
    [entry] = cache.outbox.entries()
    refuse(cache, entry.id)
    cache.server.apply_page(ISSUE, [{"id": ONE, "deleted": True, "updated_at": stamp(90)}])
    detail = cache.reads.issue(ONE)
    assert detail is not None and detail.issue.sync_state is SyncState.FAILED
    assert [comment.body for comment in detail.comments] == ["on a doomed issue"]
    cache.outbox.discard(entry.id)
    assert cache.reads.issue(ONE) is None


def test_the_next_edit_after_a_refusal_is_based_on_the_server(cache: Cache) -> None:
    first = cache.outbox.update(ISSUE, ONE, {"assignee": "me"})
    assert first is not None
    refuse(cache, first.id)
    second = cache.outbox.update(ISSUE, ONE, {"assignee": "usr_2"})
    assert second is not None and second.base == {"assignee": None}
    assert cache.push.detect_conflicts(second, issue(1)) == []


def test_an_edit_queued_behind_a_write_that_is_then_refused_is_rebased(cache: Cache) -> None:
    first = cache.outbox.update(ISSUE, ONE, {"assignee": "me", "priority": "high"})
    assert first is not None
    cache.push.mark_sending(first.id)
    second = cache.outbox.update(ISSUE, ONE, {"assignee": "usr_2"})
    third = cache.outbox.update(ISSUE, ONE, {"assignee": "usr_3"}, batch_id="other")
    assert second is not None and second.base == {"assignee": "me"}
    assert third is not None and third.base == {"assignee": "usr_2"}
    cache.push.mark_failed(first.id, "400: no user me")
    assert cache.outbox.entry(second.id).base == {"assignee": None}
    assert cache.outbox.entry(third.id).base == {"assignee": "usr_2"}, "based on the second"
    assert shown(cache) == {"assignee": "usr_3", "priority": "none", "title": "Issue 1"}
    cache.outbox.retry(first.id)
    assert shown(cache)["priority"] == "high"
    # The retried write goes first; once confirmed, its value is ours, not a conflict for the
    # second (whose base stays what it was rebased to: it may have been typed while refused).
    assert [e.id for e in cache.push.sendable()] == [first.id]
    server = land(cache, first.id, issue(1), at=20)
    assert cache.push.detect_conflicts(cache.outbox.entry(second.id), server) == []


def test_the_part_split_off_a_partly_conflicting_edit_keeps_its_place(cache: Cache) -> None:
    """Its answer lost, the split part waits again: before the later write typed over it, or
    it would be sent after that write and overwrite it with the older value."""
    first = cache.outbox.update(ISSUE, ONE, {"assignee": "me", "title": "mine"}, batch_id="bulk")
    assert first is not None
    cache.push.mark_sending(first.id)
    later = cache.outbox.update(ISSUE, ONE, {"title": "mine again"})
    assert later is not None
    found = [FieldConflict("assignee", None, "me", "theirs")]
    going = cache.push.park_conflicts(first.id, found)
    assert going is not None and going.id > later.id
    cache.push.release(going.id)
    assert [e.id for e in cache.push.sendable()] == [going.id]
    assert shown(cache)["title"] == "mine again"
    cache.push.mark_sending(going.id)
    cache.push.mark_failed(going.id, "400: refused")
    assert cache.outbox.entry(later.id).base == {"title": "Issue 1"}


def test_our_own_confirmed_write_is_never_theirs(cache: Cache) -> None:
    """Refused, then a later edit lands, then the refused one is retried: the server holds
    our own later value, which is no one else's change."""
    first = cache.outbox.update(ISSUE, ONE, {"status": "in_progress"})
    assert first is not None
    refuse(cache, first.id)
    second = cache.outbox.update(ISSUE, ONE, {"status": "backlog"})
    assert second is not None and second.base == {"status": "todo"}
    server = land(cache, second.id, issue(1), at=60)
    retried = cache.outbox.retry(first.id)
    assert cache.push.detect_conflicts(retried, server) == []
    colleague = {**server, "status": "canceled"}
    assert cache.push.detect_conflicts(retried, colleague) == [
        FieldConflict("status", "todo", "in_progress", "canceled")
    ]


def test_editing_back_after_a_pull_brought_a_colleagues_value_is_kept(cache: Cache) -> None:
    """Edit, a pull brings a colleague's value of the field, edit back to the original: the
    screen must show what was typed, and the write must be checked against the colleague's."""
    entry = cache.outbox.update(ISSUE, ONE, {"priority": "high"})
    assert entry is not None
    cache.server.apply_page(ISSUE, [issue(1, priority="urgent", updated_at=stamp(50))])
    assert shown(cache)["priority"] == "high"
    again = cache.outbox.update(ISSUE, ONE, {"priority": "none"})
    assert shown(cache)["priority"] == "none"
    assert again is not None and again.changes == {"priority": "none"}
    server = issue(1, priority="urgent", updated_at=stamp(50))
    assert cache.push.detect_conflicts(again, server) == [
        FieldConflict("priority", "none", "none", "urgent")
    ]


def test_editing_back_with_nothing_new_beneath_still_vanishes(cache: Cache) -> None:
    cache.outbox.update(ISSUE, ONE, {"priority": "high"})
    assert cache.outbox.update(ISSUE, ONE, {"priority": "none"}) is None
    assert cache.outbox.entries() == []


def test_editing_back_an_issue_deleted_on_the_server_keeps_the_edit_in_sight(
    cache: Cache,
) -> None:
    """Found by the model (seed 6004): edit, a pull brings a colleague's delete (the issue
    stays listed for the pending edit), edit back to the original. The edit was taken for an
    edit back over an unchanged server copy and dropped, and the issue vanished under the
    user's hands with what they had just typed; it must stay, to meet the delete when sent."""
    cache.outbox.update(ISSUE, ONE, {"priority": "high"})
    cache.server.apply_page(ISSUE, [{"id": ONE, "deleted": True, "updated_at": stamp(90)}])
    again = cache.outbox.update(ISSUE, ONE, {"priority": "none"})
    assert again is not None and again.changes == {"priority": "none"}
    assert shown(cache)["priority"] == "none"


def test_taking_theirs_leaves_a_later_edit_of_the_field_to_be_checked(cache: Cache) -> None:
    """The later edit was typed over the dropped value, without seeing theirs: it goes back
    to the dropped write's base, so theirs is a conflict for it too, not overwritten."""
    first = cache.outbox.update(ISSUE, ONE, {"title": "mine"})
    assert first is not None
    cache.push.mark_sending(first.id)
    later = cache.outbox.update(ISSUE, ONE, {"title": "mine again"})
    assert later is not None and later.base == {"title": "mine"}
    [conflict] = cache.push.record_conflicts(
        first.id, [FieldConflict("title", "Issue 1", "mine", "theirs")]
    )
    cache.outbox.resolve_conflict(conflict.id, Resolution.THEIRS)
    rebased = cache.outbox.entry(later.id)
    assert rebased.base == {"title": "Issue 1"}
    assert cache.push.detect_conflicts(rebased, issue(1, title="theirs")) == [
        FieldConflict("title", "Issue 1", "mine again", "theirs")
    ]


# -- the property --------------------------------------------------------------------------

EDITS = [("edit", name, n, batched) for name in FIELDS for n in range(3) for batched in (0, 1)]
MOVES = [
    *EDITS,
    *[("send", True)] * 6,
    *[("send", False)] * 3,
    *[("colleague", name) for name in FIELDS],
    ("pull",),
    *[("retry",)] * 2,
    ("discard",),
    ("settle", True),
    ("settle", False),
]
"""Every move, sends weighted up: each write takes two (start, then the server's answer)."""

REFUSED_UNDER_A_LATER_EDIT = [
    ("edit", "assignee", 1, 0),
    ("send", True),
    ("edit", "assignee", 2, 0),
    ("send", False),
    ("send", True),
    ("send", True),
]
"""Defect 6 (issue 14): the second edit was typed while the first was in flight, over its
value; the first is refused; the second must not be checked against the refused value."""
RETRIED_AFTER_A_LATER_EDIT_LANDED = [
    ("edit", "title", 1, 0),
    ("send", True),
    ("send", False),
    ("edit", "title", 2, 0),
    ("send", True),
    ("send", True),
    ("retry",),
    ("send", True),
    ("send", True),
]
"""The server holds our own later value when the refused write is retried: not theirs."""
TYPED_BACK_OVER_A_PULLED_CHANGE = [
    ("edit", "title", 1, 0),
    ("colleague", "title"),
    ("pull",),
    ("edit", "title", 0, 0),
    ("send", True),
    ("send", True),
]
"""Typed back to the original after a pull brought a colleague's value: what was typed shows,
and goes out checked against the colleague's value."""
RETRIED_UNDER_AN_EDIT_TYPED_WHILE_REFUSED = [
    ("edit", "assignee", 1, 0),
    ("send", True),
    ("send", False),
    ("edit", "assignee", 1, 0),
    ("send", True),
    ("retry",),
]
"""The second edit was typed while the first stood refused, over the server's value: retrying
the first must not rebase the second onto it (its check then took the server's unchanged
value for someone else's)."""
REFUSED_SPLIT_UNDER_A_LATER_EDIT = [
    ("edit", "assignee", 1, 1),
    ("edit", "title", 1, 1),
    ("edit", "title", 2, 0),
    ("send", True),
    ("colleague", "assignee"),
    ("send", False),
]
"""The clean part of a partly conflicting edit, split off and refused: the later title edit
was typed over it, and must be rebased although the split part got a newer id."""
DISCARDED_AFTER_THE_SAME_VALUE_LANDED = [
    ("edit", "assignee", 1, 0),
    ("send", True),
    ("send", False),
    ("edit", "assignee", 1, 0),
    ("send", True),
    ("send", True),
    ("edit", "assignee", 0, 0),
]
"""The refused write's value landed through a second edit, and a third was typed over the
server's copy: discarding the refused one (drain) must not rebase the third onto the refused
write's base because their values coincide."""
OWN_VALUE_UNDER_A_WRITE_EDITED_AFTER_A_REFUSAL = [
    ("edit", "assignee", 1, 0),
    ("send", True),
    ("edit", "assignee", 0, 0),
    ("send", True),
    ("send", True),
    ("edit", "assignee", 1, 0),
    ("send", False),
    ("edit", "assignee", 0, 0),
]
"""The third write, typed while the second was in flight, set the server's value (our own
first write's) and kept the refused second's as its base; edited again before it went out,
it must be based on the server's value: checked against its old base, our own value read as
a colleague's conflict (found by this test at random, 2026-11-27)."""


class World:
    """The model server, what the cache has been shown of it, and the checks."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache
        self.server: Record = issue(1)
        self.clock = 10
        self.colleague = itertools.count(1)
        self.seen: dict[str, list[Any]] = {name: [self.server[name]] for name in FIELDS}
        cache.server.apply_page(ISSUE, [dict(self.server)])

    def bump(self) -> None:
        self.clock += 1
        self.server["updated_at"] = stamp(self.clock)

    def remember(self) -> None:
        copy = self.cache.server.server_record(ISSUE, ONE) or {}
        for name in FIELDS:
            self.seen[name].append(copy.get(name))

    def play(self, move: tuple[Any, ...]) -> None:
        cache = self.cache
        kind = move[0]
        if kind == "edit":
            name, value = move[1], TYPED[move[1]][move[2]]
            cache.outbox.update(ISSUE, ONE, {name: value}, batch_id="bulk" if move[3] else None)
            assert shown(cache)[name] == value, "what was typed is what shows"
        elif kind == "send":
            self.send(accept=move[1])
        elif kind == "colleague":
            self.server[move[1]] = f"theirs {next(self.colleague)}"
            self.bump()
        elif kind == "pull":
            cache.server.apply_page(ISSUE, [dict(self.server)])
        elif kind in ("retry", "discard"):
            stuck = cache.outbox.entries((EntryState.FAILED, EntryState.CONFLICT))
            if stuck and kind == "discard":
                cache.outbox.discard(stuck[0].id)
            failed = [e for e in stuck if e.state is EntryState.FAILED]
            if failed and kind == "retry":
                cache.outbox.retry(failed[0].id)
        elif kind == "settle":
            open_ones = cache.outbox.conflicts()
            if open_ones:
                mine = Resolution.MINE if move[1] else Resolution.THEIRS
                cache.outbox.resolve_conflict(open_ones[0].id, mine)
        self.remember()
        self.check_overlay()

    def send(self, *, accept: bool) -> None:
        """Half of sending one entry the way the push engine does: mark the next sendable
        one `sending` (edits may come in meanwhile); then, on the next call, refresh, compare,
        park the conflicts and have the server apply or refuse the rest."""
        cache = self.cache
        [entry] = cache.outbox.entries((EntryState.SENDING,)) or [None]
        if entry is None:
            ready = cache.push.sendable()
            if ready:
                cache.push.mark_sending(ready[0].id)
            return
        before = {name: list(values) for name, values in self.seen.items()}
        cache.server.apply_page(ISSUE, [dict(self.server)])
        found = cache.push.detect_conflicts(entry, self.server)
        for conflict in found:
            assert str(conflict.theirs).startswith("theirs"), f"not someone else's: {conflict}"
        going = cache.push.park_conflicts(entry.id, found)
        if going is None:
            return
        if not accept:
            cache.push.mark_failed(going.id, "400: refused")
            return
        for name in going.changes:
            prior = self.server[name]
            unseen = str(prior).startswith("theirs") and prior not in before[name]
            assert not unseen, f"overwrote {prior!r}, which the user never saw"
        self.server.update(going.changes)
        self.bump()
        cache.push.mark_done(going.id, dict(self.server))

    def check_overlay(self) -> None:
        """Shown = the cache's server copy + every active write that is not failed, in order."""
        cache = self.cache
        copy = cache.server.server_record(ISSUE, ONE) or {}
        want: Record = {name: copy.get(name) for name in SHOWN}
        entries = cache.outbox.entries(
            (EntryState.PENDING, EntryState.SENDING, EntryState.CONFLICT)
        )
        for entry in sorted(entries, key=lambda e: e.queue_order):
            want.update({k: v for k, v in entry.changes.items() if k in want})
        assert shown(cache) == want
        detail = cache.reads.issue(ONE)
        assert detail is not None
        if any(e.state is EntryState.FAILED for e in cache.outbox.entries()):
            assert detail.issue.sync_state in (SyncState.FAILED, SyncState.CONFLICT)

    def drain(self) -> None:
        """Settle everything and send the rest: the screen ends equal to the server."""
        cache = self.cache
        for _ in range(100):
            for entry in cache.outbox.entries((EntryState.FAILED,)):
                cache.outbox.discard(entry.id)
            for conflict in cache.outbox.conflicts():
                cache.outbox.resolve_conflict(conflict.id, Resolution.THEIRS)
            if not cache.push.sendable() and not cache.outbox.entries((EntryState.SENDING,)):
                break
            self.send(accept=True)
        assert (
            cache.outbox.entries((EntryState.PENDING, EntryState.FAILED, EntryState.CONFLICT)) == []
        )
        cache.server.apply_page(ISSUE, [dict(self.server)])
        assert shown(cache) == {name: self.server[name] for name in SHOWN}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(MOVES), max_size=30))
@example(REFUSED_UNDER_A_LATER_EDIT)
@example(RETRIED_AFTER_A_LATER_EDIT_LANDED)
@example(TYPED_BACK_OVER_A_PULLED_CHANGE)
@example(RETRIED_UNDER_AN_EDIT_TYPED_WHILE_REFUSED)
@example(REFUSED_SPLIT_UNDER_A_LATER_EDIT)
@example(DISCARDED_AFTER_THE_SAME_VALUE_LANDED)
@example(OWN_VALUE_UNDER_A_WRITE_EDITED_AFTER_A_REFUSAL)
def test_shown_is_server_plus_unrefused_writes_and_conflicts_are_someone_elses(
    moves: list[tuple[Any, ...]],
) -> None:
    with fresh_cache() as cache:
        world = World(cache)
        for move in moves:
            world.play(move)
        world.drain()
