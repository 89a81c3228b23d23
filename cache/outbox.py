"""The outbox: a durable queue of local writes, with coalescing and temporary ids.

Coalescing keeps the queue short (each entry is a request against a rate limit) without
changing what the user sees. A write folds into the record's latest entry only when that
entry is still *open*: pending and never attempted, because a sent body must keep matching
its idempotency key.

- update after an open update of the same batch: fields merge, each field keeping its
  ORIGINAL base; a field edited back to its base drops out, an entry left empty vanishes.
- update after an open create: folds into the create.
- delete after an open create: the create and everything waiting on it vanish.
- delete after updates: every update not in flight vanishes into the delete, whose base
  keeps their original values.

A write's base is what the screen showed beneath it: the server row plus the writes still to
be applied, never a failed or dropped one (`cache.overlay`). When an earlier write of the
record fails, is dropped, retried or settled, the first later write of each field it set is
rebased to match (`rebase_later`), so no later write is checked against a value that will
never be the server's.

Records created offline get `local_<uuid>` ids. Writes that refer to one (an edit of it, a
comment on it) wait until its create is done; `map_created` then substitutes the server id.
Entries of one record are sent in order: a pending entry waits while an earlier one of the
same record is pending or sending, or holds one of its fields in a conflict.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from cache import drafts
from cache.errors import OutboxStateError
from cache.models import (
    ACTIVE_STATES,
    EntryState,
    JsonObject,
    JsonValue,
    Operation,
    OutboxEntry,
    Resource,
)
from cache.resources import dumps, loads_object

LOCAL_PREFIX = "local_"

_COLUMNS = (
    "id, resource, record_id, server_id, parent_id, operation, base, changes, idempotency_key, "
    "attempts, state, last_error, batch_id, created_at, updated_at, sent_at, place"
)
QUEUE_ORDER = "COALESCE(place, id), id"
"""An entry's place in the queue: its own id, or, for the part split off an entry, the place
of the entry it came from (see `split_off`), so a later write of the same record still comes
after it: in what is shown, in what may be sent, and in what a withdrawn write rebases."""
ACTIVE_SQL = "(" + ", ".join(f"'{state.value}'" for state in ACTIVE_STATES) + ")"


def new_local_id() -> str:
    return LOCAL_PREFIX + uuid.uuid4().hex


def is_local(value: object) -> bool:
    return isinstance(value, str) and value.startswith(LOCAL_PREFIX)


def same(a: JsonValue, b: JsonValue) -> bool:
    """JSON equality that keeps 1, 1.0 and true apart."""
    return a is b or dumps(a) == dumps(b)


def _entry(row: Any) -> OutboxEntry:
    return OutboxEntry(
        id=int(row[0]),
        resource=Resource(row[1]),
        record_id=str(row[2]),
        server_id=None if row[3] is None else str(row[3]),
        parent_id=None if row[4] is None else str(row[4]),
        operation=Operation(row[5]),
        base=loads_object(str(row[6])),
        changes=loads_object(str(row[7])),
        idempotency_key=str(row[8]),
        attempts=int(row[9]),
        state=EntryState(row[10]),
        last_error=None if row[11] is None else str(row[11]),
        batch_id=None if row[12] is None else str(row[12]),
        created_at=float(row[13]),
        updated_at=float(row[14]),
        sent_at=None if row[15] is None else float(row[15]),
        place=None if row[16] is None else int(row[16]),
    )


def get(conn: sqlite3.Connection, entry_id: int) -> OutboxEntry:
    row = conn.execute(f"SELECT {_COLUMNS} FROM outbox WHERE id = ?", (entry_id,)).fetchone()
    if row is None:
        raise OutboxStateError(f"no outbox entry {entry_id}")
    return _entry(row)


def entries(
    conn: sqlite3.Connection, states: Iterable[EntryState] | None = None
) -> list[OutboxEntry]:
    if states is None:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM outbox ORDER BY " + QUEUE_ORDER)
    else:
        wanted = [state.value for state in states]
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM outbox WHERE state IN (SELECT value FROM json_each(?)) "
            "ORDER BY " + QUEUE_ORDER,
            (dumps(wanted),),
        )
    return [_entry(row) for row in rows]


def active(conn: sqlite3.Connection) -> list[OutboxEntry]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM outbox WHERE state IN {ACTIVE_SQL} ORDER BY {QUEUE_ORDER}"
    )
    return [_entry(row) for row in rows]


def chain(conn: sqlite3.Connection, resource: Resource, target: str) -> list[OutboxEntry]:
    """Active entries writing to one record, oldest first."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM outbox WHERE resource = ? AND state IN {ACTIVE_SQL} "
        "AND (record_id = ? OR server_id = ?) ORDER BY " + QUEUE_ORDER,
        (resource.value, target, target),
    )
    return [_entry(row) for row in rows]


def resolve_id(conn: sqlite3.Connection, record_id: str) -> str:
    if not is_local(record_id):
        return record_id
    row = conn.execute("SELECT server_id FROM id_map WHERE local_id = ?", (record_id,)).fetchone()
    return record_id if row is None else str(row[0])


