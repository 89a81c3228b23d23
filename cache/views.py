"""The smaller effective views the TUI draws: one issue with its comments, picker values,
projects, users and the workspace.

Like the issue list, each is server rows with the overlay laid over them, so a record the
user just created, edited or deleted shows that way everywhere at once.
"""

from __future__ import annotations

import sqlite3

from cache import conflicts, outbox
from cache.models import (
    Cell,
    CommentRow,
    IssueDetail,
    JsonObject,
    ProjectRow,
    Resource,
    SyncState,
    UserRow,
    WorkspaceRow,
)
from cache.ordering import nocase_key, value_key
from cache.overlay import Effective, Overlay, effective_row, make_effective
from cache.resources import SPECS, as_int, labels_of, loads_object, rank_column, unknown_rank
from cache.schema import UNKNOWN_CHOICE_RANKS
from issuefields import Field, Kind


def _text(value: Cell) -> str | None:
    return None if value is None else str(value)


def _server_effective(resource: Resource, rid: int, key: str, record: JsonObject) -> Effective:
    return make_effective(resource, key, rid, rid, record, SyncState.SYNCED, ())


def _merged(
    conn: sqlite3.Connection,
    overlay: Overlay,
    resource: Resource,
    where: str,
    params: tuple[str, ...],
) -> list[Effective]:
    """Server rows selected by `where`, replaced or joined by the overlay's records."""
    local = overlay.of(resource)
    spec = SPECS[resource]
    rows = conn.execute(f"SELECT rid, {spec.record_columns} FROM {spec.table} {where}", params)
    merged = [
        _server_effective(resource, rid, row[0], spec.record_of(row))
        for rid, *row in rows
        if row[0] not in local
    ]
    return merged + [e for e in local.values() if e.record is not None]


def _comment(effective: Effective) -> CommentRow:
    values = effective.values
    return CommentRow(
        id=effective.id,
        issue_id=_text(values["issue_id"]),
        body=str(values["body"]),
        author=_text(values["author"]),
        created_at=_text(values["created_at"]),
        updated_at=_text(values["updated_at"]),
        sync_state=effective.sync_state,
        record=effective.record or {},
    )


def comments(conn: sqlite3.Connection, overlay: Overlay, issue_id: str) -> list[CommentRow]:
    found = [
        e
        for e in _merged(conn, overlay, Resource.COMMENTS, "WHERE issue_id = ?", (issue_id,))
        if e.values["issue_id"] == issue_id
    ]
    found.sort(key=lambda e: (value_key(e.values["created_at"]), e.order_rid))
    return [_comment(e) for e in found]


def issue_detail(conn: sqlite3.Connection, overlay: Overlay, issue_id: str) -> IssueDetail | None:
    effective = overlay.of(Resource.ISSUES).get(issue_id)
    if effective is None:
        spec = SPECS[Resource.ISSUES]
        row = conn.execute(
            f"SELECT rid, {spec.record_columns} FROM issues WHERE id = ?", (issue_id,)
        ).fetchone()
        if row is None:
            return None
        effective = _server_effective(Resource.ISSUES, row[0], issue_id, spec.record_of(row[1:]))
    if effective.record is None:
        return None
    entry_conflicts = [
        c for entry in effective.entries for c in conflicts.listing(conn, entry.id, True)
    ]
    return IssueDetail(
        issue=effective_row(effective),
        description=str(effective.values["description"]),
        record=effective.record,
        comments=tuple(comments(conn, overlay, issue_id)),
        entries=effective.entries,
        conflicts=tuple(entry_conflicts),
    )


def issue_id_by_number(conn: sqlite3.Connection, overlay: Overlay, number: int) -> str | None:
    """The id of the issue shown as `#number`: numbers are the server's, unique in a
    workspace, so the first by storage order wins should a stale copy share one. Overlaid
    issues count with their effective number, so one deleted locally is not found. A number
    beyond SQLite's integers is looked up by the float its column holds (`as_int`), then
    told from its neighbours by the exact value its record keeps."""
    held = as_int(number)
    exact = type(held) is int
    local = overlay.of(Resource.ISSUES)
    for effective in local.values():
        record = effective.record
        if (
            record is not None
            and effective.values["number"] == held
            and (exact or record.get("number") == number)
        ):
            return effective.id
    rows = conn.execute(
        "SELECT id, extra FROM issues INDEXED BY issues_by_number WHERE number = ? ORDER BY rid",
        (held,),
    )
    return next(
        (
            str(key)
            for key, extra in rows
            if key not in local and (exact or loads_object(extra).get("number") == number)
        ),
        None,
    )


def resolve_issue_ref(conn: sqlite3.Connection, overlay: Overlay, ref: str) -> list[str]:
    """The ids of the issues a user may mean by `ref`: `#42` is a number; bare digits are a
    number or an id (a server with only the published API may use numeric
    ids: docs/api.md#issues-and-ids), both when they name two issues;
    anything else is an id, server or local (one created offline is followed to its server
    id once it landed). Empty when no issue in the effective view matches."""
    text = ref.strip()
    digits = text.removeprefix("#")
    found: list[str] = []
    if digits.isdigit() and digits.isascii():
        by_number = issue_id_by_number(conn, overlay, int(digits))
        if by_number is not None:
            found.append(by_number)
        if text.startswith("#"):
            return found
    issue_id = outbox.resolve_id(conn, text)
    if issue_id not in found and _issue_shown(conn, overlay, issue_id):
        found.append(issue_id)
    return found


