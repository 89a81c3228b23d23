"""Issues: numbering, labels, workflow, and what deleting one takes with it."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from server.etag import check_if_match
from server.ids import new_id
from server.models import IssueCreate, IssueUpdate
from server.records import comments
from server.records.listing import Condition, ListQuery, list_page
from server.records.rows import (
    Record,
    bury,
    changed_fields,
    fetch_record,
    require_reference,
    write_changes,
)
from server.records.tables import ISSUES, PROJECTS, USERS
from server.store import Transaction
from server.workflow import check_transition


@dataclass(frozen=True)
class IssueFilters:
    status: str | None = None
    priority: str | None = None
    assignee: str | None = None
    project_id: str | None = None
    label: str | None = None

    def conditions(self, workspace_id: str) -> list[Condition]:
        found: list[Condition] = [
            (f"{column} = ?", (value,))
            for column in ("status", "priority", "assignee", "project_id")
            if (value := getattr(self, column)) is not None
        ]
        if self.label is not None:
            found.append(
                (
                    "seq IN (SELECT issue_seq FROM issue_labels "
                    "WHERE workspace_id = ? AND label = ?)",
                    (workspace_id, self.label),
                )
            )
        return found


def get_issue(conn: sqlite3.Connection, workspace_id: str, issue_id: str) -> Record:
    return fetch_record(conn, ISSUES, workspace_id, issue_id)


def list_issues(
    conn: sqlite3.Connection, workspace_id: str, query: ListQuery, filters: IssueFilters
) -> dict[str, Any]:
    return list_page(conn, ISSUES, workspace_id, query, filters.conditions(workspace_id))


def _check_references(tx: Transaction, fields: dict[str, Any]) -> None:
    if "assignee" in fields:
        require_reference(tx.conn, USERS, tx.workspace_id, fields["assignee"], "assignee")
    if "project_id" in fields:
        require_reference(tx.conn, PROJECTS, tx.workspace_id, fields["project_id"], "project_id")


def _write_labels(tx: Transaction, issue_id: str, labels: list[str]) -> None:
    (seq,) = tx.conn.execute("SELECT seq FROM issues WHERE id = ?", (issue_id,)).fetchone()
    tx.conn.execute("DELETE FROM issue_labels WHERE issue_seq = ?", (seq,))
    tx.conn.executemany(
        "INSERT INTO issue_labels (workspace_id, label, issue_seq) VALUES (?, ?, ?)",
        [(tx.workspace_id, label, seq) for label in labels],
    )


def create_issue(tx: Transaction, fields: IssueCreate) -> Record:
    values = fields.model_dump()
    _check_references(tx, values)
    (number,) = tx.conn.execute(
        "UPDATE workspaces SET issue_counter = issue_counter + 1 WHERE id = ? "
        "RETURNING issue_counter",
        (tx.workspace_id,),
    ).fetchone()
    issue_id = new_id("iss")
    stamp = tx.stamp()
    tx.conn.execute(
        """
        INSERT INTO issues (id, workspace_id, number, title, description, status, priority,
                            assignee, project_id, labels, created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """,
        (
            issue_id,
            tx.workspace_id,
            number,
            values["title"],
            values["description"],
            values["status"],
            values["priority"],
            values["assignee"],
            values["project_id"],
            json.dumps(values["labels"]),
            stamp,
            stamp,
        ),
    )
    _write_labels(tx, issue_id, values["labels"])
    issue = get_issue(tx.conn, tx.workspace_id, issue_id)
    tx.emit("issue.created", issue)
    return issue


def update_issue(
    tx: Transaction, issue_id: str, update: IssueUpdate, if_match: str | None = None
) -> Record:
    """Apply the members given; changing nothing (e.g. the same status) is a no-op."""
    current = get_issue(tx.conn, tx.workspace_id, issue_id)
    check_if_match(if_match, current)
    changes = changed_fields(current, update.model_dump(exclude_unset=True))
    if not changes:
        return current
    if "status" in changes:
        check_transition(current["status"], changes["status"])
    _check_references(tx, changes)
    columns = {**changes}
    if "labels" in changes:
        columns["labels"] = json.dumps(changes["labels"])
    write_changes(tx, ISSUES, issue_id, columns)
    if "labels" in changes:
        _write_labels(tx, issue_id, changes["labels"])
    issue = get_issue(tx.conn, tx.workspace_id, issue_id)
    tx.emit("issue.updated", issue, {name: current[name] for name in changes})
    return issue


def delete_issue(tx: Transaction, issue_id: str, if_match: str | None = None) -> Record:
    """Delete the issue and its comments; each leaves a tombstone and an event."""
    issue = get_issue(tx.conn, tx.workspace_id, issue_id)
    check_if_match(if_match, issue)
    comments.delete_comments_of(tx, issue_id)
    bury(tx, ISSUES, issue_id)
    tx.emit("issue.deleted", issue)
    return issue


def detach_project(tx: Transaction, project_id: str) -> None:
    """Clear `project_id` on the project's issues, each an ordinary update with its own stamp."""
    issue_ids = [
        row["id"]
        for row in tx.conn.execute(
            "SELECT id FROM issues WHERE project_id = ? ORDER BY created_at, id", (project_id,)
        )
    ]
    for issue_id in issue_ids:
        write_changes(tx, ISSUES, issue_id, {"project_id": None})
        issue = get_issue(tx.conn, tx.workspace_id, issue_id)
        tx.emit("issue.updated", issue, {"project_id": project_id})
