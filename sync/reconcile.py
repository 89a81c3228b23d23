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

Comments are looked for with one listing of every comment where the server lists them without
an issue (`features.comments_list`), else (or when that listing is refused) one per issue: a
hundred doubtful comments on a hundred issues were a hundred listings, each one more chance
to fail on a lossy network. A comment's fingerprint names its issue, so one listing loses
nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from cache import OutboxEntry, Resource
from sync.errors import Forbidden, InvalidRequest, NotFound, UnexpectedStatus
from sync.models import Record
from sync.pull.retry import Retrier
from sync.session import SyncSession

T = TypeVar("T")

KNOWN_OFFSET_MARGIN = 5.0
"""Seconds before the attempt to start looking, when the server clock offset is measured."""
UNKNOWN_OFFSET_MARGIN = 11 * 60.0
"""When it is not: SYNC.md asks for correctness with the local clock ±10 minutes off."""
PAGE_SIZE = 100
MAX_PAGES = 200
ALL_COMMENTS_REFUSALS = (Forbidden, InvalidRequest, NotFound, UnexpectedStatus)
"""How a server that lists comments only per issue refuses a listing of them all."""


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
    reads: Retrier | None = None,
) -> list[Record]:
    """Every record of `resource` changed after `since` (all of them when the server cannot
    filter by time), walking pages until a short one or the total; each page retried by
    `reads` when given, so a lost page costs one request rather than the listing."""
    client = session.client
    if not session.features.updated_after:
        since = None
    size = min(session.features.page_size or PAGE_SIZE, PAGE_SIZE)
    found: list[Record] = []
    for page in range(1, MAX_PAGES + 1):

        async def one(page: int = page) -> Any:
            if resource is Resource.ISSUES:
                return await client.list_issues(page=page, per_page=size, updated_after=since)
            if resource is Resource.PROJECTS:
                return await client.list_projects(page=page, per_page=size, updated_after=since)
            return await client.list_comments(parent, page=page, per_page=size, updated_after=since)

        answer = await read(reads, one)
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


async def read(reads: Retrier | None, call: Callable[[], Awaitable[T]]) -> T:
    """`call` through `reads` when there is one, else once."""
    return await call() if reads is None else await reads.run(call)


def listings(
    session: SyncSession, entries: Iterable[OutboxEntry], *, all_comments: bool | None = None
) -> list[list[OutboxEntry]]:
    """The entries grouped by the listing that looks for them: one per resource, and for
    comments one in all where the server lists them so (`all_comments`, by default
    `features.comments_list`), else one per parent issue."""
    together = bool(session.features.comments_list) if all_comments is None else all_comments
    groups: dict[tuple[Resource, str | None], list[OutboxEntry]] = {}
    for entry in entries:
        per_issue = entry.resource is Resource.COMMENTS and not together
        groups.setdefault((entry.resource, entry.parent_id if per_issue else None), []).append(
            entry
        )
    return list(groups.values())


async def find_applied_creates(
    session: SyncSession, entries: Sequence[OutboxEntry], *, reads: Retrier | None = None
) -> dict[int, dict[str, Any]]:
    """The server record each create already made, by entry id; absent ones were not applied.

    One listing per group of `listings` covers all the entries; a refused listing of all
    comments falls back to one per issue.
    """
    found: dict[int, dict[str, Any]] = {}
    for group in listings(session, entries):
        try:
            found.update(await _look(session, group, reads))
        except ALL_COMMENTS_REFUSALS:
            if group[0].resource is not Resource.COMMENTS or len(_parents(group)) < 2:
                raise
            for part in listings(session, group, all_comments=False):
                found.update(await _look(session, part, reads))
    return found


def _parents(group: Iterable[OutboxEntry]) -> set[str | None]:
    return {entry.parent_id for entry in group}


async def _look(
    session: SyncSession, group: Sequence[OutboxEntry], reads: Retrier | None
) -> dict[int, dict[str, Any]]:
    resource = group[0].resource
    parents = _parents(group)
    parent = next(iter(parents)) if resource is Resource.COMMENTS and len(parents) == 1 else None
    started = [entry.sent_at or entry.created_at for entry in group]
    since = server_time(session, min(started))
    candidates = await list_since(session, resource, since, parent=parent, reads=reads)
    return _claim(group, candidates, since)


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
