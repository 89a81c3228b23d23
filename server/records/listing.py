"""Pages of records: the published list envelope, sync order and tombstones.

Without `updated_after` a list is in creation order. With it (docs/api.md#sync-order) the order
is `(updated_at, id)` so a client can page by moving its cursor; `include_deleted=true` mixes in
tombstones, ordered by deletion time on the same axis, and also switches to that order.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from server.records.rows import Record, Table
from server.timestamps import format_micros

MAX_OFFSET = 2**62
"""Far beyond any real table; keeps an absurd `page` from overflowing SQLite's integers."""

Condition = tuple[str, tuple[Any, ...]]
"""A SQL condition on the table's columns and its parameters."""


@dataclass(frozen=True)
class Paging:
    page: int = 1
    per_page: int = 25

    @property
    def offset(self) -> int:
        return min((self.page - 1) * self.per_page, MAX_OFFSET)

    def envelope(self, data: list[Record], total: int) -> dict[str, Any]:
        """The published list envelope around one page (docs/api.md#list-envelope-and-paging)."""
        return {
            "data": data,
            "pagination": {"page": self.page, "per_page": self.per_page, "total": total},
        }


@dataclass(frozen=True)
class ListQuery:
    paging: Paging = Paging()
    updated_after: int | None = None
    include_deleted: bool = False


def list_page(
    conn: sqlite3.Connection,
    table: Table,
    workspace_id: str,
    query: ListQuery,
    conditions: Sequence[Condition] = (),
) -> dict[str, Any]:
    """One page of a table in the workspace, as the published list envelope.

    Tombstones ignore `conditions`: a deleted record has no fields left to filter on, and a
    client told about a deletion it never saw loses nothing.
    """
    where = [f"{table.scope} = ?", *(sql for sql, _ in conditions)]
    params: list[Any] = [workspace_id, *(value for _, values in conditions for value in values)]
    if query.updated_after is not None:
        where.append("updated_at > ?")
        params.append(query.updated_after)
    live = f"FROM {table.name} WHERE {' AND '.join(where)}"
    paging = query.paging
    if not query.include_deleted:
        order = "updated_at, id" if query.updated_after is not None else "created_at, id"
        (total,) = conn.execute(f"SELECT count(*) {live}", params).fetchone()
        rows = conn.execute(
            f"SELECT * {live} ORDER BY {order} LIMIT ? OFFSET ?",
            (*params, paging.per_page, paging.offset),
        ).fetchall()
        return paging.envelope([table.to_record(row) for row in rows], total)

    dead = "FROM tombstones WHERE workspace_id = ? AND kind = ?"
    dead_params: list[Any] = [workspace_id, table.kind]
    if query.updated_after is not None:
        dead += " AND deleted_at > ?"
        dead_params.append(query.updated_after)
    both = (
        f"SELECT id, updated_at AS stamp, 0 AS deleted {live} "
        f"UNION ALL SELECT id, deleted_at, 1 {dead}"
    )
    (total,) = conn.execute(f"SELECT count(*) FROM ({both})", (*params, *dead_params)).fetchone()
    keys = conn.execute(
        f"{both} ORDER BY stamp, id LIMIT ? OFFSET ?",
        (*params, *dead_params, paging.per_page, paging.offset),
    ).fetchall()
    live_ids = [key["id"] for key in keys if not key["deleted"]]
    placeholders = ", ".join("?" * len(live_ids))
    records = {
        row["id"]: table.to_record(row)
        for row in conn.execute(
            f"SELECT * FROM {table.name} WHERE id IN ({placeholders})", live_ids
        )
    }
    data = [
        {"id": key["id"], "deleted": True, "updated_at": format_micros(key["stamp"])}
        if key["deleted"]
        else records[key["id"]]
        for key in keys
    ]
    return paging.envelope(data, total)
