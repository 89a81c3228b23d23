"""Projects: unique keys, leads, and what deleting one does to its issues."""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from server.errors import InvalidRequest
from server.etag import check_if_match
from server.ids import new_id
from server.models import ProjectCreate, ProjectUpdate
from server.records.issues import detach_project
from server.records.listing import ListQuery, list_page
from server.records.rows import (
    Record,
    bury,
    changed_fields,
    fetch_record,
    require_reference,
    write_changes,
)
from server.records.tables import PROJECTS, USERS
from server.store import Transaction


def derive_key(name: str) -> str | None:
    """A key for a project created without one: the initials of a name of several words,
    else its first four letters; None when that gives fewer than two letters."""
    words = re.findall(r"[A-Za-z]+", name)
    letters = "".join(word[0] for word in words) if len(words) > 1 else "".join(words)[:4]
    key = letters[:10].upper()
    return key if len(key) >= 2 else None


def _check_key_free(tx: Transaction, key: str) -> None:
    taken = tx.conn.execute(
        "SELECT 1 FROM projects WHERE workspace_id = ? AND key = ?", (tx.workspace_id, key)
    ).fetchone()
    if taken is not None:
        raise InvalidRequest.for_field("key", f"another project already uses the key `{key}`")


def get_project(conn: sqlite3.Connection, workspace_id: str, project_id: str) -> Record:
    return fetch_record(conn, PROJECTS, workspace_id, project_id)


def list_projects(conn: sqlite3.Connection, workspace_id: str, query: ListQuery) -> dict[str, Any]:
    return list_page(conn, PROJECTS, workspace_id, query)


def create_project(tx: Transaction, fields: ProjectCreate) -> Record:
    key = fields.key or derive_key(fields.name)
    if key is None:
        raise InvalidRequest.for_field(
            "key", "required when `name` has fewer than two ASCII letters to derive it from"
        )
    _check_key_free(tx, key)
    require_reference(tx.conn, USERS, tx.workspace_id, fields.lead, "lead")
    project_id = new_id("prj")
    stamp = tx.stamp()
    tx.conn.execute(
        """
        INSERT INTO projects (id, workspace_id, key, name, description, state, lead,
                              created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        """,
        (
            project_id,
            tx.workspace_id,
            key,
            fields.name,
            fields.description,
            fields.state,
            fields.lead,
            stamp,
            stamp,
        ),
    )
    project = get_project(tx.conn, tx.workspace_id, project_id)
    tx.emit("project.created", project)
    return project


def update_project(
    tx: Transaction, project_id: str, update: ProjectUpdate, if_match: str | None
) -> Record:
    current = get_project(tx.conn, tx.workspace_id, project_id)
    check_if_match(if_match, current)
    changes = changed_fields(current, update.model_dump(exclude_unset=True))
    if not changes:
        return current
    if "key" in changes:
        _check_key_free(tx, changes["key"])
    if "lead" in changes:
        require_reference(tx.conn, USERS, tx.workspace_id, changes["lead"], "lead")
    write_changes(tx, PROJECTS, project_id, changes)
    project = get_project(tx.conn, tx.workspace_id, project_id)
    tx.emit("project.updated", project, {name: current[name] for name in changes})
    return project


def delete_project(tx: Transaction, project_id: str, if_match: str | None) -> Record:
    """Delete the project; its issues stay, with `project_id` cleared (and bumped)."""
    project = get_project(tx.conn, tx.workspace_id, project_id)
    check_if_match(if_match, project)
    detach_project(tx, project_id)
    bury(tx, PROJECTS, project_id)
    tx.emit("project.deleted", project)
    return project
