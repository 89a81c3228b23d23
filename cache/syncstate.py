"""What the sync engine remembers between runs: cursors, sweep times and free-form state.

Cursors and sweep times describe the server copy, so `reset_server_copy` wipes them with it;
everything under `Cache.state` (clock offset, plan and limits, detected server
features) describes the server itself and survives a reset.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from cache.models import Cursor, JsonValue, Resource

if TYPE_CHECKING:
    import sqlite3

CLOCK_OFFSET_KEY = "server_clock_offset"
ME_STATE_KEY = "me_user_id"
"""The current user's id, learnt from the server (`/me`) at login or sync: whose issues are
"mine", and whose changes are not news (cache.changelog)."""


def cursor_key(resource: Resource, scope: str) -> str:
    return f"{resource.value}:{scope}" if scope else resource.value


def get_state(conn: sqlite3.Connection, key: str) -> JsonValue:
    row = conn.execute("SELECT value FROM sync_state WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    value: JsonValue = json.loads(row[0])
    return value


def set_state(conn: sqlite3.Connection, key: str, value: JsonValue) -> None:
    if value is None:
        conn.execute("DELETE FROM sync_state WHERE key = ?", (key,))
        return
    conn.execute(
        "INSERT INTO sync_state (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, _dumps(value)),
    )


def clock_offset(conn: sqlite3.Connection) -> float:
    value = get_state(conn, CLOCK_OFFSET_KEY)
    return float(value) if isinstance(value, int | float) else 0.0


def get_cursor(conn: sqlite3.Connection, key: str) -> Cursor | None:
    row = conn.execute("SELECT updated_at, ids FROM cursors WHERE key = ?", (key,)).fetchone()
    if row is None or row[0] is None:
        return None
    return Cursor(row[0], frozenset(json.loads(row[1])))


def set_cursor(conn: sqlite3.Connection, key: str, cursor: Cursor | None) -> None:
    updated_at = None if cursor is None else cursor.updated_at
    ids = "[]" if cursor is None else _dumps(sorted(cursor.ids))
    conn.execute(
        "INSERT INTO cursors (key, updated_at, ids) VALUES (?, ?, ?) "
        "ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at, ids = excluded.ids",
        (key, updated_at, ids),
    )


def last_full_sweep(conn: sqlite3.Connection, key: str) -> float | None:
    row = conn.execute("SELECT swept_at FROM cursors WHERE key = ?", (key,)).fetchone()
    return None if row is None or row[0] is None else float(row[0])


def set_last_full_sweep(conn: sqlite3.Connection, key: str, at: float) -> None:
    conn.execute(
        "INSERT INTO cursors (key, swept_at) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET swept_at = excluded.swept_at",
        (key, at),
    )


def _dumps(value: object) -> str:
    """`cache.resources.dumps`, imported when a value is first written: this module is
    imported for its keys by commands that open no cache (`tracker-tui --help`), and orjson
    brings uuid and platform with it (docs/architecture.md#start-up)."""
    from cache.resources import dumps

    return dumps(value)
