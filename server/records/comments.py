"""Comments: written by one user, changed or removed by that user only."""

from __future__ import annotations

import sqlite3
from typing import Any

from server.errors import Forbidden
from server.etag import check_if_match
from server.ids import new_id
from server.models import CommentCreate, CommentUpdate
from server.records.listing import ListQuery, list_page
from server.records.rows import (
    Record,
    bury,
    changed_fields,
    fetch_record,
    require_reference,
    write_changes,
)
from server.records.tables import COMMENTS, ISSUES
from server.store import Transaction


def get_comment(conn: sqlite3.Connection, workspace_id: str, comment_id: str) -> Record:
    return fetch_record(conn, COMMENTS, workspace_id, comment_id)


def list_comments(
    conn: sqlite3.Connection, workspace_id: str, query: ListQuery, issue_id: str | None
) -> dict[str, Any]:
    conditions = [] if issue_id is None else [("issue_id = ?", (issue_id,))]
    return list_page(conn, COMMENTS, workspace_id, query, conditions)


def create_comment(tx: Transaction, author: str, fields: CommentCreate) -> Record:
    require_reference(tx.conn, ISSUES, tx.workspace_id, fields.issue_id, "issue_id")
    comment_id = new_id("cmt")
    stamp = tx.stamp()
    tx.conn.execute(
        "INSERT INTO comments (id, workspace_id, issue_id, body, author, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (comment_id, tx.workspace_id, fields.issue_id, fields.body, author, stamp, stamp),
    )
    comment = get_comment(tx.conn, tx.workspace_id, comment_id)
    tx.emit("comment.created", comment)
    return comment


def _authored(tx: Transaction, comment_id: str, user_id: str, if_match: str | None) -> Record:
    comment = get_comment(tx.conn, tx.workspace_id, comment_id)
    if comment["author"] != user_id:
        raise Forbidden("Only the author of a comment may change or delete it.")
    check_if_match(if_match, comment)
    return comment


def update_comment(
    tx: Transaction, comment_id: str, user_id: str, update: CommentUpdate, if_match: str | None
) -> Record:
    current = _authored(tx, comment_id, user_id, if_match)
    changes = changed_fields(current, update.model_dump(exclude_unset=True))
    if not changes:
        return current
    write_changes(tx, COMMENTS, comment_id, changes)
    comment = get_comment(tx.conn, tx.workspace_id, comment_id)
    tx.emit("comment.updated", comment, {name: current[name] for name in changes})
    return comment


def delete_comment(tx: Transaction, comment_id: str, user_id: str, if_match: str | None) -> Record:
    comment = _authored(tx, comment_id, user_id, if_match)
    bury(tx, COMMENTS, comment_id)
    tx.emit("comment.deleted", comment)
    return comment


def delete_comments_of(tx: Transaction, issue_id: str) -> None:
    """Remove an issue's comments along with it, whoever wrote them."""
    rows = tx.conn.execute(
        "SELECT * FROM comments WHERE issue_id = ? ORDER BY created_at, id", (issue_id,)
    ).fetchall()
    for row in rows:
        bury(tx, COMMENTS, row["id"])
        tx.emit("comment.deleted", COMMENTS.to_record(row))