def parent_of(resource: Resource, record: Mapping[str, JsonValue]) -> str | None:
    """The issue a comment belongs to (its writes wait for that issue's create)."""
    value = record.get("issue_id") if resource is Resource.COMMENTS else None
    return value if isinstance(value, str) else None


def _is_open(entry: OutboxEntry) -> bool:
    return entry.state is EntryState.PENDING and entry.attempts == 0


def _insert(
    conn: sqlite3.Connection,
    *,
    resource: Resource,
    record_id: str,
    parent_id: str | None,
    operation: Operation,
    base: JsonObject,
    changes: JsonObject,
    batch_id: str | None,
    now: float,
) -> OutboxEntry:
    server_id = None if is_local(record_id) else record_id
    cursor = conn.execute(
        "INSERT INTO outbox (resource, record_id, server_id, parent_id, operation, base, "
        "changes, idempotency_key, attempts, state, batch_id, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 'pending', ?, ?, ?)",
        (
            resource.value,
            record_id,
            server_id,
            parent_id,
            operation.value,
            dumps(base),
            dumps(changes),
            uuid.uuid4().hex,
            batch_id,
            now,
            now,
        ),
    )
    return get(conn, int(cursor.lastrowid or 0))


def _save(
    conn: sqlite3.Connection, entry: OutboxEntry, base: JsonObject, changes: JsonObject, now: float
) -> OutboxEntry:
    conn.execute(
        "UPDATE outbox SET base = ?, changes = ?, updated_at = ? WHERE id = ?",
        (dumps(base), dumps(changes), now, entry.id),
    )
    return get(conn, entry.id)


def _remove(conn: sqlite3.Connection, ids: Iterable[int]) -> None:
    conn.execute(
        "DELETE FROM outbox WHERE id IN (SELECT value FROM json_each(?))", (dumps(list(ids)),)
    )


def enqueue_create(
    conn: sqlite3.Connection,
    resource: Resource,
    fields: JsonObject,
    parent_id: str | None,
    batch_id: str | None,
    now: float,
) -> OutboxEntry:
    return _insert(
        conn,
        resource=resource,
        record_id=new_local_id(),
        parent_id=parent_id,
        operation=Operation.CREATE,
        base={},
        changes=dict(fields),
        batch_id=batch_id,
        now=now,
    )


Beneath = Callable[[Sequence[OutboxEntry]], Mapping[str, JsonValue]]
"""The record as the screen would show it with only these (earlier) entries laid over it."""


def enqueue_update(
    conn: sqlite3.Connection,
    resource: Resource,
    target: str,
    current: Mapping[str, JsonValue],
    changes: Mapping[str, JsonValue],
    parent_id: str | None,
    batch_id: str | None,
    now: float,
    *,
    beneath: Beneath | None = None,
    merge: bool = True,
) -> OutboxEntry | None:
    """`current` is the record as the screen shows it before this edit: it supplies the base.
    Returns the entry now holding the edit, or None when nothing is left to send.

    A field edited back to its base drops out only while that base is still what shows
    beneath the entry (`beneath`, when given): if a pull brought a colleague's value in the
    meantime, the edit stays, to be checked against it like any other. `merge` False queues
    a write of its own even after an open one of the same batch: one step of a path that
    must reach the server as separate moves."""
    history = chain(conn, resource, target)
    latest = history[-1] if history else None
    if latest is not None and _is_open(latest) and merge:
        if latest.operation is Operation.CREATE:
            return _save(conn, latest, latest.base, {**latest.changes, **changes}, now)
        if latest.operation is Operation.UPDATE and latest.batch_id == batch_id:
            base, merged = dict(latest.base), dict(latest.changes)
            under: Mapping[str, JsonValue] | None = None
            for name, value in changes.items():
                if name not in base:
                    if same(current.get(name), value):
                        continue
                    base[name] = current.get(name)
                merged[name] = value
                if not same(merged[name], base[name]):
                    continue
                if beneath is not None and under is None:
                    under = beneath(history[:-1])
                if under is None or same(under.get(name), base[name]):
                    del merged[name], base[name]
            if not merged:
                _remove(conn, [latest.id])
                return None
            return _save(conn, latest, base, merged, now)
    wanted = {name: value for name, value in changes.items() if not same(current.get(name), value)}
    if not wanted:
        return None
    return _insert(
        conn,
        resource=resource,
        record_id=target,
        parent_id=parent_id,
        operation=Operation.UPDATE,
        base={name: current.get(name) for name in wanted},
        changes=wanted,
        batch_id=batch_id,
        now=now,
    )


