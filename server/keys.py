"""Creating API keys outside the API (the CLI, tests, the client's demo, benchmarks).

A key belongs to one user in one workspace; both are created on first use, so one call gives a
working key for a fresh database.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path

from server.auth import generate_key, hash_key
from server.db import Database
from server.ids import new_id
from server.models import PERMISSIONS, PLANS
from server.records.workspaces import create_user, create_workspace, set_plan, workspace_id_by_name
from server.store import Transaction
from server.timestamps import Clock, to_micros, utc_now

DEFAULT_USER = "Admin"


def create_key(
    db_path: str | Path,
    workspace: str,
    name: str,
    permissions: Iterable[str] | None = None,
    plan: str | None = None,
    expires_in_days: float | None = None,
    *,
    user: str | None = None,
    clock: Clock = utc_now,
) -> str:
    """Create a key and return its value, which is stored only as a hash.

    The workspace called `workspace` is created if missing, with `plan` (free when None); a
    `plan` given for an existing workspace replaces its plan. The key gets every permission
    unless `permissions` lists some. It belongs to the member called `user` (created if
    missing) or, when None, to the workspace's first member (an "Admin" on a new workspace).
    """
    chosen = list(PERMISSIONS if permissions is None else dict.fromkeys(permissions))
    _check_arguments(workspace, name, chosen, plan, expires_in_days)
    db = Database(db_path)
    try:
        with db.writing() as conn:
            workspace_id = workspace_id_by_name(conn, workspace) or create_workspace(
                conn, workspace, plan or "free", to_micros(clock())
            )
            tx = Transaction(conn, workspace_id, clock)
            if plan is not None:
                set_plan(tx, plan)
            return add_key(tx, _member(tx, user), name, chosen, expires_in_days)
    finally:
        db.close()


def _check_arguments(
    workspace: str,
    name: str,
    permissions: list[str],
    plan: str | None,
    expires_in_days: float | None,
) -> None:
    if not workspace.strip():
        raise ValueError("the workspace name must not be empty")
    if not name.strip():
        raise ValueError("the key name must not be empty")
    unknown = sorted(set(permissions) - set(PERMISSIONS))
    if unknown:
        raise ValueError(f"unknown permission {unknown[0]!r}; known: {', '.join(PERMISSIONS)}")
    if plan is not None and plan not in PLANS:
        raise ValueError(f"unknown plan {plan!r}; known: {', '.join(PLANS)}")
    if expires_in_days is not None and expires_in_days <= 0:
        raise ValueError("a key must expire a positive number of days from now")


def _member(tx: Transaction, name: str | None) -> str:
    query = "SELECT id FROM users WHERE workspace_id = ?"
    params: tuple[str, ...] = (tx.workspace_id,)
    if name is not None:
        query += " AND name = ?"
        params += (name,)
    row = tx.conn.execute(query + " ORDER BY created_at, id LIMIT 1", params).fetchone()
    if row is not None:
        return str(row["id"])
    member = name or DEFAULT_USER
    slug = "".join(c for c in member.lower() if c.isalnum()) or "user"
    return create_user(tx, member, f"{slug}@example.com")


def add_key(
    tx: Transaction,
    user_id: str,
    name: str,
    permissions: list[str],
    expires_in_days: float | None = None,
) -> str:
    """Store a new key of `user_id` and return its value."""
    now = to_micros(tx.clock())
    expires_at = (
        None
        if expires_in_days is None
        else now + timedelta(days=expires_in_days) // timedelta(microseconds=1)
    )
    return insert_key(tx, user_id, name, permissions, expires_at, now)[1]


def insert_key(
    tx: Transaction,
    user_id: str,
    name: str,
    permissions: list[str],
    expires_at: int | None,
    now: int,
) -> tuple[str, str]:
    """Store a new key of `user_id`, created `now`, expiring at `expires_at` (both in
    microseconds); its id and value."""
    key = generate_key()
    key_id = new_id("key")
    tx.conn.execute(
        "INSERT INTO api_keys (id, workspace_id, user_id, name, key_hash, permissions, "
        "expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            key_id,
            tx.workspace_id,
            user_id,
            name,
            hash_key(key),
            json.dumps(permissions),
            expires_at,
            now,
        ),
    )
    return key_id, key


def revoke_key(db_path: str | Path, key: str, *, clock: Clock = utc_now) -> None:
    """Revoke a key by its value: from then on it is refused with 401."""
    db = Database(db_path)
    try:
        with db.writing() as conn:
            revoked = conn.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE key_hash = ? AND revoked_at IS NULL",
                (to_micros(clock()), hash_key(key)),
            ).rowcount
    finally:
        db.close()
    if not revoked:
        raise ValueError("no such key, or it is already revoked")
