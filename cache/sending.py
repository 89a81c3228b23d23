"""What the push engine does with the outbox: take the entries that can go, mark each
attempt, and record how it ended (landed, failed, refused in part for conflicts, unsure), so
the outbox always says what the server has.

These transitions commit normally, not durably: losing one to a power cut only means
resending with the same idempotency key. Settled entries are forgotten after a while
(`prune_settled`).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from cache import changelog, conflicts, outbox, outbox_life, records, suspects
from cache.db import Connector
from cache.errors import OutboxStateError
from cache.models import (
    Conflict,
    EntryState,
    FieldConflict,
    JsonObject,
    Operation,
    OutboxEntry,
    Resource,
)
from cache.resources import SPECS, record_id

SETTLED_RETENTION = 30 * 24 * 3600.0
"""Seconds a sent entry stays in the outbox once done (`prune_settled`'s default): long
enough to undo a batch of last week's edits and to tell our own confirmed values from
someone else's (`outbox_life.confirmed_since`), short enough that the table does not grow forever.
A discarded entry is gone at once."""


class Push:
    """`Cache.push`: the sending side of the outbox, for the push engine only."""

    def __init__(self, connector: Connector, clock: Callable[[], float] = time.time) -> None:
        self._db = connector
        self._clock = clock

    def sendable(self) -> list[OutboxEntry]:
        """Pending entries whose dependencies are met, in the order to send them."""
        with self._db.read() as conn:
            return outbox_life.sendable(conn)

    def mark_sending(self, entry_id: int) -> OutboxEntry:
        """Before each attempt: counts the attempt and freezes the entry against coalescing."""
        return self.mark_sending_many([entry_id])[0]

    def mark_sending_many(
        self, entry_ids: Sequence[int], *, bulk: tuple[str, JsonObject] | None = None
    ) -> list[OutboxEntry]:
        """`mark_sending` for the entries of one request, in one transaction. `bulk`: the
        `Idempotency-Key` and body of the bulk request they go out in, kept until they settle
        so that a lost answer can be asked for again by that key (`attempts`)."""
        with self._db.write() as conn:
            now = self._clock()
            sending = [
                outbox_life.transition(
                    conn, entry_id, (EntryState.PENDING,), EntryState.SENDING, now, attempt=True
                )
                for entry_id in entry_ids
            ]
            suspects.note_seen(conn, sending, now)
            suspects.note_request(conn, entry_ids, bulk)
            return sending

    def witness(self, since: float) -> tuple[Resource, str, str | None] | None:
        """The create last sent since `since` (local clock) that the server answered: its
        resource, its key and, when it went out in a bulk request, that request's key. Its
        key is one a server that honours keys holds an answer for."""
        with self._db.read() as conn:
            return suspects.witness(conn, since)

    def attempts(self, entry_ids: Iterable[int]) -> dict[int, suspects.BulkAttempt | None]:
        """For each entry whose last attempt is known: the bulk request it went out in (its
        key, body and the entry's place in it), or None for a request of its own."""
        with self._db.read() as conn:
            return suspects.attempts(conn, entry_ids)

    def release(
        self, entry_id: int, error: str | None = None, *, not_applied: bool = False
    ) -> OutboxEntry:
        """A retryable failure (or an unknown outcome): back to pending, key unchanged.
        `not_applied` says the attempt surely changed nothing (refused before the server
        acted), so a create goes out again without being looked for; it stays so, across
        runs, until the next attempt."""
        with self._db.write() as conn:
            return outbox_life.transition(
                conn,
                entry_id,
                (EntryState.SENDING,),
                EntryState.PENDING,
                self._clock(),
                error=error,
                not_applied=not_applied,
            )

    def mark_not_applied(self, entry_ids: Sequence[int]) -> None:
        """Creates looked for on the server and not found: sendable again without looking,
        by this run or any later one (until their next attempt)."""
        with self._db.write() as conn:
            outbox_life.mark_not_applied(conn, entry_ids)

    def doubtful(self) -> set[int]:
        """Ids of pending creates whose earlier attempt may have been applied: each must be
        looked for on the server before it is sent again
        (docs/sync.md#unknown-outcomes)."""
        with self._db.read() as conn:
            return outbox_life.doubtful(conn)

    def mark_failed(self, entry_id: int, error: str) -> OutboxEntry:
        """The server rejected the write: keep it, with the server's message, for the user.
        Its values are no longer shown, and later writes based on them are rebased on what
        was beneath it (`outbox.withdraw`)."""
        with self._db.write() as conn:
            entry = outbox_life.transition(
                conn,
                entry_id,
                (EntryState.SENDING, EntryState.PENDING),
                EntryState.FAILED,
                self._clock(),
                error=error,
            )
            outbox.withdraw(conn, entry)
            return entry

    def mark_done(
        self, entry_id: int, record: Mapping[str, Any] | None = None, *, gone: bool = False
    ) -> None:
        """The write landed. Pass the server's answer (`record`): it is stored in the same
        transaction, so the edit never flickers back to the old value. A create must pass it
        (its id replaces the temporary one everywhere); without it, an update shows the old
        server copy until the next pull (fine when that pull is how the result was found).
        `gone`: the create's record was deleted on the server since (someone else did): it is
        linked to its local row, and removed from the server copy in the same transaction."""
        with self._db.write() as conn:
            land(
                conn, [(entry_id, record)], (EntryState.SENDING, EntryState.PENDING), self._clock()
            )
            if gone and record is not None:
                entry = outbox.get(conn, entry_id)
                records.delete_records(conn, SPECS[entry.resource], {record_id(record): None})

    def mark_done_many(self, landed: Sequence[tuple[int, Mapping[str, Any] | None]]) -> None:
        """`mark_done` for the entries of one bulk answer, in one transaction, the records
        stored a page at a time: a hundred commits would cost more than the request."""
        with self._db.write() as conn:
            land(conn, landed, (EntryState.SENDING, EntryState.PENDING), self._clock())

    def seen_before(self, entry_ids: Sequence[int]) -> dict[int, frozenset[str]]:
        """For each create, the records like it the cache held when it was last sent: none of
        them can be its result."""
        with self._db.read() as conn:
            return suspects.seen(conn, entry_ids)

    def linked(self, resource: Resource, server_ids: Iterable[str]) -> set[str]:
        """Which of `server_ids` a local create already made: none can be another's result."""
        with self._db.read() as conn:
            return suspects.linked(conn, resource, server_ids)

    def mark_unsure(
        self, entry_id: int, found: Sequence[Mapping[str, Any]], message: str
    ) -> OutboxEntry:
        """A create that may have made one of `found`, or none: kept for the user to settle,
        neither sent nor dropped."""
        with self._db.write(durable=True) as conn:
            return suspects.mark_unsure(conn, entry_id, found, message, self._clock())

    def record_conflicts(self, entry_id: int, found: Sequence[FieldConflict]) -> list[Conflict]:
        """Park an entry as conflicting, one row per field for the user to settle."""
        with self._db.write() as conn:
            return conflicts.record(conn, entry_id, found, self._clock())

    def park_conflicts(self, entry_id: int, found: Sequence[FieldConflict]) -> OutboxEntry | None:
        """Park only the conflicting fields of an update, one row each for the user to settle;
        returns the entry carrying the other fields (to send now), None if nothing is left."""
        with self._db.write() as conn:
            return conflicts.park(conn, entry_id, found, self._clock())

    def detect_conflicts(
        self, entry: OutboxEntry, server_record: Mapping[str, Any]
    ) -> list[FieldConflict]:
        """The fields of an update someone else changed on the server since its base was
        taken; a value our own confirmed writes put there is never someone else's."""
        found = conflicts.detect(entry, server_record)
        if not found:
            return found
        with self._db.read() as conn:
            return conflicts.not_ours(found, outbox_life.confirmed_since(conn, entry))

    def prune_settled(self, keep: float = SETTLED_RETENTION) -> int:
        """Forget entries done more than `keep` seconds ago (local clock); how many went."""
        with self._db.write() as conn:
            return outbox_life.prune_done(conn, self._clock() - keep)


def land(
    conn: sqlite3.Connection,
    landed: Sequence[tuple[int, Mapping[str, Any] | None]],
    allowed: tuple[EntryState, ...],
    now: float,
) -> None:
    """Writes the server confirmed: done, the server's answers stored in their place, and a
    create's server id put in place of its temporary one everywhere. An answer that carries
    someone else's change made meanwhile logs it (cache.changelog); ours is not news."""
    stored: dict[Resource, list[Mapping[str, Any]]] = {}
    ours: dict[str, set[str]] = {}
    gone: dict[Resource, dict[str, str | None]] = {}
    created: list[tuple[OutboxEntry, str]] = []
    for entry_id, record in landed:
        entry = outbox.get(conn, entry_id)
        if entry.operation is Operation.CREATE and record is None:
            raise OutboxStateError("a create is done only with the record the server made")
        outbox_life.transition(conn, entry_id, allowed, EntryState.DONE, now)
        if entry.operation is Operation.DELETE:
            gone.setdefault(entry.resource, {})[entry.target_id] = None
        elif record is not None:
            stored.setdefault(entry.resource, []).append(record)
            ours.setdefault(record_id(record), set()).update(entry.changes)
            if entry.operation is Operation.CREATE:
                created.append((entry, record_id(record)))
    for resource, found in stored.items():
        spec = SPECS[resource]
        page = records.prepare(spec, found)
        seen = changelog.watch(resource, page, news=False)
        records.apply_page(conn, spec, page, seen)
        changelog.note(conn, seen, now, ours=ours)
    for resource, ids in gone.items():
        records.delete_records(conn, SPECS[resource], ids)
    for entry, server_id in created:
        outbox_life.map_created(conn, entry, server_id)
    records.prune_tombstones(conn)
