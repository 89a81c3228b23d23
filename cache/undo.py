"""Undoing a batch of writes (a bulk edit) as far as it can be undone, and naming the rest.

Per record of the batch:

- writes the server certainly never applied (never sent, refused, parked as a conflict, known
  not applied) are dropped: there is nothing to invert;
- the fields the others set get their values from before the batch back, through new writes
  under a new batch id (so undoing that batch redoes the first). A field is restored only
  while it still shows what the batch set: one changed since, by a colleague or by the user,
  is theirs, and is left alone and named;
- `route` says how a field may go back: the values to set in turn, each its own write sent
  in order (a workflow may need a detour: in_progress → todo → backlog), or None when there
  is no allowed way, and the field is named instead of becoming a write the server refuses;
- a delete already sent cannot be taken back; a create that landed is deleted again.

The cache knows no workflow: `route` comes from the caller, which does.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from cache import outbox, outbox_life, overlay
from cache.errors import OutboxStateError
from cache.models import JsonValue, Operation, OutboxEntry, Resource
from issuefields.frozen import Frozen

Route = Callable[[Resource, str, JsonValue, JsonValue], Sequence[JsonValue] | None]
"""(resource, field, current value, value to restore) → the values to set in turn, the last
being the one to restore; None when no allowed way leads back."""

CHANGED = "changed since"
NO_ROUTE = "no allowed way back"
DELETED = "deleted on the server"
GONE = "no longer on the server"


def direct(
    _resource: Resource, _field: str, _current: JsonValue, wanted: JsonValue
) -> list[JsonValue]:
    """Any value may be set straight back."""
    return [wanted]


class Unrestored(Frozen):
    """A record (or one field of it) the undo leaves as it is, and why."""

    _fields = ("record_id", "field", "reason", "current", "wanted")
    __slots__ = _fields
    record_id: str
    field: str | None
    reason: str
    current: JsonValue
    wanted: JsonValue

    def __init__(
        self,
        record_id: str,
        field: str | None,
        reason: str,
        current: JsonValue = None,
        wanted: JsonValue = None,
    ) -> None:
        self._init(record_id, field, reason, current, wanted)


class Detour(Frozen):
    """A field restored through values on the way (`steps`, the last one the restored)."""

    _fields = ("record_id", "field", "steps")
    __slots__ = _fields
    record_id: str
    field: str
    steps: tuple[JsonValue, ...]

    def __init__(self, record_id: str, field: str, steps: tuple[JsonValue, ...]) -> None:
        self._init(record_id, field, steps)


class UndoResult(Frozen):
    """What an undo did, or would do (`cache.writes` previews one and copies it with
    `replace`)."""

    _fields = ("batch_id", "dropped", "restored", "detours", "unrestored")
    __slots__ = _fields
    batch_id: str | None
    """The batch of the inverse writes (to undo the undo); None when none were queued."""
    dropped: tuple[str, ...]
    """Records whose unsent writes were dropped."""
    restored: tuple[str, ...]
    """Records getting inverse writes."""
    detours: tuple[Detour, ...]
    unrestored: tuple[Unrestored, ...]

    def __init__(
        self,
        batch_id: str | None = None,
        dropped: tuple[str, ...] = (),
        restored: tuple[str, ...] = (),
        detours: tuple[Detour, ...] = (),
        unrestored: tuple[Unrestored, ...] = (),
    ) -> None:
        self._init(batch_id, dropped, restored, detours, unrestored)

    @property
    def empty(self) -> bool:
        """Whether the undo changes nothing at all."""
        return not (self.dropped or self.restored)


def undo(
    conn: sqlite3.Connection, batch_id: str, route: Route, now: float, inverse: str
) -> UndoResult:
    """Undo the batch inside the caller's write transaction; see the module docstring."""
    listed = outbox_life.batch(conn, batch_id)
    before: dict[tuple[Resource, str, str], JsonValue] = {}
    for entry in listed:
        for name, value in entry.base.items():
            before.setdefault((entry.resource, entry.target_id, name), value)
    dropped: list[str] = []
    for entry in reversed(listed):
        fresh = _fresh(conn, entry.id)
        if fresh is not None and outbox_life.surely_unapplied(conn, fresh):
            outbox.discard(conn, fresh.id)
            dropped.append(fresh.target_id)
    groups: dict[tuple[Resource, str], list[OutboxEntry]] = {}
    for entry in listed:
        fresh = _fresh(conn, entry.id)
        if fresh is not None:
            groups.setdefault((fresh.resource, fresh.target_id), []).append(fresh)
    undoing = _Undoing(conn, route, now, inverse, before)
    for (resource, target), group in groups.items():
        undoing.record(resource, target, group)
    queued = bool(undoing.restored)
    return UndoResult(
        inverse if queued else None,
        tuple(dict.fromkeys(dropped)),
        tuple(undoing.restored),
        tuple(undoing.detours),
        tuple(undoing.unrestored),
    )


