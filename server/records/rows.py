"""What every resource does alike: find a row, check a reference, write changes, bury."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from server.errors import InvalidRequest, NotFound
from server.store import Transaction

Record = dict[str, Any]


@dataclass(frozen=True)
class Table:
    """A resource's table: its name, its noun, and how a row becomes a record."""

    name: str
    kind: str
    to_record: Callable[[sqlite3.Row], Record]
    scope: str = "workspace_id"


def fetch_row(
    conn: sqlite3.Connection, table: Table, workspace_id: str, record_id: str
) -> sqlite3.Row:
    """The row, or 404 whether it does not exist or belongs to another workspace."""
    row: sqlite3.Row | None = conn.execute(
        f"SELECT * FROM {table.name} WHERE id = ? AND {table.scope} = ?",
        (record_id, workspace_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"No {table.kind} with id `{record_id}`.")
    return row


def fetch_record(
    conn: sqlite3.Connection, table: Table, workspace_id: str, record_id: str
) -> Record:
    return table.to_record(fetch_row(conn, table, workspace_id, record_id))


def require_reference(
    conn: sqlite3.Connection, table: Table, workspace_id: str, record_id: str | None, field: str
) -> None:
    """A body member pointing at a record must point into the caller's workspace (else 400)."""
    if record_id is None:
        return
    found = conn.execute(
        f"SELECT 1 FROM {table.name} WHERE id = ? AND {table.scope} = ?",
        (record_id, workspace_id),
    ).fetchone()
    if found is None:
        raise InvalidRequest.for_field(field, f"no {table.kind} with id `{record_id}`")


def changed_fields(current: Mapping[str, Any], wanted: Mapping[str, Any]) -> dict[str, Any]:
    """The members of an update that differ from the record; an empty result is a no-op."""
    return {name: value for name, value in wanted.items() if current[name] != value}


def write_changes(
    tx: Transaction, table: Table, record_id: str, columns: Mapping[str, Any]
) -> None:
    """Store new column values with a fresh `updated_at`."""
    assignments = ", ".join(f"{column} = ?" for column in columns)
    tx.conn.execute(
        f"UPDATE {table.name} SET {assignments}, updated_at = ? WHERE id = ?",
        (*columns.values(), tx.stamp(), record_id),
    )


def bury(tx: Transaction, table: Table, record_id: str) -> None:
    """Delete the row and leave a tombstone stamped with the deletion time."""
    tx.conn.execute(f"DELETE FROM {table.name} WHERE id = ?", (record_id,))
    tx.conn.execute(
        "INSERT INTO tombstones (workspace_id, kind, id, deleted_at) VALUES (?, ?, ?, ?)",
        (tx.workspace_id, table.kind, record_id, tx.stamp()),
    )
