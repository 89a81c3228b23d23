"""What the user does with the outbox: queue a create, an edit, a delete (one at a time or
in bulk), undo a batch, and settle what the push could not (discard, retry, resolve a
conflict, say what an unsure create made).

Every local write computes its base from the effective view inside the same `BEGIN
IMMEDIATE` transaction that stores it, so the base is exactly what the user saw, and commits
durably (`synchronous=FULL`): an edit exists nowhere else.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping

from cache import conflicts, outbox, outbox_life, overlay, records, suspects, undo
from cache.db import Connector
from cache.errors import OutboxStateError, RecordNotFoundError
from cache.models import (
    EDIT_ONLY_RESOURCES,
    WRITABLE_RESOURCES,
    Conflict,
    EntryState,
    JsonObject,
    JsonValue,
    OutboxEntry,
    Resolution,
    Resource,
)
from cache.overlay import Overlay
from cache.resources import record_id
from cache.sending import land


def _writable(resource: Resource, *, edit: bool = False) -> Resource:
    if resource not in WRITABLE_RESOURCES:
        raise OutboxStateError(f"{resource.value} cannot be written locally")
    if not edit and resource in EDIT_ONLY_RESOURCES:
        raise OutboxStateError(f"{resource.value} can only be edited")
    return resource


class Outbox:
    """`Cache.outbox`: the user's writes, queued until the push sends them, and their fate."""

    def __init__(self, connector: Connector, clock: Callable[[], float] = time.time) -> None:
        self._db = connector
        self._clock = clock

    @staticmethod
    def new_batch_id() -> str:
        """A group id for writes that undo together (a bulk edit)."""
        return outbox.random_hex()

    @staticmethod
    def _current(
        conn: sqlite3.Connection, view: Overlay, resource: Resource, target: str
    ) -> JsonObject:
        found = overlay.effective_record(conn, view, resource, target)
        if found is None:
            raise RecordNotFoundError(f"{resource.value} {target} is not in the cache")
        return found

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
        current = self._current(conn, view, _writable(resource, edit=True), target)
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
            return found.replace(batch_id=None)

    def discard(self, entry_id: int) -> None:
        """Drop an entry that is not in flight (a create takes its dependents with it)."""
        with self._db.write(durable=True) as conn:
            outbox.discard(conn, entry_id)
            records.prune_tombstones(conn)

    def retry(self, entry_id: int) -> OutboxEntry:
        """Put a failed entry back in the queue: its values show again. Later writes of the
        same fields keep the bases they have: the entry goes out before them, and once it is
        confirmed its values are our own doing (`outbox_life.confirmed_since`), never a conflict;
        rebasing them onto it again would wrongly base a write typed while it was refused."""
        with self._db.write(durable=True) as conn:
            return outbox_life.transition(
                conn, entry_id, (EntryState.FAILED,), EntryState.PENDING, self._clock()
            )

    def entries(self, states: Iterable[EntryState] | None = None) -> list[OutboxEntry]:
        with self._db.read() as conn:
            return outbox.entries(conn, states)

    def entry(self, entry_id: int) -> OutboxEntry:
        with self._db.read() as conn:
            return outbox.get(conn, entry_id)

    def resolve_id(self, record_id: str) -> str:
        """The server id of a record created offline, once known; other ids unchanged."""
        with self._db.read() as conn:
            return outbox.resolve_id(conn, record_id)

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
            land(conn, [(entry_id, found[chosen])], (EntryState.UNSURE,), self._clock())
            return outbox.get(conn, entry_id)
