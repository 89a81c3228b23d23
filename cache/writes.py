"""The outbox half of the `Cache` API: local writes from the TUI, and the transitions the
sync engine makes while sending them.

Every local write computes its base from the effective view inside the same `BEGIN
IMMEDIATE` transaction that stores it, so the base is exactly what the user saw, and commits
durably (`synchronous=FULL`). The engine's transitions commit normally: losing one to a power
cut only means resending with the same idempotency key.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from cache import conflicts, outbox, overlay, records, suspects, undo
from cache.db import Connector
from cache.errors import OutboxStateError, RecordNotFoundError
from cache.models import (
    WRITABLE_RESOURCES,
    Conflict,
    EntryState,
    FieldConflict,
    JsonObject,
    JsonValue,
    Operation,
    OutboxEntry,
    Resolution,
    Resource,
)
from cache.overlay import Overlay
from cache.resources import SPECS, record_id


def _writable(resource: Resource) -> Resource:
    if resource not in WRITABLE_RESOURCES:
        raise OutboxStateError(f"{resource.value} cannot be written locally")
    return resource


class OutboxWrites:
    """Base of `Cache` holding its outbox methods, kept apart so each module stays small."""

    def __init__(self, connector: Connector, clock: Callable[[], float] = time.time) -> None:
        self._db = connector
        self._clock = clock

    @staticmethod
    def new_batch_id() -> str:
        """A group id for writes that undo together (a bulk edit)."""
        return uuid.uuid4().hex

    @staticmethod
    def _current(
        conn: sqlite3.Connection, view: Overlay, resource: Resource, target: str
    ) -> JsonObject:
        found = overlay.effective_record(conn, view, resource, target)
        if found is None:
            raise RecordNotFoundError(f"{resource.value} {target} is not in the cache")
        return found

    # -- local writes (the TUI) -------------------------------------------------------------

    def create(
        self, resource: Resource, fields: Mapping[str, JsonValue], *, batch_id: str | None = None
    ) -> str:
        """Queue a create; returns the record's temporary `local_…` id, usable at once."""
        with self._db.write(durable=True) as conn:
            resolved: JsonObject = {
                name: outbox.resolve_id(conn, value) if isinstance(value, str) else value
                for name, value in fields.items()
            }
            entry = outbox.enqueue_create(
                conn,
                _writable(resource),
                resolved,
                outbox.parent_of(resource, resolved),
                batch_id,
                self._clock(),
            )
            return entry.record_id

    def update(
        self,
        resource: Resource,
        record_id: str,
        changes: Mapping[str, JsonValue],
        *,
        batch_id: str | None = None,
    ) -> OutboxEntry | None:
        """Queue an edit; None when it changes nothing (or undid a pending edit)."""
        with self._db.write(durable=True) as conn:
            return self._update(conn, overlay.compute(conn), resource, record_id, changes, batch_id)

    def _update(
        self,
        conn: sqlite3.Connection,
        view: Overlay,
        resource: Resource,
        record_id: str,
        changes: Mapping[str, JsonValue],
        batch_id: str | None,
    ) -> OutboxEntry | None:
        target = outbox.resolve_id(conn, record_id)
        current = self._current(conn, view, _writable(resource), target)
        return outbox.enqueue_update(
            conn,
            resource,
            target,
            current,
            dict(changes),
            outbox.parent_of(resource, current),
            batch_id,
            self._clock(),
            beneath=lambda earlier: overlay.beneath(conn, resource, target, earlier),
        )

    def update_many(
        self, resource: Resource, record_ids: Iterable[str], changes: Mapping[str, JsonValue]
    ) -> str:
        """One bulk edit in one transaction, under a new batch id (returned) for undo."""
        batch_id = self.new_batch_id()
        with self._db.write(durable=True) as conn:
            view = overlay.compute(conn)
            for key in dict.fromkeys(record_ids):
                self._update(conn, view, resource, key, changes, batch_id)
        return batch_id

    def delete(
        self, resource: Resource, record_id: str, *, batch_id: str | None = None
    ) -> OutboxEntry | None:
        """Queue a delete; None when the record was only ever local and simply vanished."""
        with self._db.write(durable=True) as conn:
            target = outbox.resolve_id(conn, record_id)
            current = self._current(conn, overlay.compute(conn), _writable(resource), target)
            return outbox.enqueue_delete(
                conn, resource, target, outbox.parent_of(resource, current), batch_id, self._clock()
            )

    def undo_batch(
        self, batch_id: str, route: undo.Route = undo.direct, *, preview: bool = False
    ) -> undo.UndoResult:
        """Undo a group of writes: unsent ones are dropped, sent ones get inverse writes under
        a new batch id, by the ways `route` allows; what cannot be restored is named, not
        written (see `cache.undo`). `preview` says what it would do and changes nothing."""
        with self._db.write(durable=not preview) as conn:
            if not preview:
                return undo.undo(conn, batch_id, route, self._clock(), self.new_batch_id())
            conn.execute("SAVEPOINT undo_preview")
            try:
                found = undo.undo(conn, batch_id, route, self._clock(), self.new_batch_id())
            finally:
                conn.execute("ROLLBACK TO undo_preview")
                conn.execute("RELEASE undo_preview")
            return replace(found, batch_id=None)

    def discard(self, entry_id: int) -> None:
        """Drop an entry that is not in flight (a create takes its dependents with it)."""
        with self._db.write(durable=True) as conn:
            outbox.discard(conn, entry_id)
            records.prune_tombstones(conn)

    def retry(self, entry_id: int) -> OutboxEntry:
        """Put a failed entry back in the queue: its values show again. Later writes of the
        same fields keep the bases they have: the entry goes out before them, and once it is
        confirmed its values are our own doing (`outbox.confirmed_since`), never a conflict;
        rebasing them onto it again would wrongly base a write typed while it was refused."""
        with self._db.write(durable=True) as conn:
            return outbox.transition(
                conn, entry_id, (EntryState.FAILED,), EntryState.PENDING, self._clock()
            )

    def conflicts(
        self, entry_id: int | None = None, *, unresolved_only: bool = True
    ) -> list[Conflict]:
        with self._db.read() as conn:
            return conflicts.listing(conn, entry_id, unresolved_only)

    def resolve_conflict(self, conflict_id: int, resolution: Resolution) -> OutboxEntry | None:
        """Settle one field; the entry is pending again once all its fields are settled."""
        with self._db.write(durable=True) as conn:
            entry = conflicts.resolve(conn, conflict_id, resolution, self._clock())
            records.prune_tombstones(conn)
            return entry

    # -- sending (the sync engine) ----------------------------------------------------------

    def outbox(self, states: Iterable[EntryState] | None = None) -> list[OutboxEntry]:
        with self._db.read() as conn:
            return outbox.entries(conn, states)

    def outbox_entry(self, entry_id: int) -> OutboxEntry:
        with self._db.read() as conn:
            return outbox.get(conn, entry_id)

    def sendable(self) -> list[OutboxEntry]:
        """Pending entries whose dependencies are met, in the order to send them."""
        with self._db.read() as conn:
            return outbox.sendable(conn)

    def resolve_id(self, record_id: str) -> str:
        """The server id of a record created offline, once known; other ids unchanged."""
        with self._db.read() as conn:
            return outbox.resolve_id(conn, record_id)

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
                outbox.transition(
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
            return outbox.transition(
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
            outbox.mark_not_applied(conn, entry_ids)

    def doubtful(self) -> set[int]:
        """Ids of pending creates whose earlier attempt may have been applied: each must be
        looked for on the server before it is sent again (SYNC.md 4)."""
        with self._db.read() as conn:
            return outbox.doubtful(conn)

    def mark_failed(self, entry_id: int, error: str) -> OutboxEntry:
        """The server rejected the write: keep it, with the server's message, for the user.
        Its values are no longer shown, and later writes based on them are rebased on what
        was beneath it (`outbox.withdraw`)."""
        with self._db.write() as conn:
            entry = outbox.transition(
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
            self._land(conn, [(entry_id, record)], (EntryState.SENDING, EntryState.PENDING))
            if gone and record is not None:
                entry = outbox.get(conn, entry_id)
                records.delete_records(conn, SPECS[entry.resource], {record_id(record): None})

    def mark_done_many(self, landed: Sequence[tuple[int, Mapping[str, Any] | None]]) -> None:
        """`mark_done` for the entries of one bulk answer, in one transaction, the records
        stored a page at a time: a hundred commits would cost more than the request."""
        with self._db.write() as conn:
            self._land(conn, landed, (EntryState.SENDING, EntryState.PENDING))

    def _land(
        self,
        conn: sqlite3.Connection,
        landed: Sequence[tuple[int, Mapping[str, Any] | None]],
        allowed: tuple[EntryState, ...],
    ) -> None:
        now = self._clock()
        stored: dict[Resource, list[Mapping[str, Any]]] = {}
        gone: dict[Resource, dict[str, str | None]] = {}
        created: list[tuple[OutboxEntry, str]] = []
        for entry_id, record in landed:
            entry = outbox.get(conn, entry_id)
            if entry.operation is Operation.CREATE and record is None:
                raise OutboxStateError("a create is done only with the record the server made")
            outbox.transition(conn, entry_id, allowed, EntryState.DONE, now)
            if entry.operation is Operation.DELETE:
                gone.setdefault(entry.resource, {})[entry.target_id] = None
            elif record is not None:
                stored.setdefault(entry.resource, []).append(record)
                if entry.operation is Operation.CREATE:
                    created.append((entry, record_id(record)))
        for resource, found in stored.items():
            spec = SPECS[resource]
            records.apply_page(conn, spec, records.prepare(spec, found))
        for resource, ids in gone.items():
            records.delete_records(conn, SPECS[resource], ids)
        for entry, server_id in created:
            outbox.map_created(conn, entry, server_id)
        records.prune_tombstones(conn)

    # -- creates whose answer was lost (cache.suspects) -------------------------------------

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

    def suspects(self, entry_id: int) -> list[JsonObject]:
        """The records an `unsure` create may have made."""
        with self._db.read() as conn:
            return suspects.suspects(conn, entry_id)

    def send_anyway(self, entry_id: int) -> OutboxEntry:
        """Settle an `unsure` create as not on the server: it is sent (once more) as it is."""
        with self._db.write(durable=True) as conn:
            return suspects.send_anyway(conn, entry_id, self._clock())

    def same_as(self, entry_id: int, server_id: str | None = None) -> OutboxEntry:
        """Settle an `unsure` create as the one that made `server_id` (None: its only suspect):
        linked to that record as if its answer had come. Refused for a record that is not
        among its suspects, or that another local write already made."""
        with self._db.write(durable=True) as conn:
            entry = outbox.get(conn, entry_id)
            if entry.state is not EntryState.UNSURE:
                raise OutboxStateError(f"entry {entry_id} is {entry.state.value}, not unsure")
            found = {record_id(record): record for record in suspects.suspects(conn, entry_id)}
            if server_id is None and len(found) != 1:
                raise OutboxStateError(f"entry {entry_id} may be one of {len(found)}: say which")
            chosen = next(iter(found)) if server_id is None else server_id
            if chosen not in found:
                raise OutboxStateError(f"{chosen} is not among what entry {entry_id} may be")
            if suspects.linked(conn, entry.resource, [chosen]):
                raise OutboxStateError(f"{chosen} is already the result of another local write")
            self._land(conn, [(entry_id, found[chosen])], (EntryState.UNSURE,))
            return outbox.get(conn, entry_id)

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
            return conflicts.not_ours(found, outbox.confirmed_since(conn, entry))

    def prune_outbox(self, before: float) -> int:
        """Forget done entries last touched before `before` (local clock)."""
        with self._db.write() as conn:
            return outbox.prune_done(conn, before)
