"""The outbox: a durable queue of local writes, with coalescing and temporary ids.

Coalescing keeps the queue short (each entry is a request against a rate limit) without
changing what the user sees. A write folds into the record's latest entry only when that
entry is still *open*: pending and never attempted, because a sent body must keep matching
its idempotency key.

- update after an open update of the same batch: fields merge, each field keeping its
  ORIGINAL base; a field edited back to its base drops out, an entry left empty vanishes.
  Not a status move after one the entry holds, unless the workflow allows the two as one
  (`_one_move`): the server refuses a move it does not allow.
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
comment on it) wait until its create is done; `cache.outbox_life.map_created` then
substitutes the server id.
Entries of one record are sent in order: a pending entry waits while an earlier one of the
same record is pending or sending, or holds one of its fields in a conflict.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

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
from cache.resources import dumps, json_list, loads_object
from issuefields import can_move

LOCAL_PREFIX = "local_"

COLUMNS = (
    "id, resource, record_id, server_id, parent_id, operation, base, changes, idempotency_key, "
    "attempts, state, last_error, batch_id, created_at, updated_at, sent_at, place"
)
QUEUE_ORDER = "COALESCE(place, id), id"
"""An entry's place in the queue: its own id, or, for the part split off an entry, the place
of the entry it came from (see `split_off`), so a later write of the same record still comes
after it: in what is shown, in what may be sent, and in what a withdrawn write rebases."""
ACTIVE_SQL = "(" + ", ".join(f"'{state.value}'" for state in ACTIVE_STATES) + ")"


def new_local_id() -> str:
    return LOCAL_PREFIX + random_hex()


def random_hex() -> str:
    """A fresh uuid4, as 32 hex digits. uuid is imported here: it brings platform with it,
    and every read imports this module, which makes no id (docs/architecture.md#start-up)."""
    import uuid

    return uuid.uuid4().hex


def is_local(value: object) -> bool:
    return isinstance(value, str) and value.startswith(LOCAL_PREFIX)


def same(a: JsonValue, b: JsonValue) -> bool:
    """JSON equality that keeps 1, 1.0 and true apart."""
    return a is b or dumps(a) == dumps(b)


def row_entry(row: Any) -> OutboxEntry:
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
    row = conn.execute(f"SELECT {COLUMNS} FROM outbox WHERE id = ?", (entry_id,)).fetchone()
    if row is None:
        raise OutboxStateError(f"no outbox entry {entry_id}")
    return row_entry(row)


def entries(
    conn: sqlite3.Connection, states: Iterable[EntryState] | None = None
) -> list[OutboxEntry]:
    if states is None:
        rows = conn.execute(f"SELECT {COLUMNS} FROM outbox ORDER BY " + QUEUE_ORDER)
    else:
        wanted = [state.value for state in states]
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM outbox WHERE state IN (SELECT value FROM json_each(?)) "
            "ORDER BY " + QUEUE_ORDER,
            (json_list(wanted),),
        )
    return [row_entry(row) for row in rows]


def active(conn: sqlite3.Connection) -> list[OutboxEntry]:
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM outbox WHERE state IN {ACTIVE_SQL} ORDER BY {QUEUE_ORDER}"
    )
    return [row_entry(row) for row in rows]


def chain(conn: sqlite3.Connection, resource: Resource, target: str) -> list[OutboxEntry]:
    """Active entries writing to one record, oldest first."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM outbox WHERE resource = ? AND state IN {ACTIVE_SQL} "
        "AND (record_id = ? OR server_id = ?) ORDER BY " + QUEUE_ORDER,
        (resource.value, target, target),
    )
    return [row_entry(row) for row in rows]


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
            random_hex(),
            batch_id,
            now,
            now,
        ),
    )
    return get(conn, int(cursor.lastrowid or 0))


def save(
    conn: sqlite3.Connection, entry: OutboxEntry, base: JsonObject, changes: JsonObject, now: float
) -> OutboxEntry:
    conn.execute(
        "UPDATE outbox SET base = ?, changes = ?, updated_at = ? WHERE id = ?",
        (dumps(base), dumps(changes), now, entry.id),
    )
    return get(conn, entry.id)


def _remove(conn: sqlite3.Connection, ids: Iterable[int]) -> None:
    conn.execute(
        "DELETE FROM outbox WHERE id IN (SELECT value FROM json_each(?))", (json_list(ids),)
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
    meantime, the edit stays, to be checked against it like any other. A field the entry set
    to what shows beneath it is based on that value once edited again: its base, the value
    it was typed over, was an earlier write's that failed or was dropped since (and kept, see
    `rebase_later`), and checked against it, the server's value, our own, read as a
    colleague's. `merge` False queues a write of its own even after an open one of the same
    batch: one step of a path that must reach the server as separate moves."""
    history = chain(conn, resource, target)
    latest = history[-1] if history else None
    if latest is not None and _is_open(latest) and merge:
        if latest.operation is Operation.CREATE:
            return save(conn, latest, latest.base, {**latest.changes, **changes}, now)
        if (
            latest.operation is Operation.UPDATE
            and latest.batch_id == batch_id
            and _one_move(resource, latest, changes)
        ):
            base, merged = dict(latest.base), dict(latest.changes)
            under: Mapping[str, JsonValue] | None = None
            for name, value in changes.items():
                if name not in base:
                    if same(current.get(name), value):
                        continue
                    base[name] = current.get(name)
                elif beneath is not None and name in merged and not same(merged[name], value):
                    under = beneath(history[:-1]) if under is None else under
                    if same(under.get(name), merged[name]):
                        base[name] = under.get(name)
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
            return save(conn, latest, base, merged, now)
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


def _one_move(resource: Resource, latest: OutboxEntry, changes: Mapping[str, JsonValue]) -> bool:
    """Whether a status move may join an unsent one: the server checks each move against the
    workflow, so in review -> canceled -> todo, typed while offline, must reach it as two moves;
    joined, in review -> todo would be refused (and the user's two moves with it)."""
    if resource is not Resource.ISSUES or "status" not in changes or "status" not in latest.changes:
        return True
    was, going = latest.base.get("status"), changes["status"]
    return isinstance(was, str) and isinstance(going, str) and can_move(was, going)


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
    not `old` was taken some other way and is left alone. A later write that sets the field
    to `new` keeps `old`, the value it was typed over: rebased, it would read as changing
    nothing, and a conflict with a colleague's value would show the user's value as the base
    (seed 12008 of issue 15's model: low, then medium again, the low settled for theirs)."""
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
            back = name in later.changes and same(later.changes[name], new)
            if name in rebased and same(rebased[name], old) and not back:
                rebased[name] = new
        if rebased != later.base:
            conn.execute("UPDATE outbox SET base = ? WHERE id = ?", (dumps(rebased), later.id))