def _issue_shown(conn: sqlite3.Connection, overlay: Overlay, issue_id: str) -> bool:
    local = overlay.of(Resource.ISSUES).get(issue_id)
    if local is not None:
        return local.record is not None
    row = conn.execute("SELECT 1 FROM issues WHERE id = ?", (issue_id,)).fetchone()
    return row is not None


def projects(conn: sqlite3.Connection, overlay: Overlay) -> list[ProjectRow]:
    found = _merged(conn, overlay, Resource.PROJECTS, "", ())
    found.sort(key=lambda e: (nocase_key(e.values["name"]), e.order_rid))
    rows = []
    for e in found:
        values = e.values
        rows.append(
            ProjectRow(
                id=e.id,
                key=_text(values["key"]),
                name=str(values["name"]),
                description=str(values["description"]),
                state=_text(values["state"]),
                lead=_text(values["lead"]),
                created_at=_text(values["created_at"]),
                updated_at=_text(values["updated_at"]),
                sync_state=e.sync_state,
                record=e.record or {},
            )
        )
    return rows


def workspace(conn: sqlite3.Connection, overlay: Overlay) -> WorkspaceRow | None:
    """The workspace the cache knows (the key's one; the latest updated should a profile's
    key ever move), with a queued rename laid over it; None before it was ever read."""
    found = _merged(conn, overlay, Resource.WORKSPACES, "", ())
    if not found:
        return None
    latest = max(found, key=lambda e: (_text(e.values["updated_at"]) or "", e.order_rid))
    record = latest.record or {}
    plan = record.get("plan")
    return WorkspaceRow(
        id=latest.id,
        name=str(latest.values["name"]),
        plan=plan if isinstance(plan, str) else None,
        sync_state=latest.sync_state,
        entries=latest.entries,
        record=record,
    )


def users(conn: sqlite3.Connection) -> list[UserRow]:
    rows = conn.execute("SELECT id, name, email FROM users ORDER BY name COLLATE NOCASE, rid")
    return [UserRow(id=row[0], name=row[1], email=row[2]) for row in rows]


def _distinct(conn: sqlite3.Connection, table: str, column: str) -> list[str]:
    """Distinct non-null values by hopping along the index: one seek per value, not a scan."""
    rows = conn.execute(
        f"WITH RECURSIVE hop(v) AS (SELECT min({column}) FROM {table} "
        f"UNION ALL SELECT (SELECT min({column}) FROM {table} WHERE {column} > hop.v) "
        "FROM hop WHERE hop.v IS NOT NULL) SELECT v FROM hop WHERE v IS NOT NULL"
    )
    return [str(row[0]) for row in rows]


def _unknown_choices(conn: sqlite3.Connection, field: Field) -> set[str]:
    """The values of a choice field that its table does not list, present in the cache: by
    hopping along the partial index of those issues (schema step `issue_unknown_choices`)
    while the unknown rank is the one it indexed, else by reading those issues' rows."""
    name, rank = field.member, unknown_rank(field)
    if UNKNOWN_CHOICE_RANKS.get(name) == rank:
        among = f"issues INDEXED BY issues_unknown_{name} WHERE {rank_column(field)} = {rank}"
        rows = conn.execute(
            f"WITH RECURSIVE hop(v) AS (SELECT min({name}) FROM {among} "
            f"UNION ALL SELECT (SELECT min({name}) FROM {among} AND {name} > hop.v) "
            "FROM hop WHERE hop.v IS NOT NULL) SELECT v FROM hop WHERE v IS NOT NULL"
        )
        return {str(row[0]) for row in rows}
    rows = conn.execute(
        f"SELECT DISTINCT {name} FROM issues WHERE {rank_column(field)} = ? AND {name} IS NOT NULL",
        (rank,),
    )
    return {str(row[0]) for row in rows}


def distinct_values(conn: sqlite3.Connection, overlay: Overlay, field: Field) -> list[str | None]:
    """Picker values of a filterable field. A choice field lists every known value in the
    table's order, then unknown ones present; the others list values present, `None` last
    when some issue has none."""
    local = [e.record for e in overlay.of(Resource.ISSUES).values() if e.record is not None]
    name = field.member
    if field.kind is Kind.CHOICE:
        found = _unknown_choices(conn, field)
        found.update(v for v in (r.get(name) for r in local) if isinstance(v, str))
        return [*field.values, *sorted(found - set(field.values))]
    if field.kind is Kind.LABELS:
        values = set(_distinct(conn, "issue_labels", "label"))
        values.update(label for r in local for label in labels_of(r))
        return [*sorted(values)]
    values = set(_distinct(conn, "issues", name))
    values.update(v for v in (r.get(name) for r in local) if isinstance(v, str))
    has_none = any(r.get(name) is None for r in local) or _has_null(conn, name)
    return [*sorted(values), *([None] if has_none else [])]


def _has_null(conn: sqlite3.Connection, column: str) -> bool:
    return (
        conn.execute(f"SELECT 1 FROM issues WHERE {column} IS NULL LIMIT 1").fetchone() is not None
    )
