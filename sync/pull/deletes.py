"""Deletes without tombstones (docs/sync.md#deletes): a count check, and a full id sweep when it
fails.

`updated_after` never returns a deleted record. A one-record list says how many records the
server holds; when that differs from the local count, every id is listed and whatever the
cache holds beyond them is dropped. The sweep is accepted only if `total` held still during
it: a deletion mid-sweep shifts the pages and would make a live record look gone.
"""

from __future__ import annotations

from sync.models import Tombstone
from sync.pull.context import ResourceRun

MAX_SWEEPS = 3


async def count_differs(run: ResourceRun) -> bool:
    """One request: does the server hold another number of records than the cache?"""
    response = await run.fetch(page=1, updated_after=None, per_page=1)
    total = response.value.pagination.total
    if total is None:
        run.report.note = "the server gives no total, so deletions are found only by --full"
        return False
    return total != run.session.cache.server.local_count(run.resource)


async def sweep(run: ResourceRun) -> None:
    """List every id (storing the fresh records on the way) and drop what was not listed."""
    run.begin_phase("sweep")
    for _ in range(MAX_SWEEPS):
        ids, stable = await _sweep_once(run)
        if stable:
            run.report.deleted += run.session.cache.server.delete_missing(
                run.resource, ids, swept_at=run.session.limiter.server_now()
            )
            run.report.swept = True
            return
    run.report.note = "the list kept changing during the id sweep; nothing was dropped"


async def sweep_with(run: ResourceRun, ids: set[str]) -> None:
    """Finish a sweep whose ids a whole-list walk already gathered."""
    run.report.deleted += run.session.cache.server.delete_missing(
        run.resource, ids, swept_at=run.session.limiter.server_now()
    )
    run.report.swept = True


async def _sweep_once(run: ResourceRun) -> tuple[set[str], bool]:
    ids: set[str] = set()
    page_number, total = 1, None
    while True:
        response = await run.fetch(page=page_number, updated_after=None)
        listing = response.value
        if page_number == 1:
            total = listing.pagination.total
        items = list(listing.items)
        ids.update(item.id for item in items if not isinstance(item, Tombstone))
        ids.update(skipped.id for skipped in listing.skipped if skipped.id is not None)
        run.store(items, None)
        run.tell(run.left(listing, page_number))
        if run.is_last(listing, page_number):
            return ids, listing.pagination.total == total
        page_number += 1
