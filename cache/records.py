"""The server copy: storing pages of records, deletions, sweeps and resets.

Every function here runs inside a write transaction the caller opened, so a page, its FTS
terms, its labels and the cursor that follows it commit together or not at all.

Ingest speed decides how fast a cold sync feels, so a page costs a fixed handful of
statements whatever its size: one lookup of the ids already held, one `executemany` for new
rows (their rids handed out in a consecutive run, so FTS and labels are indexed by range), one
for changed rows, and one FTS statement each. A record is skipped when it is older than the
stored one, or has the same `updated_at` and the same content (the overlap re-read of
principle 5 costs no writes).

Tombstones: a record that leaves the server copy (deleted, swept, or wiped by a reset) while
an active outbox entry still refers to it is kept in `tombstones` with its last known body,
so the pending edit still has something to be laid over. They go once nothing refers to them.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from cache import bulk_load, fts, labels, searched
from cache.models import ApplyResult, Cell, JsonObject, Resource
from cache.outbox import ACTIVE_SQL
from cache.resources import (
    SPECS,
    ResourceSpec,
    as_text,
    as_timestamp,
    dumps,
    is_tombstone,
    json_list,
    labels_of,
    record_id,
)

BULK_CHECKPOINT_PAGES = 16384
"""WAL frames (64 MB) a bulk writer lets pile up before it checkpoints
(`Cache.server.bulk_writes`)."""
DEFAULT_CHECKPOINT_PAGES = 1000
"""SQLite's own interval, restored when the bulk run ends."""
BULK_CACHE_KIB = 131072
"""The page cache (128 MB) of a bulk writer's connection. A cold load inserts into a dozen
indexes and the FTS segments at once, whose pages outgrow the usual cache (`db.CACHE_SIZE_KIB`)
within some 30,000 issues; from then on each group of inserts read back, through the OS,
pages it had just evicted. Measured on cold syncs of 100,000 issues, alternating: 256 MB
took the issues 19.2-19.9 s against 21.7-22.5 s with the usual cache; 128 MB did as well as
256 MB (18.0 and 20.7 s against 24.0 s, on a noisier machine), so it is the smaller."""


_REFERENCED = (
    "SELECT COALESCE(server_id, record_id) FROM outbox "
    f"WHERE resource = ? AND state IN {ACTIVE_SQL} "
    "UNION SELECT parent_id FROM outbox WHERE resource = 'comments' AND ? = 'issues' "
    f"AND parent_id IS NOT NULL AND state IN {ACTIVE_SQL}"
)


def referenced_ids(conn: sqlite3.Connection, resource: Resource) -> set[str]:
    """Ids of this resource that an active outbox entry writes to, and the issues an active
    comment write belongs to: a deleted one is kept as a tombstone, so the write stays in
    sight where it was typed (a refused comment on an issue someone deleted, say)."""
    rows = conn.execute(_REFERENCED, (resource.value, resource.value))
    return {row[0] for row in rows}


class Prepared(NamedTuple):
    """A server record with what storing it takes computed: its id, canonical `updated_at`,
    columns, `extra` (the JSON of what the columns do not hold) and labels (none of it needs
    the database). A named tuple: a frozen dataclass took a tenth of what preparing a big
    page ran to make (issue 18).

    That is nearly all the Python work of storing a record. A pull prepares each page on the
    thread that parsed it (`prepare`), while the next page is on its way, so the thread that
    writes groups of pages runs little but SQLite, which releases the GIL: a writer busy in
    Python held the GIL for up to the interpreter's switch interval (5 ms) each time the
    network loop woke up, and every page waited for it."""

    key: str
    stamp: str | None
    tombstone: bool
    cells: tuple[Cell, ...] = ()
    text: str = ""
    labels: tuple[str, ...] = ()


