"""Keyset paging (docs/sync.md#keyset-paging), for servers that sort `updated_after` lists by
(updated_at, id).

Every request asks for the records after a point in time, so records edited meanwhile move to
the end of what is still to read instead of shifting the pages. Each query starts one timestamp
step before the last record seen (the overlap), so records sharing that timestamp are not lost;
what was already seen is recognised by `(id, updated_at)`. When moving the point would bring
back a page of nothing new (a page full of one timestamp, or denser than a page), the engine
asks for the next page number of the same query instead, so it never loops.
"""

from __future__ import annotations

import asyncio
from bisect import bisect_right
from collections.abc import Sequence
from datetime import datetime
from itertools import takewhile
from typing import Any

from cache import Cursor
from sync.features import is_keyset_ordered
from sync.models import Page, Record, Tombstone
from sync.pull.ahead import Ahead
from sync.pull.context import ResourceRun
from sync.pull.stamps import EPOCH, before, sort_key
from sync.pull.writer import PageWriter
from sync.timeutil import format_timestamp


class OrderBroken(Exception):
    """A page was not in (updated_at, id) order: the server does not keep its sync order."""


class _Seen:
    """Records seen in this pass, by (id, updated_at), with their stamps in ascending order."""

    def __init__(self, cursor: Cursor | None) -> None:
        self.keys: set[tuple[str, datetime]] = set()
        self.stamps: list[datetime] = []
        if cursor is not None:
            stamp = sort_key(cursor.updated_at)
            for record_id in cursor.ids:
                self.add(record_id, stamp)

    def add(self, record_id: str, stamp: datetime) -> bool:
        key = (record_id, stamp)
        if key in self.keys:
            return False
        self.keys.add(key)
        self.stamps.append(stamp)
        return True

    def after(self, stamp: datetime) -> int:
        return len(self.stamps) - bisect_right(self.stamps, stamp)


class _Estimate:
    """Progress in records new to the pass: every query re-reads the records it overlaps (the
    timestamp before the last record seen), so what a query's `pagination.total` promises
    is what it has, less what this pass has already seen after its point in time."""

    def __init__(self, seen: _Seen) -> None:
        self._seen = seen
        self.fresh = 0
        self.expected: int | None = None

    def page(
        self,
        items: list[Record | Tombstone],
        since: str,
        page: int,
        listing: Page[Any],
        *,
        last: bool,
    ) -> tuple[int, int | None]:
        """Add a page's records to what was seen; (how many were new, the estimated total)."""
        already = self._seen.after(sort_key(since)) if page == 1 else 0
        fresh = 0
        for item in items:
            assert item.updated_at is not None
            fresh += self._seen.add(item.id, item.updated_at)
        total = listing.pagination.total
        if page == 1 and total is not None:
            self.expected = self.fresh + total - already
        self.fresh += fresh
        if last:
            self.expected = self.fresh
        return fresh, self.expected


async def keyset_pass(run: ResourceRun, cursor: Cursor | None) -> None:
    """Pull everything after `cursor`, saving the cursor with every group of pages.

    Raises `OrderBroken` before storing a page that is out of order; pages stored until then
    were in order, so their cursors are sound. The next page is requested before the current
    one is parsed (`sync.pull.ahead` guesses its query from the raw body; the guess is checked
    here) and stored in groups on the writer's thread (`sync.pull.writer`), so the server
    prepares the next page while the client parses this one and SQLite stores the group.
    """
    since = EPOCH if cursor is None else before(cursor.updated_at)
    seen = _Seen(cursor)
    estimate = _Estimate(seen)
    page_number = 1
    ahead = Ahead(
        run,
        lambda last, since, page, unseen: _next_query(run, seen, last, since, page, unseen),
    )
    async with PageWriter(run) as writer:
        pending = ahead.fetch(since, page_number)
        try:
            while True:
                listing = (await pending).value
                items = list(listing.items)
                check_order(items, since)
                last = run.is_last(listing, page_number)
                fresh, expected = estimate.page(items, since, page_number, listing, last=last)
                cursor = next_cursor(items, cursor)
                if not last:
                    assert cursor is not None
                    since, page_number = _next_query(
                        run, seen, cursor.updated_at, since, page_number
                    )
                    pending = ahead.fetch(since, page_number)
                    ahead.guessing = True
                await writer.submit(items, cursor if items else None, fresh, expected, last=last)
                if last:
                    await writer.drain()
                    return
        finally:
            await ahead.cancel()
            if not pending.done():
                pending.cancel()
                await asyncio.gather(pending, return_exceptions=True)


def _next_query(
    run: ResourceRun,
    seen: _Seen,
    last: str,
    since: str,
    page_number: int,
    unseen: Sequence[str] = (),
) -> tuple[str, int]:
    """Move the query to just before the last record (stamped `last`), unless that would
    bring back a page of records already seen: then ask for the next page of the same query.

    `unseen` are the stamps, ascending, of this page's records not yet added to `seen` (all
    of them when `sync.pull.ahead` guesses from the raw body before the page is parsed)."""
    moved = before(last)
    bound = sort_key(moved)
    if bound <= sort_key(since):
        return since, page_number + 1
    newer = sum(1 for _ in takewhile(lambda stamp: sort_key(stamp) > bound, reversed(unseen)))
    if seen.after(bound) + newer < run.size:
        return moved, 1
    return since, page_number + 1


def check_order(items: list[Record | Tombstone], since: str) -> None:
    ordered = is_keyset_ordered(items)
    first = items[0].updated_at if items else None
    if ordered is False or (items and (first is None or first <= sort_key(since))):
        raise OrderBroken("the server did not return records in (updated_at, id) order")


def next_cursor(items: list[Record | Tombstone], cursor: Cursor | None) -> Cursor | None:
    """The last record's own timestamp string, with every id seen at exactly that time."""
    if not items:
        return cursor
    last = items[-1]
    assert last.updated_at is not None
    given = last.raw.get("updated_at")
    text = given if isinstance(given, str) else format_timestamp(last.updated_at)
    ids = {item.id for item in items if item.updated_at == last.updated_at}
    if cursor is not None and sort_key(cursor.updated_at) == last.updated_at:
        ids |= cursor.ids
    return Cursor(text, frozenset(ids))
