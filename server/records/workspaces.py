"""Workspaces and their members (users); members are created by `server.keys` only."""

from __future__ import annotations

import sqlite3

from server.errors import InvalidRequest
from server.etag import check_if_match
from server.ids import new_id
from server.models import WorkspaceUpdate
from server.records.rows import Record, changed_fields, fetch_record, write_changes
from server.records.tables import WORKSPACES
from server.store import Transaction


def workspace_id_by_name(conn: sqlite3.Connection, name: str) -> str | None:
    row = conn.execute("SELECT id FROM workspaces WHERE name = ?", (name,)).fetchone()
    return None if row is None else str(row["id"])


def create_workspace(conn: sqlite3.Connection, name: str, plan: str, now: int) -> str:
    """A new workspace whose stamps start at `now`."""
    workspace_id = new_id("wsp")
    conn.execute(
        "INSERT INTO workspaces (id, name, plan, created_at, updated_at, last_stamp) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (workspace_id, name, plan, now, now, now),
    )
    return workspace_id


def set_plan(tx: Transaction, plan: str) -> None:
    current = fetch_record(tx.conn, WORKSPACES, tx.workspace_id, tx.workspace_id)
    if current["plan"] != plan:
        write_changes(tx, WORKSPACES, tx.workspace_id, {"plan": plan})


def update_workspace(
    tx: Transaction, workspace_id: str, update: WorkspaceUpdate, if_match: str | None
) -> Record:
    current = fetch_record(tx.conn, WORKSPACES, tx.workspace_id, workspace_id)
    check_if_match(if_match, current)
    changes = changed_fields(current, update.model_dump(exclude_unset=True))
    if not changes:
        return current
    if "name" in changes and workspace_id_by_name(tx.conn, changes["name"]) is not None:
        raise InvalidRequest.for_field("name", "another workspace already has this name")
    write_changes(tx, WORKSPACES, workspace_id, changes)
    return fetch_record(tx.conn, WORKSPACES, tx.workspace_id, workspace_id)


def create_user(tx: Transaction, name: str, email: str) -> str:
    user_id = new_id("usr")
    stamp = tx.stamp()
    tx.conn.execute(
        "INSERT INTO users (id, workspace_id, name, email, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (user_id, tx.workspace_id, name, email, stamp, stamp),
    )
    return user_id