def prepare(spec: ResourceSpec, records: Iterable[Mapping[str, Any]]) -> list[Prepared]:
    """Prepare server records (tombstones `{"id", "deleted": true, "updated_at"}` included)
    for `apply_page`; raises `InvalidRecordError` for a record without a string id."""
    stamp_at = spec.column_names.index("updated_at")
    given = list(records)
    keys = [record_id(record) for record in given]
    live = [record for record in given if not is_tombstone(record)]
    cells_of = iter(spec.cells_of(live))
    found: list[Prepared] = []
    for key, record in zip(keys, given, strict=True):
        if is_tombstone(record):
            found.append(Prepared(key, as_timestamp(record.get("updated_at")), True))
            continue
        cells = next(cells_of)
        found.append(
            Prepared(
                key,
                as_text(cells[stamp_at]),
                False,
                cells,
                spec.extra(record, cells),
                labels_of(record) if spec.label_mask else (),
            )
        )
    return found


def _newest(records: Sequence[Prepared]) -> dict[str, Prepared]:
    """One record per id: the newest by `updated_at`, the later one on a tie."""
    chosen: dict[str, Prepared] = {}
    for record in records:
        held = chosen.get(record.key)
        if held is None or not _older(record, held):
            chosen[record.key] = record
    return chosen


def _older(record: Prepared, than: Prepared) -> bool:
    return record.stamp is not None and than.stamp is not None and record.stamp < than.stamp


Watcher = Callable[[sqlite3.Connection, Sequence[int], Sequence[str]], None]
"""Told, before a page's rows are written, the rids of the held rows about to change and the
ids of the records new to the table (the change log reads the copies it compares: see
cache.changelog)."""


def apply_page(
    conn: sqlite3.Connection,
    spec: ResourceSpec,
    page: Sequence[Prepared],
    watch: Watcher | None = None,
) -> ApplyResult:
    chosen = _newest(page)
    dead = {key: record.stamp for key, record in chosen.items() if record.tombstone}
    live = {key: record for key, record in chosen.items() if not record.tombstone}
    inserted, updated, unchanged = _upsert(conn, spec, live, watch)
    deleted = delete_records(conn, spec, dead) if dead else 0
    return ApplyResult(inserted, updated, unchanged, deleted)


