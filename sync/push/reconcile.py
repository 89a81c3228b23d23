"""Unknown outcomes: did the server apply a create whose answer never arrived?
(docs/sync.md#unknown-outcomes)

A create sent without a readable answer may exist on the server. Where the server answers for
its `Idempotency-Key`, it is asked so (`sync.push.replay`). Elsewhere the engine looks: it lists
what changed since the attempt began (server time, from the measured clock offset, less a
margin) and matches each create's *fingerprint*, the fields it sent, against records created
in that window.

A record like it is not necessarily its result (issue 15). On a server without keys, three
identical creates whose first was dropped before the server saw it found their two siblings'
records, and took one for the lost create's: one write silently gone. So a server record is
the result of at most one local write, ever. Never candidates:

- records a local create already made (linked to a local row: `Cache.push.linked`);
- records the cache held before the attempt (`Cache.push.seen_before`), or made before it was sent;
- records made well after the attempt ended (`LATE_APPLY` after the answer was given up on):
  a colleague's look-alike made an hour later is not this create's result.

The rest are matched to the creates that may have made them, one record to one create, per
group of creates and records that could be each other's. A group with no record: nothing was
applied, the creates go out again. As many records as creates or fewer: each record is a
create's result (a record a colleague made in the same seconds as ours, with the same fields,
cannot be told from ours without an author or a key: that is the limit). More records than
creates: which, if any, is whose cannot be told, so nothing is guessed: each create becomes
`unsure`, with the records it may have made, for the user to settle.

Listing pages are bounded by what changed in the window, which after a crash is usually
seconds. The window is listed with the margin the clock offset had before the listing, and
narrowed with the offset its answer measured.

Nothing like a create found, a record made in its window that no local write made, the cache
did not hold before the attempt, and that is like none of the creates, may be its result that
someone else changed since (issue 15's `altered`): the create is `unsure`, with those records,
rather than sent again. Where the server has tombstones, records deleted since the attempt
count too, unless the cache holds one as made outside the window.

A comment names its author: where the server says who the key's user is (`/me`), a look-alike
comment someone else wrote is never taken for ours.

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
from sync.models import Record, Tombstone
from sync.push.matching import Findings, settle
from sync.retry import Retrier
from sync.session import SyncSession, remember_features
from sync.timeutil import parse_timestamp

T = TypeVar("T")

KNOWN_OFFSET_MARGIN = 5.0
"""Seconds before the attempt to start looking, when the server clock offset is measured."""
UNKNOWN_OFFSET_MARGIN = 11 * 60.0
"""When it is not: sync stays correct with the local clock ±10 minutes off
(docs/sync.md#server-time)."""
PAGE_SIZE = 100
MAX_PAGES = 200
ALL_COMMENTS_REFUSALS = (Forbidden, InvalidRequest, NotFound, UnexpectedStatus)
"""How a server that lists comments only per issue refuses a listing of them all."""
ATTEMPT_LIMIT = 120.0
"""Seconds an attempt can have lasted: its end when it is not known (a run killed mid-request
is released only when the next run starts)."""
LATE_APPLY = 30.0
"""Seconds after the client gave up on a request within which a slow server may still apply
it: records made later than that are not its result."""


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
    deleted: bool = False,
) -> list[Record]:
    """Every record of `resource` changed after `since` (all of them when the server cannot
    filter by time), walking pages until a short one or the total; each page retried by
    `reads` when given, so a lost page costs one request rather than the listing. `deleted`:
    the records deleted since too, as `Tombstone`s, asked for as the pull asks (with
    `updated_after`, unless the server was seen refusing `include_deleted`)."""
    client = session.client
    if not session.features.updated_after:
        since = None
    size = min(session.features.page_size or PAGE_SIZE, PAGE_SIZE)
    refused = session.features.tombstones is False
    graves = True if deleted and since is not None and not refused else None
    found: list[Record] = []
    for page in range(1, MAX_PAGES + 1):

        async def one(page: int = page) -> Any:
            query: dict[str, Any] = {
                "page": page,
                "per_page": size,
                "updated_after": since,
                "include_deleted": graves,
            }
            if resource is Resource.ISSUES:
                return await client.list_issues(**query)
            if resource is Resource.PROJECTS:
                return await client.list_projects(**query)
            return await client.list_comments(parent, **query)

        answer = await read(reads, one)
        listing = answer.value
        found.extend(listing.items if graves else listing.data)
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
) -> Findings:
    """What became of each create (see the module docstring).

    One listing per group of `listings` covers all the entries; a refused listing of all
    comments falls back to one per issue.
    """
    found = Findings()
    for group in listings(session, entries):
        try:
            found.add(await _look(session, group, reads))
        except ALL_COMMENTS_REFUSALS:
            if group[0].resource is not Resource.COMMENTS or len(_parents(group)) < 2:
                raise
            for part in listings(session, group, all_comments=False):
                found.add(await _look(session, part, reads))
    return found


