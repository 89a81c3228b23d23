"""The change log behind the inbox: what changed on the server in the issues that concern the
user, field by field, and the comments others added to them (docs/sync.md#change-log).

There is no notification API to ask, so the log is computed where the server copy is written:
`records.apply_page` tells a `Watch` which held rows it is about to change and which records
are new, before it writes; the watch reads the copies about to be replaced (only those of
issues that concern the user, or will once stored), and after the page is stored `note`
compares each with its new copy. A page read again unchanged costs nothing more (measured:
re-storing 20,000 unchanged issues took the same 0.9-1.1 s with and without the log).
A comment new to the cache is logged when its issue concerns the user and someone else wrote
it. "Concerns the user": assigned to them (before or after the change), created by this client
(`id_map`), or commented on by them (or by this client).

Not news, and never logged: a value our own outbox put there (a write that landed without its
answer being stored, or a pull that raced the push: an entry not failed whose change is the new
value, and either still on its way or made over the old value), a comment we wrote, and
whatever a first pull loads (only a pull that began with a cursor after a complete one says its
new records are news: `apply_prepared(news=True)`).

Bounded: values longer than `VALUE_CHARS` are not kept (the entry says the field changed), and
each write that logs something prunes entries seen more than `KEEP_SECONDS` ago and all but the
newest `KEEP_ENTRIES`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum

from cache import syncstate
from cache.models import JsonObject, JsonValue, Resource
from cache.records import Prepared
from cache.resources import SPECS, dumps, json_list, loads_object
from issuefields.frozen import Frozen

KEEP_SECONDS = 30 * 24 * 3600.0
"""Entries seen longer ago than this are pruned, read or not: a month, as settled outbox
entries (cache.sending.SETTLED_RETENTION)."""
KEEP_ENTRIES = 2_000
"""At most this many entries are kept (the newest): some 300 KB at the measured ~150 bytes an
entry, whatever the size of the workspace."""
VALUE_CHARS = 200
"""A value whose JSON is longer (a description) is not kept: the entry only says it changed."""
IGNORED = frozenset({"id", "number", "created_at", "updated_at"})
"""Members whose change is not news: they change with every edit, or never."""


class ChangeKind(StrEnum):
    FIELD = "field"
    """A member of the issue changed: `field`, `old` and `new`."""
    COMMENT = "comment"
    """Someone else commented: `field` is the comment's id, `new` the start of its body."""
    NEW_ISSUE = "new_issue"
    """A new issue assigned to the user: `new` is its title."""


class Change(Frozen):
    """One entry of the change log."""

    _fields = (
        "id",
        "issue_id",
        "kind",
        "field",
        "old",
        "new",
        "elided",
        "at",
        "who",
        "seen_at",
        "read",
    )
    __slots__ = _fields
    id: int
    issue_id: str
    kind: ChangeKind
    field: str
    old: JsonValue
    new: JsonValue
    elided: bool
    """The values were too long to keep (`VALUE_CHARS`)."""
    at: str | None
    """The server's time of the change (the record's `updated_at`, a comment's `created_at`)."""
    who: str | None
    """The user who made it, when the server says (a comment's author)."""
    seen_at: float
    """When the pull stored it (local clock)."""
    read: bool

    def __init__(
        self,
        id: int,
        issue_id: str,
        kind: ChangeKind,
        field: str,
        old: JsonValue,
        new: JsonValue,
        elided: bool,
        at: str | None,
        who: str | None,
        seen_at: float,
        read: bool,
    ) -> None:
        self._init(id, issue_id, kind, field, old, new, elided, at, who, seen_at, read)


_CONCERNS = """(
    i.assignee = :me
    OR EXISTS (SELECT 1 FROM id_map m WHERE m.resource = 'issues' AND m.server_id = i.id)
    OR EXISTS (SELECT 1 FROM comments o WHERE o.issue_id = i.id AND (o.author = :me
        OR EXISTS (SELECT 1 FROM id_map m WHERE m.resource = 'comments' AND m.server_id = o.id)))
)"""
"""An issue (`i`) that concerns the user."""


def me(conn: sqlite3.Connection) -> str | None:
    found = syncstate.get_state(conn, syncstate.ME_STATE_KEY)
    return found if isinstance(found, str) else None


