"""Per-field conflicts between a pending edit and what the server now holds (principle 2).

A field conflicts when the server's value moved away from the entry's base to something other
than the user's value and other than a value our own confirmed writes put there (those are
never "theirs": `not_ours`); fields nobody else touched merge silently: `park` splits them off
to be sent at once, and only the conflicting ones wait. Settling a conflict edits the entry:
`MINE` rebases the field on the server's value (so the resend is not flagged again), `THEIRS`
drops the field, and a later write of it, typed over the dropped value, goes back to the
dropped one's base: it was typed without seeing theirs, so it is checked against theirs in
turn. Once every conflict of an entry is settled it is pending again, or gone if no field is
left to send.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from cache import outbox, outbox_life
from cache.errors import OutboxStateError
from cache.models import (
    Conflict,
    EntryState,
    FieldConflict,
    JsonValue,
    Operation,
    OutboxEntry,
    Resolution,
)
from cache.resources import dumps

_COLUMNS = "id, entry_id, field, base, mine, theirs, created_at, resolution, resolved_at"


def detect(entry: OutboxEntry, server_record: Mapping[str, Any]) -> list[FieldConflict]:
    """The fields of an update whose server value moved since the entry's base was taken."""
    if entry.operation is not Operation.UPDATE:
        return []
    found: list[FieldConflict] = []
    for name, mine in entry.changes.items():
        base = entry.base.get(name)
        theirs: JsonValue = server_record.get(name)
        if not outbox.same(theirs, base) and not outbox.same(theirs, mine):
            found.append(FieldConflict(name, base, mine, theirs))
    return found


def not_ours(
    found: Sequence[FieldConflict], ours: Mapping[str, Sequence[JsonValue]]
) -> list[FieldConflict]:
    """The conflicts whose server value is not one our own writes set (`ours`, by field, from
    `outbox_life.confirmed_since`): the server holding our own value is no one else's change."""
    return [
        conflict
        for conflict in found
        if not any(outbox.same(conflict.theirs, value) for value in ours.get(conflict.field, ()))
    ]


def _loads(text: str) -> JsonValue:
    value: JsonValue = json.loads(text)
    return value


def _conflict(row: Any) -> Conflict:
    return Conflict(
        id=int(row[0]),
        entry_id=int(row[1]),
        field=str(row[2]),
        base=_loads(row[3]),
        mine=_loads(row[4]),
        theirs=_loads(row[5]),
        created_at=float(row[6]),
        resolution=None if row[7] is None else Resolution(row[7]),
        resolved_at=None if row[8] is None else float(row[8]),
    )


def record(
    conn: sqlite3.Connection, entry_id: int, found: Sequence[FieldConflict], now: float
) -> list[Conflict]:
    outbox_life.transition(
        conn,
        entry_id,
        (EntryState.PENDING, EntryState.SENDING, EntryState.CONFLICT),
        EntryState.CONFLICT,
        now,
        error="conflicting changes on the server",
    )
    ids = [
        conn.execute(
            "INSERT INTO conflicts (entry_id, field, base, mine, theirs, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (entry_id, c.field, dumps(c.base), dumps(c.mine), dumps(c.theirs), now),
        ).lastrowid
        for c in found
    ]
    return [get(conn, int(conflict_id or 0)) for conflict_id in ids]


def park(
    conn: sqlite3.Connection, entry_id: int, found: Sequence[FieldConflict], now: float
) -> OutboxEntry | None:
    """Park only the conflicting fields of an update; return the entry to send now: a new one
    (in the original's state, pending or sending) holding the fields nobody else touched, the
    entry itself when nothing conflicts, or None when every field does.

    The original entry keeps the conflicting fields and its place in the record's queue, so
    the user's later edits still replay after it; the conflict rows point at it as before.
    """
    entry = outbox.get(conn, entry_id)
    clashing = {conflict.field for conflict in found}
    clean = [name for name in entry.changes if name not in clashing]
    if not clashing:
        return entry
    if entry.operation is not Operation.UPDATE or not clean:
        record(conn, entry_id, found, now)
        return None
    going = outbox_life.split_off(conn, entry, clean, now)
    record(conn, entry_id, found, now)
    return going


def get(conn: sqlite3.Connection, conflict_id: int) -> Conflict:
    row = conn.execute(f"SELECT {_COLUMNS} FROM conflicts WHERE id = ?", (conflict_id,)).fetchone()
    if row is None:
        raise OutboxStateError(f"no conflict {conflict_id}")
    return _conflict(row)


def listing(
    conn: sqlite3.Connection, entry_id: int | None, unresolved_only: bool
) -> list[Conflict]:
    sql = f"SELECT {_COLUMNS} FROM conflicts WHERE 1"
    params: list[object] = []
    if entry_id is not None:
        sql += " AND entry_id = ?"
        params.append(entry_id)
    if unresolved_only:
        sql += " AND resolution IS NULL"
    return [_conflict(row) for row in conn.execute(sql + " ORDER BY id", params)]


def resolve(
    conn: sqlite3.Connection, conflict_id: int, resolution: Resolution, now: float
) -> OutboxEntry | None:
    """Returns the entry as it now stands, or None when nothing is left to send."""
    conflict = get(conn, conflict_id)
    if conflict.resolution is not None:
        raise OutboxStateError(f"conflict {conflict_id} is already resolved")
    entry = outbox.get(conn, conflict.entry_id)
    base, changes = dict(entry.base), dict(entry.changes)
    if resolution is Resolution.MINE:
        base[conflict.field] = conflict.theirs
    else:
        moves = {conflict.field: (conflict.mine, base.pop(conflict.field, None))}
        changes.pop(conflict.field, None)
        outbox.rebase_later(conn, entry, moves)
    conn.execute(
        "UPDATE outbox SET base = ?, changes = ?, updated_at = ? WHERE id = ?",
        (dumps(base), dumps(changes), now, entry.id),
    )
    conn.execute(
        "UPDATE conflicts SET resolution = ?, resolved_at = ? WHERE id = ?",
        (resolution.value, now, conflict_id),
    )
    if listing(conn, entry.id, unresolved_only=True):
        return outbox.get(conn, entry.id)
    if not changes and entry.operation is Operation.UPDATE:
        conn.execute("DELETE FROM outbox WHERE id = ?", (entry.id,))
        return None
    return outbox_life.transition(conn, entry.id, (EntryState.CONFLICT,), EntryState.PENDING, now)