def _parents(group: Iterable[OutboxEntry]) -> set[str | None]:
    return {entry.parent_id for entry in group}


def listing_parent(group: Sequence[OutboxEntry]) -> str | None:
    """The issue whose comments one group of `listings` lists: None for all of them, or for
    issues and projects."""
    parents = _parents(group)
    if group[0].resource is Resource.COMMENTS and len(parents) == 1:
        return next(iter(parents))
    return None


async def _look(
    session: SyncSession, group: Sequence[OutboxEntry], reads: Retrier | None
) -> Findings:
    resource = group[0].resource
    parent = listing_parent(group)
    started = [entry.sent_at or entry.created_at for entry in group]
    since = server_time(session, min(started))
    # Only its author may change or delete a comment (docs/api.md#permissions): none of ours
    # is altered.
    altered = resource is not Resource.COMMENTS
    try:
        listed = await list_since(
            session, resource, since, parent=parent, reads=reads, deleted=altered
        )
    except InvalidRequest:
        if not altered or session.features.tombstones is not None:
            raise
        # Refused where `include_deleted` was never seen either way: when the listing without
        # it is answered, that was what the server refused (as the pull learns it).
        listed = await list_since(session, resource, since, parent=parent, reads=reads)
        session.features = session.features.replace(tombstones=False)
        remember_features(session)
    graves = [record for record in listed if isinstance(record, Tombstone)]
    listed = [record for record in listed if not isinstance(record, Tombstone)]
    if resource is Resource.COMMENTS:
        listed = await _written_by_us(session, group, listed, reads)
    candidates = _candidates(session, group, listed)
    if not altered:
        return settle(group, candidates, {})
    return settle(group, candidates, _altered(session, group, listed, graves, candidates))


async def _written_by_us(
    session: SyncSession,
    group: Sequence[OutboxEntry],
    listed: Sequence[Record],
    reads: Retrier | None,
) -> list[Record]:
    """The listed comments that may be ours: a comment's `author` is the user of the key that
    made it, which `/me` names where the server has it. A colleague's identical comment ("+1")
    made while ours was lost was otherwise taken for ours, and ours silently never sent."""
    alike = [r for r in listed if any(matches(e.changes, r.raw) for e in group)]
    if not session.features.me or not any(r.raw.get("author") for r in alike):
        return list(listed)
    if session.user is None:
        me = await read(reads, session.client.me)
        session.user = me.value.user.id if me.value.user is not None else None
    if session.user is None:
        return list(listed)
    return [r for r in listed if r.raw.get("author") in (None, session.user)]