class Watch:
    """What the log needs of one page, gathered by `records.apply_page` before it writes (it
    calls this with the rids of the held rows about to change and the ids of the new ones);
    `note` logs from it once the page is stored."""

    def __init__(self, resource: Resource, page: Sequence[Prepared], *, news: bool) -> None:
        self.resource = resource
        self.page = page
        self.news = news
        """Records new to the cache are news (an incremental pull's, not a first load's)."""
        self.issues: dict[str, JsonObject] = {}
        """The held issues about to change that concern the user, or will, as stored."""
        self.fresh: frozenset[str] = frozenset()
        """Ids new to the table."""

    def __call__(
        self, conn: sqlite3.Connection, changed: Sequence[int], fresh: Sequence[str]
    ) -> None:
        self.fresh = frozenset(fresh)
        if self.resource is not Resource.ISSUES or not changed:
            return
        user = me(conn)
        assignee_at = SPECS[Resource.ISSUES].column_names.index("assignee")
        becoming = json_list(
            record.key
            for record in self.page
            if user is not None and not record.tombstone and record.cells[assignee_at] == user
        )
        spec = SPECS[Resource.ISSUES]
        rows = conn.execute(
            f"SELECT {spec.record_columns} FROM issues i "
            "WHERE i.rid IN (SELECT value FROM json_each(:changed)) "
            f"AND (i.id IN (SELECT value FROM json_each(:becoming)) OR {_CONCERNS})",
            {"changed": dumps(list(changed)), "becoming": becoming, "me": user},
        )
        self.issues = {str(row[0]): spec.record_of(row) for row in rows}


def watch(resource: Resource, page: Sequence[Prepared], *, news: bool) -> Watch | None:
    """A watch for a page about to be stored; None when the page cannot hold news."""
    if resource is Resource.ISSUES or (resource is Resource.COMMENTS and news):
        return Watch(resource, page, news=news)
    return None


def note(
    conn: sqlite3.Connection,
    seen: Watch | None,
    now: float,
    *,
    ours: Mapping[str, Iterable[str]] | None = None,
) -> int:
    """After the page is stored: log what changed since `seen`; how many entries were made.
    `ours`: fields by issue id that our own writes just set (a landed write's answer)."""
    if seen is None or not (seen.issues or seen.fresh):
        return 0
    user = me(conn)
    if seen.resource is Resource.ISSUES:
        rows = _issue_changes(conn, seen, ours or {})
        rows += _new_issues(conn, seen, user)
    else:
        rows = _new_comments(conn, seen, user)
    if not rows:
        return 0
    conn.executemany(
        "INSERT INTO changes (issue_id, kind, field, old, new, elided, at, who, seen_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(*row, now) for row in rows],
    )
    prune(conn, now)
    return len(rows)


_Row = tuple[str, str, str, str | None, str | None, int, str | None, str | None]


def _value(value: JsonValue) -> tuple[str | None, bool]:
    """A value as stored (JSON text), and whether it was too long to keep."""
    if value is None:
        return None, False
    text = dumps(value)
    return (None, True) if len(text) > VALUE_CHARS else (text, False)


def _issue_changes(
    conn: sqlite3.Connection, seen: Watch, landed: Mapping[str, Iterable[str]]
) -> list[_Row]:
    if not seen.issues:
        return []
    spec = SPECS[Resource.ISSUES]
    rows = conn.execute(
        f"SELECT {spec.record_columns} FROM issues WHERE id IN (SELECT value FROM json_each(?))",
        (json_list(seen.issues),),
    )
    found: list[_Row] = []
    for row in rows:
        key, new = row[0], spec.record_of(row)
        old = seen.issues[str(key)]
        if new == old:
            continue
        ours = _our_writes(conn, str(key))
        just_set = set(landed.get(str(key), ()))
        stamp = new.get("updated_at")
        at = stamp if isinstance(stamp, str) else None
        for name in sorted((old.keys() | new.keys()) - IGNORED):
            was, now = old.get(name), new.get(name)
            if was == now or name in just_set or _is_ours(ours, name, was, now):
                continue
            (was_text, was_long), (now_text, now_long) = _value(was), _value(now)
            elided = int(was_long or now_long)
            found.append((str(key), ChangeKind.FIELD, name, was_text, now_text, elided, at, None))
    return found


_Ours = list[tuple[bool, dict[str, JsonValue], dict[str, JsonValue]]]


def _our_writes(conn: sqlite3.Connection, issue_id: str) -> _Ours:
    """This client's writes to an issue that may still explain a change: (still on its way,
    base, changes) of each entry that did not fail."""
    rows = conn.execute(
        "SELECT state, base, changes FROM outbox WHERE resource = 'issues' "
        "AND (record_id = ? OR server_id = ?) AND state != 'failed'",
        (issue_id, issue_id),
    )
    return [
        (str(state) != "done", loads_object(str(base)), loads_object(str(changes)))
        for state, base, changes in rows
    ]


def _is_ours(ours: _Ours, name: str, was: JsonValue, now: JsonValue) -> bool:
    """Our own write explains the change: it set this value, and it is either still on its way
    (the server may have it before we know) or was made over the value the copy still held
    (it landed without its answer being stored)."""
    return any(
        name in changes and changes[name] == now and (active or base.get(name) == was)
        for active, base, changes in ours
    )


