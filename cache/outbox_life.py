"""An outbox entry's life once queued: its state transitions, the order the push takes
entries in (`sendable`), a create's server id put in place of its temporary one
(`map_created`), an update split when only some of its fields conflict (`split_off`), and the
done entries forgotten after a while (`prune_done`). Queueing and coalescing are in
cache.outbox.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from cache import drafts
from cache.errors import OutboxStateError
from cache.models import EntryState, JsonObject, JsonValue, Operation, OutboxEntry, Resource
from cache.outbox import (
    ACTIVE_SQL,
    COLUMNS,
    QUEUE_ORDER,
    active,
    get,
    is_local,
    random_hex,
    row_entry,
    save,
)
from cache.resources import dumps, loads_object


def transition(
    conn: sqlite3.Connection,
    entry_id: int,
    allowed: Iterable[EntryState],
    state: EntryState,
    now: float,
    *,
    error: str | None = None,
    attempt: bool = False,
    not_applied: bool = False,
) -> OutboxEntry:
    """An attempt leaves its outcome open until told otherwise: it clears `not_applied`, which
    only a failure known to have changed nothing sets again."""
    entry = get(conn, entry_id)
    if entry.state not in tuple(allowed):
        raise OutboxStateError(
            f"entry {entry_id} is {entry.state.value}; cannot become {state.value}"
        )
    conn.execute(
        "UPDATE outbox SET state = ?, last_error = ?, updated_at = ?, "
        "attempts = attempts + ?, sent_at = CASE WHEN ? THEN ? ELSE sent_at END, "
        "not_applied = CASE WHEN ? THEN 0 WHEN ? THEN 1 ELSE not_applied END WHERE id = ?",
        (state.value, error, now, int(attempt), attempt, now, attempt, not_applied, entry_id),
    )
    return get(conn, entry_id)


def mark_not_applied(conn: sqlite3.Connection, entry_ids: Iterable[int]) -> None:
    """Pending entries whose last attempt was looked for on the server and not found."""
    conn.execute(
        "UPDATE outbox SET not_applied = 1 WHERE state = 'pending' "
        "AND id IN (SELECT value FROM json_each(?))",
        (dumps(list(entry_ids)),),
    )


def surely_unapplied(conn: sqlite3.Connection, entry: OutboxEntry) -> bool:
    """Whether the server certainly never applied the entry: never sent, refused, parked as a
    conflict before sending, or its last attempt known to have changed nothing."""
    if entry.state in (EntryState.FAILED, EntryState.CONFLICT):
        return True
    if entry.state is not EntryState.PENDING:
        return False
    if entry.attempts == 0:
        return True
    row = conn.execute("SELECT not_applied FROM outbox WHERE id = ?", (entry.id,)).fetchone()
    return row is not None and bool(row[0])


def confirmed_since(conn: sqlite3.Connection, entry: OutboxEntry) -> dict[str, list[JsonValue]]:
    """Values our own writes to the entry's record set on the server, confirmed since the
    entry was made (so not part of its base), by field: the server holding one of them is
    our doing, never someone else's change."""
    rows = conn.execute(
        "SELECT changes FROM outbox WHERE resource = ? AND (record_id = ? OR server_id = ?) "
        "AND state = 'done' AND operation != 'delete' AND id != ? AND updated_at >= ? "
        "ORDER BY " + QUEUE_ORDER,
        (entry.resource.value, entry.target_id, entry.target_id, entry.id, entry.created_at),
    )
    found: dict[str, list[JsonValue]] = {}
    for (changes,) in rows:
        for name, value in loads_object(str(changes)).items():
            found.setdefault(name, []).append(value)
    return found


def doubtful(conn: sqlite3.Connection) -> set[int]:
    """Pending creates tried before whose outcome nobody knows: to look for before a resend."""
    rows = conn.execute(
        "SELECT id FROM outbox WHERE state = 'pending' AND operation = 'create' "
        "AND attempts > 0 AND not_applied = 0"
    )
    return {int(row[0]) for row in rows}


