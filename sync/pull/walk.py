"""Page walking (docs/sync.md#page-walking), for servers whose lists are not in sync order.

Offset pages shift when records move between them, so a walk is accepted only if
`pagination.total` stayed the same from its first page to its last; otherwise it walks again.
The cursor moves only when a walk is accepted, to the earlier of the newest record seen and the
server's `Date` at the start of the walk (anything edited during the walk is newer than that);
without `updated_at` on records, to that `Date`. Progress is saved after every page so that an
interrupted walk resumes at the next page.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from cache import Cursor
from sync.models import Record, Tombstone
from sync.pull.context import ResourceRun
from sync.pull.stamps import before, from_unix, resolution, sort_key

MAX_PASSES = 3
"""Walks before giving up on a stable `total` for this pull (the next pull tries again)."""


class Newest:
    """The newest `updated_at` seen, as the server wrote it, and whether any record lacked one."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.stamp: datetime | None = None
        self.ids: set[str] = set()
        self.missing = False

    def see(self, items: Iterable[Record | Tombstone]) -> None:
        for item in items:
            given = item.raw.get("updated_at")
            if item.updated_at is None or not isinstance(given, str):
                self.missing = True
                continue
            if self.stamp is None or item.updated_at > self.stamp:
                self.text, self.stamp, self.ids = given, item.updated_at, {item.id}
            elif item.updated_at == self.stamp:
                self.ids.add(item.id)

    def cursor(self, started: float) -> Cursor:
        """Where the next pull starts: never after the walk began (`started`, server time)."""
        whole = self.text is None or resolution(self.text).total_seconds() >= 1
        at_start = from_unix(started, whole=whole)
        if self.missing or self.text is None or self.stamp is None:
            return Cursor(at_start)
        if sort_key(at_start) < self.stamp:
            return Cursor(at_start)
        return Cursor(self.text, frozenset(self.ids))


def _state_key(run: ResourceRun) -> str:
    return f"pull_walk:{run.resource.value}"


async def walk_pass(run: ResourceRun, cursor: Cursor | None, *, filtered: bool) -> set[str] | None:
    """Walk every page after `cursor` (every page when not `filtered` or without a cursor).

    Returns the ids of the live records when an accepted walk covered the whole list in one
    go, for a delete sweep that costs nothing more; None otherwise.
    """
    since = before(cursor.updated_at) if filtered and cursor is not None else None
    for _ in range(MAX_PASSES):
        run.report.passes += 1
        accepted, ids = await _walk_once(run, since)
        if accepted:
            return ids if since is None else None
    run.report.note = "the list kept changing while it was walked; the next pull walks again"
    return None


async def _walk_once(run: ResourceRun, since: str | None) -> tuple[bool, set[str] | None]:
    key = _state_key(run)
    saved = run.session.cache.state.get(key)
    page_number: int = 1
    total: int | None = None
    started: float | None = None
    newest = Newest()
    if isinstance(saved, dict) and saved.get("since") == since:
        page_number = (_int(saved.get("page")) or 0) + 1
        total = _int(saved.get("total"))
        started = _float(saved.get("started"))
        previous = saved.get("newest")
        if isinstance(previous, str):
            newest.text, newest.stamp = previous, sort_key(previous)
        newest.missing = saved.get("missing") is True
    ids: set[str] = set()
    resumed = page_number > 1
    while True:
        response = await run.fetch(page=page_number, updated_after=since)
        listing = response.value
        if started is None:
            started = response.meta.date or run.session.limiter.server_now()
        if total is None:
            total = listing.pagination.total
        items = list(listing.items)
        newest.see(items)
        ids.update(item.id for item in items if not isinstance(item, Tombstone))
        ids.update(skipped.id for skipped in listing.skipped if skipped.id is not None)
        if run.is_last(listing, page_number):
            stable = listing.pagination.total == total
            run.store(items, newest.cursor(started) if stable else None)
            run.session.cache.state.set(key, None)
            run.tell(0)
            return stable, None if resumed else ids
        run.store(items, None)
        run.session.cache.state.set(
            key,
            {
                "since": since,
                "page": page_number,
                "total": total,
                "started": started,
                "newest": newest.text,
                "missing": newest.missing,
            },
        )
        run.tell(run.left(listing, page_number))
        page_number += 1


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
