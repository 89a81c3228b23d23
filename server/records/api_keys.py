"""API keys as the API shows them (`/api-keys`): never the value, never its hash.

The value of a key exists only in the answer to its creation; what is stored is its SHA-256
digest (`server.auth.hash_key`), so a listing cannot leak a working key. Revoking keeps the row,
so the key's name and history stay visible and its digest can never authenticate again.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from server.errors import NotFound
from server.keys import insert_key
from server.records.listing import Paging
from server.records.rows import Record
from server.store import Transaction
from server.timestamps import format_micros

_COLUMNS = "id, name, permissions, expires_at, revoked_at, created_at"


def _to_record(row: sqlite3.Row) -> Record:
    expires_at = row["expires_at"]
    return {
        "id": row["id"],
        "name": row["name"],
        "permissions": json.loads(row["permissions"]),
        "expires_at": None if expires_at is None else format_micros(expires_at),
        "created_at": format_micros(row["created_at"]),
        "revoked": row["revoked_at"] is not None,
    }


def _fetch(conn: sqlite3.Connection, workspace_id: str, key_id: str) -> Record:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM api_keys WHERE id = ? AND workspace_id = ?",
        (key_id, workspace_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"No API key with id `{key_id}`.")
    return _to_record(row)


def list_keys(conn: sqlite3.Connection, workspace_id: str, paging: Paging) -> dict[str, Any]:
    """The workspace's keys, revoked ones included, oldest first."""
    (total,) = conn.execute(
        "SELECT count(*) FROM api_keys WHERE workspace_id = ?", (workspace_id,)
    ).fetchone()
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM api_keys WHERE workspace_id = ?"
        " ORDER BY created_at, id LIMIT ? OFFSET ?",
        (workspace_id, paging.per_page, paging.offset),
    ).fetchall()
    return paging.envelope([_to_record(row) for row in rows], total)


def create_key(
    tx: Transaction,
    user_id: str,
    name: str,
    permissions: list[str],
    expires_at: int | None,
    now: int,
) -> Record:
    """A new key of `user_id`: its record with the value under `key`, shown this once."""
    key_id, value = insert_key(tx, user_id, name, permissions, expires_at, now)
    return {**_fetch(tx.conn, tx.workspace_id, key_id), "key": value}


def revoke_key(tx: Transaction, key_id: str) -> Record:
    """Revoke the key (again is a no-op): every later request with it is 401."""
    _fetch(tx.conn, tx.workspace_id, key_id)
    tx.conn.execute(
        "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?",
        (tx.stamp(), key_id),
    )
    return _fetch(tx.conn, tx.workspace_id, key_id)
