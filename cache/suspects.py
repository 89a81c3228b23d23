"""Creates whose answer was lost: what the cache knows to tell their results from look-alikes.

When a create's answer is lost, the sync engine looks on the server for a record carrying what
it sent (`sync.push.reconcile`). On a server that keeps no `Idempotency-Key`, a record like it may
be the result of another local create (an identical sibling), or something a colleague made.
Three facts rule candidates out, and the cache holds all three:

- a record already mapped from a local create (`id_map`) is that write's result: a server
  record is the result of at most one local write, ever (`linked`);
- a record the cache held before the attempt existed before it (`note_seen`, taken each time a
  create is marked sending, and `seen`);
- and a record made before the attempt was sent, which the engine tells by its `created_at`.

When more look-alikes remain than creates that may have made them, the engine cannot tell
which, if any, is whose: the entry becomes `unsure`, with those records kept as its
`suspects`, until the user says "the same as this one" (`Cache.outbox.same_as`), "send it anyway"
(`send_anyway`) or discards it.

Where the server honours keys the engine asks the key instead, which needs the request an
attempt went out in: its own (its key and fields), or a bulk request's key and body, kept here
(`note_request`, `bulk_attempts`) while any entry sent in it is active.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from cache.models import ACTIVE_STATES, EntryState, JsonObject, Operation, OutboxEntry, Resource
from cache.outbox import get
from cache.outbox_life import transition
from cache.resources import KEY_COLUMNS, dumps, loads_object, stamp_order
from issuefields.frozen import Frozen

RECENT = 3600.0
"""Seconds back from an attempt within which a record the cache holds counts as made near it:
such a record may look, once someone else changed it, like the attempt's result altered, and
it cannot be (the cache held it before). An hour covers the window reconciling looks in
(seconds around the attempt, or eleven minutes each side when the server clock is unknown)."""
RECENT_LIMIT = 100
"""At most this many recent records are kept per create: an import of thousands an hour ago
would otherwise be copied into every create sent after it."""
_TABLES = {Resource.ISSUES: "issues", Resource.PROJECTS: "projects", Resource.COMMENTS: "comments"}


def note_seen(conn: sqlite3.Connection, entries: Iterable[OutboxEntry], now: float) -> None:
    """Keep, with each create about to be sent, the ids of the records the cache already holds
    that it could be taken for: those like it (same title, name, or body on the same issue),
    and those made within `RECENT` of now, which someone else may have changed since."""
    recent: dict[Resource, list[str]] = {}
    for entry in entries:
        if entry.operation is Operation.CREATE:
            if entry.resource not in recent:
                recent[entry.resource] = _recent(conn, entry.resource, now)
            found = {str(row[0]) for row in _alike(conn, entry)}
            found.update(recent[entry.resource])
            conn.execute(
                "UPDATE outbox SET seen = ? WHERE id = ?", (dumps(sorted(found)), entry.id)
            )


def _recent(conn: sqlite3.Connection, resource: Resource, now: float) -> list[str]:
    """Issues are found by their creation time's key (`issues_by_created` orders by it): every
    issue whose `created_at` text is at least `since` has a key at least `since`'s, and the
    text test then keeps exactly those."""
    since = datetime.fromtimestamp(now - RECENT, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    table = _TABLES[resource]
    where: str = "created_at >= ?"
    params: list[object] = [since]
    if resource is Resource.ISSUES:
        where = f"{KEY_COLUMNS['created_at']} >= ? AND {where}"
        params.insert(0, stamp_order(f"{since}.000000Z"))
    rows = conn.execute(
        f"SELECT id FROM {table} WHERE {where} ORDER BY created_at DESC LIMIT ?",
        (*params, RECENT_LIMIT),
    )
    return [str(row[0]) for row in rows]


ONE_BY_ONE = ""
"""`outbox.sent_in` of an entry whose last attempt was a request of its own (NULL: not known,
an attempt made before the column was)."""


class BulkAttempt(Frozen):
    """The bulk request an entry's last attempt went out in: its `Idempotency-Key`, its body
    exactly as sent, and the entry's operation's place in it."""

    _fields = ("key", "body", "index")
    __slots__ = _fields
    key: str
    body: JsonObject
    index: int

    def __init__(self, key: str, body: JsonObject, index: int) -> None:
        self._init(key, body, index)


def note_request(
    conn: sqlite3.Connection, entry_ids: Sequence[int], bulk: tuple[str, JsonObject] | None
) -> None:
    """Which request the entries' attempt goes out in: `bulk` (key, body), or None for one
    request each (their own key and fields). Bulk bodies no active entry names are dropped."""
    ids = dumps(list(entry_ids))
    key = ONE_BY_ONE if bulk is None else bulk[0]
    conn.execute(
        "UPDATE outbox SET sent_in = ? WHERE id IN (SELECT value FROM json_each(?))", (key, ids)
    )
    if bulk is not None:
        conn.execute(
            "INSERT OR REPLACE INTO bulk_requests (key, body, entries) VALUES (?, ?, ?)",
            (bulk[0], dumps(bulk[1]), ids),
        )
    active = "(" + ", ".join(f"'{state.value}'" for state in ACTIVE_STATES) + ")"
    conn.execute(
        "DELETE FROM bulk_requests WHERE key NOT IN (SELECT sent_in FROM outbox "
        f"WHERE sent_in IS NOT NULL AND sent_in != '' AND state IN {active})"
    )


def witness(conn: sqlite3.Connection, since: float) -> tuple[Resource, str, str | None] | None:
    """The create last sent since `since` that the server answered (done): its resource, its
    own key, and the bulk request's key when it went out in one."""
    row = conn.execute(
        "SELECT resource, idempotency_key, sent_in FROM outbox WHERE state = 'done' "
        "AND operation = 'create' AND sent_in IS NOT NULL AND sent_at >= ? "
        "ORDER BY sent_at DESC LIMIT 1",
        (since,),
    ).fetchone()
    if row is None:
        return None
    return Resource(row[0]), str(row[1]), None if row[2] == ONE_BY_ONE else str(row[2])