def _fresh(conn: sqlite3.Connection, entry_id: int) -> OutboxEntry | None:
    """The entry as it stands now; None once gone (a dropped create takes its dependents)."""
    try:
        return outbox.get(conn, entry_id)
    except OutboxStateError:
        return None


class _Undoing:
    def __init__(
        self,
        conn: sqlite3.Connection,
        route: Route,
        now: float,
        inverse: str,
        before: dict[tuple[Resource, str, str], JsonValue],
    ) -> None:
        self.conn = conn
        self.route = route
        self.now = now
        self.inverse = inverse
        self.before = before
        self.view = overlay.compute(self.conn)
        self.restored: list[str] = []
        self.detours: list[Detour] = []
        self.unrestored: list[Unrestored] = []

    def record(self, resource: Resource, target: str, group: list[OutboxEntry]) -> None:
        """Invert what the batch's remaining (sent, or maybe sent) writes did to one record."""
        current = overlay.effective_record(self.conn, self.view, resource, target)
        if any(entry.operation is Operation.DELETE for entry in group):
            self.unrestored.append(Unrestored(target, None, DELETED))
            return
        if current is None or outbox.is_local(target):
            self.unrestored.append(Unrestored(target, None, GONE))
            return
        parent = outbox.parent_of(resource, current)
        if any(entry.operation is Operation.CREATE for entry in group):
            outbox.enqueue_delete(self.conn, resource, target, parent, self.inverse, self.now)
            self.restored.append(target)
            return
        ours: dict[str, JsonValue] = {}
        for entry in group:
            ours.update(entry.changes)
        paths: dict[str, Sequence[JsonValue]] = {}
        for name, mine in ours.items():
            wanted = self.before.get((resource, target, name))
            shown = current.get(name)
            if outbox.same(shown, wanted):
                continue
            if not outbox.same(shown, mine):
                self.unrestored.append(Unrestored(target, name, CHANGED, shown, wanted))
                continue
            steps = self.route(resource, name, shown, wanted)
            if not steps:
                self.unrestored.append(Unrestored(target, name, NO_ROUTE, shown, wanted))
                continue
            paths[name] = steps
            if len(steps) > 1:
                self.detours.append(Detour(target, name, tuple(steps)))
        if paths:
            self._write(resource, target, dict(current), parent, paths)

    def _write(
        self,
        resource: Resource,
        target: str,
        shown: dict[str, JsonValue],
        parent: str | None,
        paths: dict[str, Sequence[JsonValue]],
    ) -> None:
        """One write per step, in order, each based on the one before."""
        for step in range(max(len(steps) for steps in paths.values())):
            changes = {name: steps[step] for name, steps in paths.items() if step < len(steps)}
            outbox.enqueue_update(
                self.conn,
                resource,
                target,
                shown,
                changes,
                parent,
                self.inverse,
                self.now,
                merge=False,
            )
            shown.update(changes)
        self.restored.append(target)