def _upsert(
    conn: sqlite3.Connection, spec: ResourceSpec, live: dict[str, Prepared], watch: Watcher | None
) -> tuple[int, int, int]:
    if not live:
        return 0, 0, 0
    ids = json_list(live)
    held = {
        row[0]: (row[1], row[2])
        for row in conn.execute(
            f"SELECT id, rid, updated_at FROM {spec.table} "
            "WHERE id IN (SELECT value FROM json_each(?))",
            (ids,),
        )
    }
    graves = dict(
        conn.execute(
            "SELECT id, deleted_at FROM tombstones "
            "WHERE resource = ? AND id IN (SELECT value FROM json_each(?))",
            (spec.resource.value, ids),
        ).fetchall()
    )
    fresh: list[Prepared] = []
    changed: dict[int, tuple[Any, ...]] = {}
    same_time: dict[int, tuple[Any, ...]] = {}
    stale: set[str] = set()
    unchanged = 0
    for key, record in live.items():
        stamp = record.stamp
        deleted_at = graves.get(key)
        if deleted_at is not None and stamp is not None and stamp <= deleted_at:
            stale.add(key)
            continue
        if key not in held:
            fresh.append(record)
            continue
        row = (key, *record.cells, record.text)
        rid, held_stamp = held[key]
        if held_stamp is not None and stamp is not None and stamp < held_stamp:
            unchanged += 1
        elif stamp == held_stamp:
            same_time[rid] = row
        else:
            changed[rid] = row
    if same_time:
        stored = conn.execute(
            f"SELECT rid, {spec.record_columns} FROM {spec.table} "
            "WHERE rid IN (SELECT value FROM json_each(?))",
            (dumps(list(same_time)),),
        )
        for rid, *held_row in stored:
            row = same_time[rid]
            if tuple(held_row) == row:
                unchanged += 1
            else:
                changed[rid] = row
    if watch is not None:
        watch(conn, list(changed), [record.key for record in fresh])
    fresh_masks: Sequence[int] = ()
    if spec.label_mask:
        fresh_masks, changed = _with_masks(conn, live, fresh, changed)
    names = (*spec.column_names, *(("label_mask",) if spec.label_mask else ()), "extra")
    changed_rids = list(changed)
    if changed:
        fts.delete_rows(conn, spec, changed_rids)
        if spec.label_mask:
            labels.unindex(conn, changed_rids)
        assignments = ", ".join(f"{name} = ?" for name in names)
        conn.executemany(
            f"UPDATE {spec.table} SET {assignments} WHERE rid = ?",
            [(*row[1:], rid) for rid, row in changed.items()],
        )
        fts.index_rows(conn, spec, changed_rids)
        if spec.label_mask:
            labels.index(conn, "i.rid IN (SELECT value FROM json_each(?))", dumps(changed_rids))
    if fresh:
        first = conn.execute(f"SELECT coalesce(max(rid), 0) + 1 FROM {spec.table}").fetchone()[0]
        marks = ", ".join("?" * (len(names) + 2))
        if spec.label_mask:
            rows = [
                (rid, record.key, *record.cells, mask, record.text)
                for rid, record, mask in zip(itertools.count(first), fresh, fresh_masks)
            ]
        else:
            rows = [
                (rid, record.key, *record.cells, record.text)
                for rid, record in zip(itertools.count(first), fresh)
            ]
        with bulk_load.indexes_set_aside(conn, spec, len(fresh)) as set_aside:
            conn.executemany(
                f"INSERT INTO {spec.table} (rid, id, {', '.join(names)}) VALUES ({marks})", rows
            )
            if not set_aside:
                bulk_load.log_inserts(conn, spec.table, first)
        fts.index_range(conn, spec, first)
        if spec.label_mask:
            labels.index(conn, "i.rid >= ?", first)
    revived = [key for key in graves if key not in stale]
    if revived:
        conn.execute(
            "DELETE FROM tombstones WHERE resource = ? AND id IN (SELECT value FROM json_each(?))",
            (spec.resource.value, json_list(revived)),
        )
    return len(fresh), len(changed), unchanged + len(stale)


def _with_masks(
    conn: sqlite3.Connection,
    live: dict[str, Prepared],
    fresh: list[Prepared],
    changed: dict[int, tuple[Any, ...]],
) -> tuple[list[int], dict[int, tuple[Any, ...]]]:
    """The label masks of the fresh records (their rows are made once, with them), and each
    changed row with its mask inserted before its record column."""
    sets = [record.labels for record in fresh]
    sets += [live[row[0]].labels for row in changed.values()]
    found = labels.masks(conn, sets)
    masked = [
        (*row[:-1], mask, row[-1])
        for row, mask in zip(changed.values(), found[len(fresh) :], strict=True)
    ]
    return found[: len(fresh)], dict(zip(changed, masked, strict=True))


def delete_records(
    conn: sqlite3.Connection, spec: ResourceSpec, deleted: Mapping[str, str | None]
) -> int:
    """Remove rows (with their FTS terms and labels), keeping tombstones for referenced ids.
    Deleting issues also removes their comments, which the server drops with them."""
    if not deleted:
        return 0
    rows = conn.execute(
        f"SELECT rid, {spec.record_columns} FROM {spec.table} "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (json_list(deleted),),
    ).fetchall()
    referenced = referenced_ids(conn, spec.resource)
    bodies = {row[1]: row[1:] for row in rows}
    for key in referenced.intersection(deleted):
        conn.execute(
            "INSERT INTO tombstones (resource, id, deleted_at, record) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (resource, id) DO UPDATE SET deleted_at = excluded.deleted_at",
            (spec.resource.value, key, deleted[key], _body(spec, bodies.get(key))),
        )
    rids = [row[0] for row in rows]
    if not rids:
        return 0
    fts.delete_rows(conn, spec, rids)
    if spec.label_mask:
        labels.unindex(conn, rids)
    if spec.resource is Resource.ISSUES:
        comments = conn.execute(
            "SELECT id FROM comments WHERE issue_id IN (SELECT value FROM json_each(?))",
            (json_list(bodies),),
        ).fetchall()
        delete_records(conn, SPECS[Resource.COMMENTS], {row[0]: None for row in comments})
    conn.execute(
        f"DELETE FROM {spec.table} WHERE rid IN (SELECT value FROM json_each(?))",
        (dumps(rids),),
    )
    return len(rids)