def enqueue_delete(
    conn: sqlite3.Connection,
    resource: Resource,
    target: str,
    parent_id: str | None,
    batch_id: str | None,
    now: float,
) -> OutboxEntry | None:
    """None when the record never reached the server and so simply vanishes."""
    history = chain(conn, resource, target)
    if history and history[0].operation is Operation.CREATE and _is_open(history[0]):
        drop_local(conn, history[0].record_id)
        return None
    folded = [
        e for e in history if e.operation is Operation.UPDATE and e.state is not EntryState.SENDING
    ]
    base: JsonObject = {}
    for entry in folded:
        for name, value in entry.base.items():
            base.setdefault(name, value)
    _remove(conn, [entry.id for entry in folded])
    return _insert(
        conn,
        resource=resource,
        record_id=target,
        parent_id=parent_id,
        operation=Operation.DELETE,
        base=base,
        changes={},
        batch_id=batch_id,
        now=now,
    )


def drop_local(conn: sqlite3.Connection, local_id: str) -> None:
    """Forget a record created offline and every unsent write that depends on it."""
    rows = conn.execute(
        "SELECT id, record_id FROM outbox WHERE record_id = ? OR parent_id = ?",
        (local_id, local_id),
    ).fetchall()
    _remove(conn, [row[0] for row in rows])
    for _, dependent in rows:
        if dependent != local_id and is_local(dependent):
            drop_local(conn, dependent)
    _unlink(conn, local_id)


def _unlink(conn: sqlite3.Connection, local_id: str) -> None:
    """Drop fields naming a forgotten temporary id (an issue's `project_id`, say): such a
    write would otherwise wait for a server id that never comes. An edit left with nothing
    to change goes; a create goes out without the link."""
    rows = conn.execute(
        "SELECT id, operation, base, changes FROM outbox WHERE state = ? AND EXISTS "
        "(SELECT 1 FROM json_each(outbox.changes) WHERE value = ?)",
        (EntryState.PENDING.value, local_id),
    ).fetchall()
    for entry_id, operation, base, changes in rows:
        kept = {name: value for name, value in loads_object(changes).items() if value != local_id}
        if not kept and operation != Operation.CREATE.value:
            _remove(conn, [entry_id])
            continue
        based = {name: value for name, value in loads_object(base).items() if name in kept}
        conn.execute(
            "UPDATE outbox SET base = ?, changes = ? WHERE id = ?",
            (dumps(based), dumps(kept), entry_id),
        )


def discard(conn: sqlite3.Connection, entry_id: int) -> None:
    """Drop an entry that is not in flight. Later entries of the same record were based on
    its result, so their bases for the fields it changed fall back to its base; a failed
    entry's were when it failed, and later writes are based on what was shown since (a
    value it shares with them is not its doing)."""
    entry = get(conn, entry_id)
    if entry.state in (EntryState.SENDING, EntryState.DONE):
        raise OutboxStateError(f"entry {entry_id} is {entry.state.value} and cannot be discarded")
    if entry.operation is Operation.CREATE:
        drop_local(conn, entry.record_id)
        return
    if entry.state is not EntryState.FAILED:
        withdraw(conn, entry)
    _remove(conn, [entry_id])


def withdraw(conn: sqlite3.Connection, entry: OutboxEntry) -> None:
    """The entry's values will not be applied (it failed, or is being dropped): later writes
    based on them are rebased on what was beneath it."""
    moves = {name: (value, entry.base.get(name)) for name, value in entry.changes.items()}
    if entry.operation is Operation.UPDATE:
        rebase_later(conn, entry, moves)


def rebase_later(
    conn: sqlite3.Connection,
    entry: OutboxEntry,
    moves: Mapping[str, tuple[JsonValue, JsonValue]],
) -> None:
    """For each field of `moves` (field: (old, new)), the first later write of the record
    that sets it was based on this entry's doing: its base goes from `old` to `new`. Writes
    after that one were based on it, not on this entry, and keep their bases; a base that is
    not `old` was taken some other way and is left alone."""
    waiting = dict(moves)
    for later in chain(conn, entry.resource, entry.target_id):
        if not waiting:
            return
        if later.queue_order <= entry.queue_order:
            continue
        touched = [name for name in waiting if name in later.base or name in later.changes]
        rebased = dict(later.base)
        for name in touched:
            old, new = waiting.pop(name)
            if name in rebased and same(rebased[name], old):
                rebased[name] = new
        if rebased != later.base:
            conn.execute("UPDATE outbox SET base = ? WHERE id = ?", (dumps(rebased), later.id))


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
    _save(conn, entry, kept_base, kept, now)
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
            uuid.uuid4().hex,
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
        f"SELECT {_COLUMNS} FROM outbox WHERE state IN {ACTIVE_SQL} "
        "AND (instr(base, ?) > 0 OR instr(changes, ?) > 0) ORDER BY " + QUEUE_ORDER,
        (local_id, local_id),
    )
    for other in [_entry(row) for row in mentioning]:
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
        f"SELECT {_COLUMNS} FROM outbox WHERE batch_id = ? ORDER BY " + QUEUE_ORDER, (batch_id,)
    )
    return [_entry(row) for row in rows]


def prune_done(conn: sqlite3.Connection, before: float) -> int:
    return conn.execute(
        "DELETE FROM outbox WHERE state = 'done' AND updated_at < ?", (before,)
    ).rowcount