def _new_issues(conn: sqlite3.Connection, seen: Watch, user: str | None) -> list[_Row]:
    """New issues assigned to the user, when new records are news."""
    if user is None or not seen.news or not seen.fresh:
        return []
    assignee_at = SPECS[Resource.ISSUES].column_names.index("assignee")
    fresh = [
        record
        for record in _newest(seen.page)
        if record.key in seen.fresh and record.cells[assignee_at] == user
    ]
    found: list[_Row] = []
    for record in fresh:
        if _made_here(conn, Resource.ISSUES, record.key):
            continue
        body = SPECS[Resource.ISSUES].record_of((record.key, *record.cells, record.text))
        title, long = _value(body.get("title"))
        found.append(
            (record.key, ChangeKind.NEW_ISSUE, "title", None, title, int(long), record.stamp, None)
        )
    return found


def _made_here(conn: sqlite3.Connection, resource: Resource, key: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM id_map WHERE resource = ? AND server_id = ?", (resource.value, key)
    ).fetchone()
    return row is not None


def _new_comments(conn: sqlite3.Connection, seen: Watch, user: str | None) -> list[_Row]:
    fresh = list(seen.fresh)
    if not fresh:
        return []
    rows = conn.execute(
        "SELECT c.id, c.issue_id, c.author, c.body, c.created_at FROM comments c "
        "JOIN issues i ON i.id = c.issue_id "
        "WHERE c.id IN (SELECT value FROM json_each(:fresh)) AND c.author IS NOT :me "
        "AND NOT EXISTS (SELECT 1 FROM id_map m WHERE m.resource = 'comments' "
        f"AND m.server_id = c.id) AND {_CONCERNS}",
        {"fresh": json_list(fresh), "me": user},
    )
    found: list[_Row] = []
    for key, issue_id, author, body, created_at in rows:
        start = str(body)[: VALUE_CHARS - 10]
        long = len(str(body)) > len(start)
        text = dumps(start + "…" if long else start)
        found.append(
            (str(issue_id), ChangeKind.COMMENT, str(key), None, text, 0, created_at, author)
        )
    return found


def _newest(page: Sequence[Prepared]) -> list[Prepared]:
    """One live record per id, the last one given (the page's own duplicates are rare)."""
    return list({record.key: record for record in page if not record.tombstone}.values())


def prune(conn: sqlite3.Connection, now: float) -> int:
    """Drop entries seen more than `KEEP_SECONDS` ago and all but the newest `KEEP_ENTRIES`."""
    gone = conn.execute("DELETE FROM changes WHERE seen_at < ?", (now - KEEP_SECONDS,)).rowcount
    row = conn.execute(
        "SELECT id FROM changes ORDER BY id DESC LIMIT 1 OFFSET ?", (KEEP_ENTRIES,)
    ).fetchone()
    if row is not None:
        gone += conn.execute("DELETE FROM changes WHERE id <= ?", (row[0],)).rowcount
    return gone


_COLUMNS = "id, issue_id, kind, field, old, new, elided, at, who, seen_at, read"


def _change(row: tuple[object, ...]) -> Change:
    key, issue_id, kind, name, old, new, elided, at, who, seen_at, read = row
    return Change(
        int(str(key)),
        str(issue_id),
        ChangeKind(str(kind)),
        str(name),
        _loads(old),
        _loads(new),
        bool(elided),
        None if at is None else str(at),
        None if who is None else str(who),
        float(str(seen_at)),
        bool(read),
    )


def _loads(text: object) -> JsonValue:
    if text is None:
        return None
    value: JsonValue = json.loads(str(text))
    return value


def entries(conn: sqlite3.Connection, *, unread_only: bool, limit: int) -> list[Change]:
    """Newest first."""
    where = "WHERE read = 0 " if unread_only else ""
    rows = conn.execute(f"SELECT {_COLUMNS} FROM changes {where}ORDER BY id DESC LIMIT ?", (limit,))
    return [_change(tuple(row)) for row in rows]


def after(conn: sqlite3.Connection, change_id: int) -> list[Change]:
    """Entries made after `change_id`, oldest first."""
    rows = conn.execute(f"SELECT {_COLUMNS} FROM changes WHERE id > ? ORDER BY id", (change_id,))
    return [_change(tuple(row)) for row in rows]


def latest(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT coalesce(max(id), 0) FROM changes").fetchone()
    return int(row[0])


def unread(conn: sqlite3.Connection) -> tuple[int, int]:
    """Unread entries, and the issues they belong to."""
    row = conn.execute(
        "SELECT count(*), count(DISTINCT issue_id) FROM changes WHERE read = 0"
    ).fetchone()
    return int(row[0]), int(row[1])


def mark_read(conn: sqlite3.Connection, issue_ids: Sequence[str] | None, up_to: int | None) -> int:
    """Mark the entries of `issue_ids` (every issue: None) read, those up to `up_to` only when
    given (what was shown, not what arrived since)."""
    sql = "UPDATE changes SET read = 1 WHERE read = 0"
    params: list[object] = []
    if issue_ids is not None:
        sql += " AND issue_id IN (SELECT value FROM json_each(?))"
        params.append(json_list(issue_ids))
    if up_to is not None:
        sql += " AND id <= ?"
        params.append(up_to)
    return conn.execute(sql, params).rowcount