def _candidates(
    session: SyncSession, group: Sequence[OutboxEntry], listed: Sequence[Record]
) -> dict[int, list[Record]]:
    """For each entry, the listed records that may be its result, oldest first."""
    alike = [r for r in listed if any(matches(e.changes, r.raw) for e in group)]
    if not alike:
        return {}
    taken = session.cache.push.linked(group[0].resource, [record.id for record in alike])
    seen = session.cache.push.seen_before([entry.id for entry in group])
    found: dict[int, list[Record]] = {}
    for entry in group:
        start, end = _window(session, entry)
        mine = [
            record
            for record in alike
            if record.id not in taken
            and record.id not in seen.get(entry.id, ())
            and (record.created_at is None or start <= record.created_at <= end)
            and matches(entry.changes, record.raw)
        ]
        if mine:
            found[entry.id] = sorted(mine, key=_age)
    return found


def _altered(
    session: SyncSession,
    group: Sequence[OutboxEntry],
    listed: Sequence[Record],
    graves: Sequence[Record],
    candidates: Mapping[int, list[Record]],
) -> dict[int, list[Record]]:
    """For each entry nothing like it was found for: the records that may still be its
    result, changed or deleted by someone else since (issue 15's `altered`). A listing cannot
    tell such a record from a colleague's: made in the attempt's window, linked to no local
    write, not held by the cache before the attempt, and like none of the group's creates.
    A deleted one (from a tombstone [ext], which says nothing of when it was made) counts
    unless the cache holds it as made outside the window."""
    if len(candidates) == len(group):
        return {}
    resource = group[0].resource
    alike = {record.id for records in candidates.values() for record in records}
    others = [
        record
        for record in [*listed, *graves]
        if record.id not in alike and not any(matches(e.changes, record.raw) for e in group)
    ]
    if not others:
        return {}
    taken = session.cache.push.linked(resource, [record.id for record in others])
    seen = session.cache.push.seen_before([entry.id for entry in group])
    found: dict[int, list[Record]] = {}
    for entry in group:
        if entry.id in candidates:
            continue
        start, end = _window(session, entry)
        maybe = [
            record
            for record in others
            if record.id not in taken
            and record.id not in seen.get(entry.id, ())
            and _made_within(session, resource, record, start, end)
        ]
        if maybe:
            found[entry.id] = sorted(maybe, key=_age)
    return found


def _made_within(
    session: SyncSession, resource: Resource, record: Record, start: datetime, end: datetime
) -> bool:
    if isinstance(record, Tombstone):
        held = session.cache.server.server_record(resource, record.id) or {}
        made = held.get("created_at")
        return not isinstance(made, str) or start <= parse_timestamp(made) <= end
    return record.created_at is not None and start <= record.created_at <= end


def _age(record: Record) -> tuple[bool, datetime]:
    """Oldest first; records without a creation time (the published API does not promise one)
    last."""
    created = record.created_at
    return created is None, created or datetime.max.replace(tzinfo=UTC)


def _window(session: SyncSession, entry: OutboxEntry) -> tuple[datetime, datetime]:
    """Server times within which the entry's last attempt can have made a record."""
    offset = session.limiter.offset
    margin = KNOWN_OFFSET_MARGIN if offset.known else UNKNOWN_OFFSET_MARGIN
    sent = entry.sent_at or entry.created_at
    ended = max(sent, min(entry.updated_at, sent + ATTEMPT_LIMIT))
    start = offset.to_server(sent) - margin
    end = offset.to_server(ended) + margin + LATE_APPLY
    return datetime.fromtimestamp(start, tz=UTC), datetime.fromtimestamp(end, tz=UTC)


def describe_suspects(records: Sequence[Mapping[str, Any]]) -> str:
    """The line an unsure create shows, "may be a duplicate: check #12, #13": the records as
    the user finds them (the number the server shows, a project's key, else the id)."""
    return "may be a duplicate: check " + ", ".join(record_label(record) for record in records)


def record_label(record: Mapping[str, Any]) -> str:
    """How a user finds a record: `#42` (the number the server shows), a project's key, else
    `#` and its id."""
    number, key = record.get("number"), record.get("key")
    if isinstance(number, int) and not isinstance(number, bool):
        return f"#{number}"
    if isinstance(key, str) and key:
        return key
    return f"#{record.get('id')}"
