"""The effective view: server rows with the active outbox entries laid over them.

Server rows and local intent live apart (docs/sync.md#server-copy-and-outbox): pulls write only the
server tables, edits only the outbox, and what the screen shows is computed from both, so a pull can
never undo an edit and the server copy can be wiped without losing one.

Only records some active entry touches differ from their server row, and the outbox is
usually tiny, so the overlay is a small dict computed in Python and memoised per thread until
the database changes (see `ThreadState.memo`). Queries then take server rows from indexes and
merge these few records in (see cache.query).

A locally edited record shows its edit time as `updated_at` (server clock, via the measured
offset), so it moves to where the server will put it once the edit lands.

A failed write is not replayed: the server refused it, so its values are not the record's and
showing them would be a lie (and the base of the user's next edit). The record keeps its
failed marker until the write is retried or discarded, and the sync panel says why. A failed
create is the exception: its record exists nowhere else, so it stays, marked failed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import cast

from cache import outbox, records, syncstate
from cache.db import ThreadState
from cache.models import (
    Cell,
    EntryState,
    IssueRow,
    JsonObject,
    Operation,
    OutboxEntry,
    Resource,
    SyncState,
)
from cache.resources import (
    ISSUE_COLUMNS,
    SPECS,
    as_timestamp,
    iso_from_unix,
    json_list,
    labels_of,
    loads_object,
)
from issuefields import Kind, new_issue_defaults
from issuefields.frozen import Frozen

LOCAL_RID_BASE = 1 << 62
ROW_FIELDS = tuple(f.member for f in ISSUE_COLUMNS if f.kind is not Kind.MARKDOWN)
"""The fields of an issue a list's row holds (all but the long texts)."""

CREATE_DEFAULTS: dict[Resource, JsonObject] = {
    Resource.ISSUES: cast(JsonObject, new_issue_defaults()),
    Resource.PROJECTS: {"description": "", "state": "active", "lead": None},
    Resource.COMMENTS: {"author": None},
}


class Effective(Frozen):
    """One record as the screen shows it; `record` is None when deleted locally. `values`
    are its column values, computed exactly as ingest computes a server row's, plus `rid`
    (its place among equal sort keys). `Frozen`, not a dataclass, as `Overlay`: every read's
    start defines them (docs/architecture.md#start-up)."""

    _fields = (
        *("resource", "id", "server_rid", "order_rid"),
        *("record", "sync_state", "entries", "values"),
    )
    __slots__ = _fields
    resource: Resource
    id: str
    server_rid: int | None
    order_rid: int
    record: JsonObject | None
    sync_state: SyncState
    entries: tuple[OutboxEntry, ...]
    values: dict[str, Cell]

    def __init__(
        self,
        resource: Resource,
        id: str,
        server_rid: int | None,
        order_rid: int,
        record: JsonObject | None,
        sync_state: SyncState,
        entries: tuple[OutboxEntry, ...],
        values: dict[str, Cell],
    ) -> None:
        self._init(resource, id, server_rid, order_rid, record, sync_state, entries, values)


def make_effective(
    resource: Resource,
    key: str,
    server_rid: int | None,
    order_rid: int,
    record: JsonObject | None,
    sync_state: SyncState,
    entries: tuple[OutboxEntry, ...],
) -> Effective:
    spec = SPECS[resource]
    values: dict[str, Cell] = dict(zip(spec.column_names, spec.cells(record or {}), strict=True))
    values["rid"] = order_rid
    return Effective(resource, key, server_rid, order_rid, record, sync_state, entries, values)


def effective_row(effective: Effective) -> IssueRow:
    """An issue as the list shows it, with what the outbox holds for it laid over."""
    values = effective.values
    return IssueRow(
        effective.id,
        {name: values[name] for name in ROW_FIELDS},
        labels_of(effective.record or {}),
        effective.sync_state,
    )


class Overlay(Frozen):
    _fields = ("records",)
    __slots__ = _fields
    records: dict[Resource, dict[str, Effective]]

    def __init__(self, records: dict[Resource, dict[str, Effective]] | None = None) -> None:
        self._init({} if records is None else records)

    def of(self, resource: Resource) -> dict[str, Effective]:
        return self.records.get(resource, {})


def _state_of(entries: Iterable[OutboxEntry]) -> SyncState:
    states = {entry.state for entry in entries}
    if EntryState.CONFLICT in states:
        return SyncState.CONFLICT
    if EntryState.FAILED in states or EntryState.UNSURE in states:
        return SyncState.FAILED  # unsure: neither sent nor queued, the user must say (issue 15)
    return SyncState.PENDING


def shown(entry: OutboxEntry) -> bool:
    """Whether the entry's values are part of what the screen shows (see the module doc)."""
    return entry.state is not EntryState.FAILED or entry.operation is Operation.CREATE


