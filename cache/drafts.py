"""Drafts: what the user typed and has not sent yet (a comment, an issue form), kept as they
type so that closing the app, or the app being killed, loses none of it.

A draft is a JSON object under a key the app chooses ("comment:<issue id>", "issue:new",
"issue:<issue id>"). It is local only: the sync engine never reads it, and a reset of the
server copy leaves it alone. A draft is dropped when the write it became is queued, or when the
user discards it. A key ending in ":<record id>" follows its record when the record's offline
id gives way to the server's (`follow`): a comment begun on an issue created offline is found
again once that issue is on the server.
"""

from __future__ import annotations

import json
import sqlite3

from cache.models import JsonObject
from cache.resources import dumps


def save(conn: sqlite3.Connection, key: str, value: JsonObject, at: float) -> None:
    conn.execute(
        "INSERT INTO drafts (key, value, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        (key, dumps(value), at),
    )


def load(conn: sqlite3.Connection, key: str) -> JsonObject | None:
    row = conn.execute("SELECT value FROM drafts WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    value = json.loads(row[0])
    return value if isinstance(value, dict) else None


def discard(conn: sqlite3.Connection, key: str) -> None:
    conn.execute("DELETE FROM drafts WHERE key = ?", (key,))


def follow(conn: sqlite3.Connection, local_id: str, server_id: str) -> None:
    """Move the drafts of a record created offline to the id the server gave it."""
    suffix = ":" + local_id
    conn.execute(
        "UPDATE OR REPLACE drafts SET key = substr(key, 1, length(key) - ?) || ? "
        "WHERE key LIKE '%' || ?",
        (len(local_id), server_id, suffix),
    )
