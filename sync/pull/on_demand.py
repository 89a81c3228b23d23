"""What the user opens, fetched at once (docs/sync.md#head-first): the comments of an issue
while the bulk comment pull still waits for the issues' backfill, or on a server that lists
comments only per issue.

A user's request, not background work: it goes before the backfill's next request (the
limiter serves the user's waiters first) and never counts against the backfill's share. One
request for up to 100 comments; an issue with more takes a page each. A complete, stable walk
also drops the issue's comments the server no longer lists.
"""

from __future__ import annotations

from cache import Resource
from sync.models import Tombstone
from sync.session import SyncSession

PAGE = 100


async def issue_comments(session: SyncSession, issue_id: str) -> int:
    """Fetch and store every comment of `issue_id` now; how many the server listed."""
    client = session.client
    seen: set[str] = set()
    page, total = 1, None
    while True:
        listing = (await client.list_comments(issue_id, page=page, per_page=PAGE)).value
        if page == 1:
            total = listing.pagination.total
        items = [item for item in listing.items if not isinstance(item, Tombstone)]
        session.cache.server.apply_page(Resource.COMMENTS, [item.raw for item in items])
        seen.update(item.id for item in items)
        size = listing.pagination.per_page or PAGE
        done = listing.received < size or (
            listing.pagination.total is not None and page * size >= listing.pagination.total
        )
        if done:
            break
        page += 1
    if total is not None and total == listing.pagination.total:
        session.cache.server.delete_missing(Resource.COMMENTS, seen, issue_id=issue_id)
    return len(seen)


def wanted(session: SyncSession) -> bool:
    """Whether an opened issue's comments need fetching now: the bulk pull has not brought
    them (a backfill is pending) or never will (the server does not list all comments)."""
    from sync.backfill_progress import pending

    return session.features.comments_list is not True or pending(session.cache)
