"""The user's default views right after the head (docs/sync.md#head-first): their open issues,
where the server filters lists by `assignee` and `status` (docs/api.md#list-filters) and says
who the user is (`/me`).

A filter is an optional feature a server may ignore rather than refuse, so the first page of
each query is checked: a record that does not match says the server does not filter, and the
views are left to the backfill (the page's records are stored all the same: they are current).
Each open status costs one request, and one more for the newest of a status with more than a
page of issues (keyset order: its last page, as the head's). The queries ask only for issues
updated within `VIEW_SPAN` times the head's span of time back from its newest record: in a
large workspace that is the newest few thousand issues, which holds the user's recent work with
one page per status, where the whole history cost two (the oldest page, then the newest); the
backfill brings the older ones. In a small one it is the whole history, as before.
"""

from __future__ import annotations

from typing import Any

from cache import Resource
from issuefields import STATUS, Tone
from sync.client import Response
from sync.models import Issue, Page
from sync.permissions import learn_from_me
from sync.pull import backfill_state as state
from sync.pull.context import ResourceRun
from sync.pull.head import last_page
from sync.pull.stamps import EPOCH, from_unix, sort_key

OPEN_STATUSES = tuple(
    reversed([choice.value for choice in STATUS.choices if choice.tone is not Tone.CLOSED])
)
"""The statuses of the default "my open issues" view (the field table's not closed ones),
furthest along the workflow first."""


VIEW_SPAN = 20
"""How many of the head's spans of time back from its newest record the views reach."""


async def pull_views(run: ResourceRun) -> str:
    """Pull the user's open issues; `done`, or `unsupported` when the server cannot say."""
    session = run.session
    if session.user is None:
        await learn_from_me(session, who=True)
    me = session.user
    if me is None:
        return "unsupported"
    since = _since(run)
    for status in OPEN_STATUSES:
        listing = await _list(run, me=me, status=status, page=1, since=since)
        items = list(listing.items)
        run.store(items, None)
        if any(not _matches(item.raw, me, status) for item in items):
            return "unsupported"
        total = listing.pagination.total
        if session.features.keyset_order and total is not None and not run.is_last(listing, 1):
            page, per_page = last_page(total, run.size)
            newest = await _list(run, me=me, status=status, page=page, size=per_page, since=since)
            run.store(list(newest.items), None)
    return "done"


def _since(run: ResourceRun) -> str:
    """The views' `updated_after`: `VIEW_SPAN` times the head's span of time back from its
    newest record (the incremental cursor; its oldest is the floor), or the epoch."""
    cache = run.session.cache
    floor, newest = state.floor(cache), cache.server.cursor(Resource.ISSUES)
    if floor is None or newest is None or floor.updated_at == EPOCH:
        return EPOCH
    top = sort_key(newest.updated_at).timestamp()
    oldest = sort_key(floor.updated_at).timestamp()
    start = top - VIEW_SPAN * max(1.0, top - oldest)
    return EPOCH if start <= 0 else from_unix(start, whole=False)


async def _list(
    run: ResourceRun, *, me: str, status: str, page: int, since: str, size: int | None = None
) -> Page[Issue]:
    """One filtered page, through the pull's own lister (its request class, its retries)."""
    lister: Any = run.list  # the client's `list_issues`, which takes the filters too

    async def attempt() -> Response[Page[Issue]]:
        run.report.requests += 1
        response: Response[Page[Issue]] = await lister(
            page=page,
            per_page=size or run.size,
            updated_after=since,
            assignee=me,
            status=status,
        )
        return response

    await run.after_the_keys()
    return (await run.retrier.run(attempt)).value


def _matches(raw: dict[str, Any], me: str, status: str) -> bool:
    return raw.get("assignee") == me and raw.get("status") == status
