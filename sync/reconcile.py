"""Unknown outcomes: did the server apply a create whose answer never arrived? (SYNC.md 4)

A create sent without a readable answer may exist on the server. Resending it with the same
`Idempotency-Key` is safe only where the server honours keys, which cannot be probed; so before
any resend the engine looks: it lists what changed since the attempt began (server time, from
the measured clock offset, less a margin) and matches each create's *fingerprint*, the fields it
sent, against records created in that window. Each found record is claimed by one entry only,
so two identical creates are told apart by count.

Limits, by design: a record edited by someone else between the lost answer and this look no
longer matches, and would be created again on a server without idempotency. Listing pages are
bounded by what changed in the window, which after a crash is usually seconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from cache import OutboxEntry, Resource
from sync.models import Record
from sync.session import SyncSession

KNOWN_OFFSET_MARGIN = 5.0
"""Seconds before the attempt to start looking, when the server clock offset is measured."""
UNKNOWN_OFFSET_MARGIN = 11 * 60.0
"""When it is not: SYNC.md asks for correctness with the local clock ±10 minutes off."""
PAGE_SIZE = 100
MAX_PAGES = 200


def server_time(session: SyncSession, local: float) -> datetime:
    """A local time as the server's clock shows it, less a margin for the offset's error."""
    offset = session.limiter.offset
    margin = KNOWN_OFFSET_MARGIN if offset.known else UNKNOWN_OFFSET_MARGIN
    return datetime.fromtimestamp(offset.to_server(local) - margin, tz=UTC)


async def list_since(
    session: SyncSession,
    resource: Resource,
    since: datetime | str | None,
    *,
    parent: str | None = None,
) -> list[Record]:
    """Every record of `resource` changed after `since` (all of them when the server cannot
    filter by time), walking pages until a short one or the total."""
    client = session.client
    if not session.features.updated_after:
        since = None
    size = min(session.features.page_size or PAGE_SIZE, PAGE_SIZE)
    found: list[Record] = []
    for page in range(1, MAX_PAGES + 1):
        if resource is Resource.ISSUES:
            answer: Any = await client.list_issues(page=page, per_page=size, updated_after=since)
        elif resource is Resource.PROJECTS:
            answer = await client.list_projects(page=page, per_page=size, updated_after=since)
        else:
            answer = await client.list_comments(
                parent, page=page, per_page=size, updated_after=since
            )
        listing = answer.value
        found.extend(listing.data)
        total = listing.pagination.total
        if listing.received < size or (total is not None and page * size >= total):
            break
    return found


def matches(sent: Mapping[str, Any], record: Mapping[str, Any]) -> bool:
    """Whether `record` carries every field a create sent (as the server normalises them:
    trimmed text, labels as a set)."""
    return all(_same(value, record.get(name)) for name, value in sent.items())


def _same(mine: Any, theirs: Any) -> bool:
    if isinstance(mine, str) and isinstance(theirs, str):
        return mine.strip() == theirs.strip()
    if isinstance(mine, list) and isinstance(theirs, list):
        return sorted(map(str, mine)) == sorted(map(str, theirs))
    if mine == "" and theirs is None:
        return True
    return bool(mine == theirs)


async def find_applied_creates(
    session: SyncSession, entries: Sequence[OutboxEntry]
) -> dict[int, dict[str, Any]]:
    """The server record each create already made, by entry id; absent ones were not applied.

    One listing per resource (per parent issue for comments) covers all the entries.
    """
    found: dict[int, dict[str, Any]] = {}
    groups: dict[tuple[Resource, str | None], list[OutboxEntry]] = {}
    for entry in entries:
        parent = entry.parent_id if entry.resource is Resource.COMMENTS else None
        groups.setdefault((entry.resource, parent), []).append(entry)
    for (resource, parent), group in groups.items():
        started = [entry.sent_at or entry.created_at for entry in group]
        since = server_time(session, min(started))
        candidates = await list_since(session, resource, since, parent=parent)
        found.update(_claim(group, candidates, since))
    return found


def _claim(
    entries: Iterable[OutboxEntry], candidates: Sequence[Record], since: datetime
) -> dict[int, dict[str, Any]]:
    claimed: set[str] = set()
    found: dict[int, dict[str, Any]] = {}
    for entry in entries:
        for record in candidates:
            created = record.created_at
            if record.id in claimed or (created is not None and created < since):
                continue
            raw = record.raw
            if matches(entry.changes, raw):
                claimed.add(record.id)
                found[entry.id] = raw
                break
    return found