def delete_missing(
    conn: sqlite3.Connection, spec: ResourceSpec, ids_seen: Iterable[str], parent: str | None
) -> int:
    """After a full id sweep: every held record the sweep did not see is gone."""
    sql = f"SELECT id FROM {spec.table} WHERE id NOT IN (SELECT value FROM json_each(?))"
    params: tuple[str, ...] = (json_list(ids_seen),)
    if parent is not None and spec.parent_column is not None:
        sql += f" AND {spec.parent_column} = ?"
        params += (parent,)
    missing = {row[0]: None for row in conn.execute(sql, params)}
    return delete_records(conn, spec, missing)


def _body(spec: ResourceSpec, row: Sequence[Any] | None) -> str:
    """The JSON of a record read with `spec.record_columns` (a tombstone's body)."""
    return "{}" if row is None else dumps(spec.record_of(row))


def server_record(conn: sqlite3.Connection, spec: ResourceSpec, key: str) -> JsonObject | None:
    row = conn.execute(
        f"SELECT {spec.record_columns} FROM {spec.table} WHERE id = ?", (key,)
    ).fetchone()
    return None if row is None else spec.record_of(row)


def local_count(conn: sqlite3.Connection, spec: ResourceSpec, parent: str | None) -> int:
    if parent is not None and spec.parent_column is not None:
        row = conn.execute(
            f"SELECT count(*) FROM {spec.table} WHERE {spec.parent_column} = ?", (parent,)
        ).fetchone()
    else:
        row = conn.execute(f"SELECT count(*) FROM {spec.table}").fetchone()
    return int(row[0])


def reset_server_copy(conn: sqlite3.Connection) -> None:
    """Wipe every server row and cursor; bodies that pending writes refer to are retained as
    tombstones without a deletion time, and dropped when the re-pull brings them back.
    The issues go without their change log's triggers (`bulk_load.log_set_aside`): one
    change logged, not one a row, and SQLite empties the table whole instead of row by row."""
    for spec in SPECS.values():
        referenced = referenced_ids(conn, spec.resource)
        if referenced:
            kept = conn.execute(
                f"SELECT {spec.record_columns} FROM {spec.table} "
                "WHERE id IN (SELECT value FROM json_each(?))",
                (json_list(referenced),),
            ).fetchall()
            conn.executemany(
                "INSERT OR IGNORE INTO tombstones (resource, id, deleted_at, record) "
                "VALUES (?, ?, NULL, ?)",
                [(spec.resource.value, row[0], _body(spec, row)) for row in kept],
            )
        fts.clear(conn, spec)
        with bulk_load.log_set_aside(conn, spec.table):
            conn.execute(f"DELETE FROM {spec.table}")
    conn.execute("DELETE FROM issue_labels")
    conn.execute("DELETE FROM label_bits")
    conn.execute("DELETE FROM cursors")
    searched.clear(conn)


def prune_tombstones(conn: sqlite3.Connection) -> None:
    """Drop the tombstones no active write refers to any more (see `referenced_ids`)."""
    conn.execute(
        "DELETE FROM tombstones WHERE NOT EXISTS (SELECT 1 FROM outbox o "
        f"WHERE o.state IN {ACTIVE_SQL} AND ((o.resource = tombstones.resource "
        "AND COALESCE(o.server_id, o.record_id) = tombstones.id) "
        "OR (tombstones.resource = 'issues' AND o.resource = 'comments' "
        "AND o.parent_id = tombstones.id)))"
    )