def _replay(
    resource: Resource, base: JsonObject | None, chain: list[OutboxEntry], offset: float
) -> JsonObject | None:
    record = None if base is None else dict(base)
    edited_at: float | None = None
    for entry in chain:
        if not shown(entry):
            continue
        if entry.operation is Operation.CREATE:
            created = iso_from_unix(entry.created_at + offset)
            record = {
                **CREATE_DEFAULTS.get(resource, {}),
                **entry.changes,
                "id": entry.record_id,
                "created_at": created,
                "updated_at": iso_from_unix(entry.updated_at + offset),
            }
        elif entry.operation is Operation.UPDATE and record is not None:
            record.update(entry.changes)
            edited_at = max(edited_at or entry.updated_at, entry.updated_at)
        elif entry.operation is Operation.DELETE:
            record = None
    if record is not None and edited_at is not None:
        stamp = iso_from_unix(edited_at + offset)
        server_stamp = as_timestamp(record.get("updated_at"))
        if isinstance(server_stamp, str) and server_stamp < stamp:
            record["updated_at"] = stamp
    return record


def _server_rows(
    conn: sqlite3.Connection, resource: Resource, ids: Iterable[str]
) -> dict[str, tuple[int | None, JsonObject]]:
    spec = SPECS[resource]
    wanted = json_list(ids)
    found: dict[str, tuple[int | None, JsonObject]] = {
        row[0]: (None, loads_object(row[1]))
        for row in conn.execute(
            "SELECT id, record FROM tombstones "
            "WHERE resource = ? AND id IN (SELECT value FROM json_each(?))",
            (resource.value, wanted),
        )
    }
    for rid, *row in conn.execute(
        f"SELECT rid, {spec.record_columns} FROM {spec.table} "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (wanted,),
    ):
        found[row[0]] = (rid, spec.record_of(row))
    return found


def compute(conn: sqlite3.Connection) -> Overlay:
    active = outbox.active(conn)
    if not active:
        return Overlay()
    offset = syncstate.clock_offset(conn)
    groups: dict[Resource, dict[str, list[OutboxEntry]]] = {}
    for entry in active:
        groups.setdefault(entry.resource, {}).setdefault(entry.target_id, []).append(entry)
    made: dict[Resource, dict[str, Effective]] = {}
    for resource, chains in groups.items():
        bases = _server_rows(conn, resource, chains)
        for key, chain in chains.items():
            rid, base = bases.get(key, (None, None))
            made.setdefault(resource, {})[key] = make_effective(
                resource,
                key,
                rid,
                rid if rid is not None else LOCAL_RID_BASE + chain[0].id,
                _replay(resource, base, chain, offset),
                _state_of(chain),
                tuple(chain),
            )
    _add_commented_issues(conn, made)
    return Overlay(made)


def _add_commented_issues(
    conn: sqlite3.Connection, made: dict[Resource, dict[str, Effective]]
) -> None:
    """An issue whose comments have pending writes is overlaid too: its text matches and its
    sync marker depend on them."""
    parents: dict[str, list[OutboxEntry]] = {}
    for comment in made.get(Resource.COMMENTS, {}).values():
        issue_id = comment.entries[0].parent_id
        if issue_id is None and comment.record is not None:
            value = comment.record.get("issue_id")
            issue_id = value if isinstance(value, str) else None
        if issue_id is not None:
            parents.setdefault(issue_id, []).extend(comment.entries)
    issues = made.setdefault(Resource.ISSUES, {})
    missing = [key for key in parents if key not in issues]
    bases = _server_rows(conn, Resource.ISSUES, missing)
    for key in missing:
        rid, base = bases.get(key, (None, None))
        if base is None:
            continue
        issues[key] = make_effective(
            Resource.ISSUES,
            key,
            rid,
            rid if rid is not None else LOCAL_RID_BASE + parents[key][0].id,
            base,
            _state_of(parents[key]),
            (),
        )
    for key, effective in list(issues.items()):
        if key in parents and key not in missing:
            states = (*effective.entries, *parents[key])
            issues[key] = make_effective(
                effective.resource,
                effective.id,
                effective.server_rid,
                effective.order_rid,
                effective.record,
                _state_of(states),
                effective.entries,
            )


def beneath(
    conn: sqlite3.Connection, resource: Resource, key: str, chain: Sequence[OutboxEntry]
) -> JsonObject:
    """The record as the screen would show it with only `chain` (active entries of it, in
    order) laid over its server row: what lies beneath a later entry.

    A record deleted on the server (a tombstone with its deletion time) has nothing beneath:
    its last body shows only because our writes still refer to it, so an edit back to that
    body's value is the user's word about a record that is gone, to meet the deletion when
    it is sent, not a return to what the server holds."""
    deleted = conn.execute(
        "SELECT 1 FROM tombstones WHERE resource = ? AND id = ? AND deleted_at IS NOT NULL",
        (resource.value, key),
    ).fetchone()
    if deleted is not None:
        return {}
    _rid, base = _server_rows(conn, resource, [key]).get(key, (None, None))
    return _replay(resource, base, list(chain), syncstate.clock_offset(conn)) or {}


def current(state: ThreadState) -> Overlay:
    """The overlay for this thread, recomputed only when the database changed."""
    memo = state.memo()
    found = memo.get("overlay")
    if isinstance(found, Overlay):
        return found
    fresh = compute(state.conn)
    memo["overlay"] = fresh
    return fresh


def effective_record(
    conn: sqlite3.Connection, overlay: Overlay, resource: Resource, key: str
) -> JsonObject | None:
    held = overlay.of(resource).get(key)
    if held is not None:
        return held.record
    return records.server_record(conn, SPECS[resource], key)
