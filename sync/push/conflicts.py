"""Per-field conflicts before an edit is sent (docs/sync.md#conflicts): never a silent overwrite.

Two ways to know the server's current value of the fields an edit changes:

- ETag servers, one record at a time: GET the record (fresh values and its tag), compare, then
  PATCH with `If-Match`; a 412 means someone wrote in between, so fetch and compare again.
  No window exists in which another writer's change could be overwritten.
- Otherwise (a server without ETags, or edits sent through the bulk endpoint, which takes no
  preconditions): one listing of what changed since the cache's copy (the pull's cursor, else
  the oldest copy among the targets) brings those copies up to date, and each edit's fields
  are compared with it. One request whatever the number of edits; the window between that
  listing and the write is the cost of a server without preconditions.

In both, a field whose server value left the edit's base for something other than the user's
value is a conflict (recorded for the user: keep mine / take theirs). Only those fields wait:
the edit's other fields are split off and go out at once (`Cache.push.park_conflicts`), and since
a PATCH carries only the changed fields, whatever others changed elsewhere in the record stays
as they left it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cache import FieldConflict, OutboxEntry, Resource
from sync.errors import NotFound
from sync.push.reconcile import list_since, read
from sync.retry import Retrier
from sync.session import SyncSession


async def refresh(
    session: SyncSession, entries: Sequence[OutboxEntry], *, reads: Retrier | None = None
) -> None:
    """Bring the cache's copy of every entry's target up to date with the server; each read
    retried by `reads` when given."""
    cache = session.cache
    groups: dict[tuple[Resource, str | None], list[OutboxEntry]] = {}
    for entry in entries:
        parent = entry.parent_id if entry.resource is Resource.COMMENTS else None
        groups.setdefault((entry.resource, parent), []).append(entry)
    for (resource, parent), group in groups.items():
        since = _since(session, resource, group)
        if since is None and resource is not Resource.COMMENTS:
            await _fetch_each(session, resource, group, reads)
            continue
        changed = await list_since(session, resource, since, parent=parent, reads=reads)
        if changed:
            cache.server.apply_page(resource, [record.raw for record in changed])


def _since(session: SyncSession, resource: Resource, group: Sequence[OutboxEntry]) -> str | None:
    """Where the cache's knowledge ends: the pull's cursor, else the oldest copy's stamp.
    None for the workspace, which is read by itself (one record, never pulled)."""
    if not session.features.updated_after or resource is Resource.WORKSPACES:
        return None
    cursor = session.cache.server.cursor(resource) if resource is not Resource.COMMENTS else None
    if cursor is not None:
        return cursor.updated_at
    stamps: list[str] = []
    for entry in group:
        copy = session.cache.server.server_record(resource, entry.target_id) or {}
        stamp = copy.get("updated_at")
        if not isinstance(stamp, str):
            return None
        stamps.append(stamp)
    return min(stamps) if stamps else None


async def _fetch_each(
    session: SyncSession, resource: Resource, group: Sequence[OutboxEntry], reads: Retrier | None
) -> None:
    found: list[dict[str, Any]] = []
    for entry in group:
        try:
            record = await fetch(session, resource, entry.target_id, reads=reads)
        except NotFound:
            continue
        found.append(record[0])
    if found:
        session.cache.server.apply_page(resource, found)


async def fetch(
    session: SyncSession, resource: Resource, record_id: str, *, reads: Retrier | None = None
) -> tuple[dict[str, Any], str | None]:
    """One record as the server holds it now, and its ETag when the server sent one."""
    client = session.client
    if resource is Resource.WORKSPACES:
        workspace = await read(reads, lambda: client.get_workspace(record_id))
        return workspace.value.raw, workspace.meta.etag
    if resource is Resource.PROJECTS:
        project = await read(reads, lambda: client.get_project(record_id))
        return project.value.raw, project.meta.etag
    issue = await read(reads, lambda: client.get_issue(record_id))
    return issue.value.raw, issue.meta.etag


def current(session: SyncSession, entry: OutboxEntry) -> dict[str, Any] | None:
    """The cache's copy of the entry's target, after `refresh`."""
    return session.cache.server.server_record(entry.resource, entry.target_id)


def detect(
    session: SyncSession, entry: OutboxEntry, server_record: dict[str, Any]
) -> list[FieldConflict]:
    return session.cache.push.detect_conflicts(entry, server_record)