def split_off(
    conn: sqlite3.Connection, entry: OutboxEntry, names: Iterable[str], now: float
) -> OutboxEntry:
    """Move the fields `names` of an update into a new entry of the same record, batch and
    state, and return it; `entry` keeps the rest. The new entry gets its own id (after any
    later entry of the record) and a fresh idempotency key: it is meant to be sent at once."""
    moved = [name for name in names if name in entry.changes]
    base = {name: entry.base[name] for name in moved if name in entry.base}
    changes = {name: entry.changes[name] for name in moved}
    kept_base = {name: value for name, value in entry.base.items() if name not in base}
    kept = {name: value for name, value in entry.changes.items() if name not in changes}
    save(conn, entry, kept_base, kept, now)
    cursor = conn.execute(
        "INSERT INTO outbox (resource, record_id, server_id, parent_id, operation, base, "
        "changes, idempotency_key, attempts, state, batch_id, created_at, updated_at, sent_at, "
        "place) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            entry.resource.value,
            entry.record_id,
            entry.server_id,
            entry.parent_id,
            entry.operation.value,
            dumps(base),
            dumps(changes),
            random_hex(),
            entry.attempts,
            entry.state.value,
            entry.batch_id,
            entry.created_at,
            now,
            entry.sent_at,
            entry.place or entry.id,
        ),
    )
    return get(conn, int(cursor.lastrowid or 0))


def map_created(conn: sqlite3.Connection, entry: OutboxEntry, server_id: str) -> None:
    """Record the server id of an offline-created record and substitute it everywhere."""
    local_id = entry.record_id
    conn.execute(
        "INSERT OR REPLACE INTO id_map (local_id, server_id, resource) VALUES (?, ?, ?)",
        (local_id, server_id, entry.resource.value),
    )
    conn.execute(
        "UPDATE outbox SET server_id = ? WHERE resource = ? AND record_id = ?",
        (server_id, entry.resource.value, local_id),
    )
    conn.execute("UPDATE outbox SET parent_id = ? WHERE parent_id = ?", (server_id, local_id))
    drafts.follow(conn, local_id, server_id)
    # Only entries whose JSON mentions the id can hold it: decoding every active entry made
    # each create's bookkeeping grow with the queue.
    mentioning = conn.execute(
        f"SELECT {COLUMNS} FROM outbox WHERE state IN {ACTIVE_SQL} "
        "AND (instr(base, ?) > 0 OR instr(changes, ?) > 0) ORDER BY " + QUEUE_ORDER,
        (local_id, local_id),
    )
    for other in [row_entry(row) for row in mentioning]:
        base = _substitute(other.base, local_id, server_id)
        changes = _substitute(other.changes, local_id, server_id)
        if base != other.base or changes != other.changes:
            conn.execute(
                "UPDATE outbox SET base = ?, changes = ? WHERE id = ?",
                (dumps(base), dumps(changes), other.id),
            )


def _substitute(values: JsonObject, local_id: str, server_id: str) -> JsonObject:
    return {name: server_id if value == local_id else value for name, value in values.items()}


def _ready(entry: OutboxEntry) -> bool:
    if entry.operation is not Operation.CREATE and entry.server_id is None:
        return False
    if is_local(entry.parent_id):
        return False
    return not any(is_local(value) for value in entry.changes.values())


def sendable(conn: sqlite3.Connection) -> list[OutboxEntry]:
    """Pending entries that may be sent now, in queue order.

    A write held as a conflict holds back the later writes of the record that set one of its
    fields: sent first, such a newer value was then overwritten by the older one once the
    user kept theirs ("keep mine" on the first edit of a title put it back over the second)."""
    busy: set[tuple[Resource, str]] = set()
    held: dict[tuple[Resource, str], set[str]] = {}
    ready: list[OutboxEntry] = []
    for entry in active(conn):
        key = (entry.resource, entry.target_id)
        waiting = key in busy or not held.get(key, set()).isdisjoint(entry.changes)
        if entry.state is EntryState.PENDING and not waiting and _ready(entry):
            ready.append(entry)
        if entry.state in (EntryState.PENDING, EntryState.SENDING):
            busy.add(key)
        elif entry.state is EntryState.CONFLICT:
            held.setdefault(key, set()).update(entry.changes)
    return ready


def batch(conn: sqlite3.Connection, batch_id: str) -> list[OutboxEntry]:
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM outbox WHERE batch_id = ? ORDER BY " + QUEUE_ORDER, (batch_id,)
    )
    return [row_entry(row) for row in rows]


def prune_done(conn: sqlite3.Connection, before: float) -> int:
    return conn.execute(
        "DELETE FROM outbox WHERE state = 'done' AND updated_at < ?", (before,)
    ).rowcount
