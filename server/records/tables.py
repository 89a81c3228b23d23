"""Each resource's table and how one of its rows becomes an API record."""

from __future__ import annotations

import json
import sqlite3

from server.records.rows import Record, Table
from server.timestamps import format_micros


def _stamps(row: sqlite3.Row) -> Record:
    return {
        "created_at": format_micros(row["created_at"]),
        "updated_at": format_micros(row["updated_at"]),
    }


def workspace_record(row: sqlite3.Row) -> Record:
    return {"id": row["id"], "name": row["name"], "plan": row["plan"], **_stamps(row)}


def user_record(row: sqlite3.Row) -> Record:
    return {"id": row["id"], "name": row["name"], "email": row["email"], **_stamps(row)}


def issue_record(row: sqlite3.Row) -> Record:
    return {
        "id": row["id"],
        "number": row["number"],
        "title": row["title"],
        "description": row["description"],
        "status": row["status"],
        "priority": row["priority"],
        "assignee": row["assignee"],
        "project_id": row["project_id"],
        "labels": json.loads(row["labels"]),
        **_stamps(row),
    }


def project_record(row: sqlite3.Row) -> Record:
    return {
        "id": row["id"],
        "key": row["key"],
        "name": row["name"],
        "description": row["description"],
        "state": row["state"],
        "lead": row["lead"],
        **_stamps(row),
    }


def comment_record(row: sqlite3.Row) -> Record:
    return {
        "id": row["id"],
        "issue_id": row["issue_id"],
        "body": row["body"],
        "author": row["author"],
        **_stamps(row),
    }


WORKSPACES = Table("workspaces", "workspace", workspace_record, scope="id")
USERS = Table("users", "user", user_record)
ISSUES = Table("issues", "issue", issue_record)
PROJECTS = Table("projects", "project", project_record)
COMMENTS = Table("comments", "comment", comment_record)