def attempts(conn: sqlite3.Connection, entry_ids: Iterable[int]) -> dict[int, BulkAttempt | None]:
    """For each entry whose last attempt is known: the bulk request it went out in, or None
    for its own request. Absent: attempted before the client kept this (or its bulk request
    was forgotten), which no key can be asked about."""
    rows = conn.execute(
        "SELECT o.id, o.sent_in, b.key, b.body, b.entries FROM outbox o LEFT JOIN bulk_requests b "
        "ON b.key = o.sent_in WHERE o.id IN (SELECT value FROM json_each(?)) "
        "AND o.sent_in IS NOT NULL",
        (dumps(list(entry_ids)),),
    )
    found: dict[int, BulkAttempt | None] = {}
    for entry_id, sent_in, key, body, entries in rows:
        if sent_in == ONE_BY_ONE:
            found[int(entry_id)] = None
            continue
        order = [] if entries is None else [int(value) for value in json.loads(str(entries))]
        if int(entry_id) in order:
            found[int(entry_id)] = BulkAttempt(
                str(key), loads_object(str(body)), order.index(int(entry_id))
            )
    return found


def _alike(conn: sqlite3.Connection, entry: OutboxEntry) -> Iterable[Any]:
    """Rows whose `id` may look like the result of `entry` (a superset of its fingerprint's
    matches: case and other fields are the engine's to compare)."""
    changes = entry.changes
    if entry.resource is Resource.ISSUES:
        title = changes.get("title")
        if isinstance(title, str):
            return conn.execute(
                "SELECT id FROM issues WHERE title = ? COLLATE NOCASE", (title.strip(),)
            )
    elif entry.resource is Resource.PROJECTS:
        name = changes.get("name")
        if isinstance(name, str):
            return conn.execute("SELECT id FROM projects WHERE trim(name) = ?", (name.strip(),))
    elif entry.resource is Resource.COMMENTS:
        body, issue = changes.get("body"), changes.get("issue_id")
        if isinstance(body, str) and isinstance(issue, str):
            return conn.execute(
                "SELECT id FROM comments WHERE issue_id = ? AND trim(body) = ?",
                (issue, body.strip()),
            )
    return ()


def seen(conn: sqlite3.Connection, entry_ids: Iterable[int]) -> dict[int, frozenset[str]]:
    """For each entry, the records the cache held like it when it was last marked sending."""
    rows = conn.execute(
        "SELECT id, seen FROM outbox WHERE id IN (SELECT value FROM json_each(?))",
        (dumps(list(entry_ids)),),
    )
    found: dict[int, frozenset[str]] = {}
    for entry_id, text in rows:
        ids = [] if text is None else json.loads(str(text))
        found[int(entry_id)] = frozenset(str(value) for value in ids)
    return found


def linked(conn: sqlite3.Connection, resource: Resource, server_ids: Iterable[str]) -> set[str]:
    """Which of `server_ids` some local create already made."""
    rows = conn.execute(
        "SELECT server_id FROM id_map WHERE resource = ? "
        "AND server_id IN (SELECT value FROM json_each(?))",
        (resource.value, dumps(list(server_ids))),
    )
    return {str(row[0]) for row in rows}


def mark_unsure(
    conn: sqlite3.Connection,
    entry_id: int,
    records: Sequence[Mapping[str, Any]],
    message: str,
    now: float,
) -> OutboxEntry:
    """A pending create that may have made one of `records`: kept, not sent, until the user
    says which (or none)."""
    transition(conn, entry_id, (EntryState.PENDING,), EntryState.UNSURE, now, error=message)
    conn.execute(
        "UPDATE outbox SET suspects = ? WHERE id = ?", (dumps([dict(r) for r in records]), entry_id)
    )
    return get(conn, entry_id)


def suspects(conn: sqlite3.Connection, entry_id: int) -> list[JsonObject]:
    """The records an `unsure` create may have made, as the server showed them then."""
    row = conn.execute("SELECT suspects FROM outbox WHERE id = ?", (entry_id,)).fetchone()
    if row is None or row[0] is None:
        return []
    values = json.loads(str(row[0]))
    return [value for value in values if isinstance(value, dict)]


def send_anyway(conn: sqlite3.Connection, entry_id: int, now: float) -> OutboxEntry:
    """The user says none of the suspects is this create's result: send it, without looking
    for it again (`not_applied`), as a new record."""
    entry = transition(
        conn, entry_id, (EntryState.UNSURE,), EntryState.PENDING, now, not_applied=True
    )
    conn.execute("UPDATE outbox SET suspects = NULL WHERE id = ?", (entry_id,))
    return entry
