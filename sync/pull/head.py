"""Head first (docs/sync.md#head-first): on a cold start, the most recently updated issues
before any other, so the list shows this week's work within a request or two, whatever the
workspace's size.

Keyset order: the first request is the backfill's first page (`updated_after` the epoch,
oldest first), stored with the backfill cursor; its `pagination.total` says how many issues
there are, so the second asks the same query's last page, with a page size chosen to hold 50
to 100 records: the newest. Its oldest record becomes the floor, its newest the incremental
cursor. Two requests, both of which read records nothing else will read again; one on a first
start, whose features' probe listed that very first page a moment before (`ProbePage`).

Page walking: the order of a page is unknown, so the head is a window of time instead:
`updated_after = now - w`, with `w` narrowed or widened from the density the first page
showed until the window holds one to a few pages, then walked. The first request is the
whole list's first page, which the backfill's walk then skips.

A workspace whose whole list fits in `SMALL` records gets no head: the ordinary pull reads it
in as many requests.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from cache import Cursor
from sync.client import Response
from sync.models import Page, Record, Tombstone
from sync.probe import PROBE_PAGE_SIZE
from sync.pull import backfill_state as state
from sync.pull.backfill import KEYSET_KEY
from sync.pull.context import ResourceRun
from sync.pull.keyset import check_order, keyset_pass, next_cursor
from sync.pull.stamps import EPOCH, before, from_unix, resolution, sort_key
from sync.pull.walk import Newest, walk_pass
from sync.timeutil import format_timestamp

HEAD_MIN = 50
"""Fewest records a head holds (when the workspace has that many): a screen of the list."""
HEAD_TARGET = 200
"""What a page-walking head's window aims at."""
HEAD_MAX = 500
"""Most records a page-walking head's window may hold before it is narrowed."""
SMALL = 300
"""A list this small is pulled whole, oldest first, as on a warm start."""
WINDOW_TRIES = 5
"""Windows tried before a page-walking head gives up and walks the whole list."""


async def head_first(run: ResourceRun) -> bool:
    """Pull the head of the issues on a cold start; True when a backfill is left to do (the
    floor is set), False when the whole list was pulled here."""
    state.save_progress(run.session.cache, state.BackfillProgress())
    if run.session.features.keyset_order:
        return await _keyset_head(run)
    return await _walk_head(run)


async def _first_page(run: ResourceRun, since: str, resume: Cursor | None) -> Response[Page[Any]]:
    """The oldest page: the features' probe's, when this session probed with the same query
    (a whole page with tombstones from the epoch, the head's own page size), so a first start
    asks one request fewer; else fetched. Taken once: a later start asks afresh."""
    session = run.session
    probed, session.probe_page = session.probe_page, None
    same = resume is None and run.tombstones is True and run.size == PROBE_PAGE_SIZE
    if probed is not None and same:
        return run.adopt(probed.response, page=1, asked=PROBE_PAGE_SIZE, per_page=None)
    return await run.fetch(page=1, updated_after=since)


def last_page(total: int, size: int) -> tuple[int, int]:
    """(page, per_page) of the page of a query of `total` records that ends it and holds
    between `HEAD_MIN` and `size` records: page offsets are multiples of the page size, so
    the size is chosen to leave a remainder that fills a screen."""
    floor = min(HEAD_MIN, max(1, size // 2))
    for per_page in range(size, floor - 1, -1):
        rest = total % per_page or per_page
        if rest >= floor:
            return math.ceil(total / per_page), per_page
    return math.ceil(total / size), size


async def _keyset_head(run: ResourceRun) -> bool:
    cache = run.session.cache
    resume = state.backfill_cursor(cache)
    since = EPOCH if resume is None else before(resume.updated_at)
    first = (await _first_page(run, since, resume)).value
    items = list(first.items)
    check_order(items, since)
    total = first.pagination.total
    if total is None or total <= SMALL or run.is_last(first, 1):
        # Nothing worth a head: the ordinary pass, on from this page.
        state.set_floor(cache, None)
        cursor = next_cursor(items, resume)
        run.store(items, cursor)
        if not run.is_last(first, 1):
            await keyset_pass(run, cursor)
        return False
    run.store(items, next_cursor(items, resume), scope=state.BACKFILL)
    cache.state.set(KEYSET_KEY, {"left": total - len(items)})
    page, per_page = last_page(total, run.size)
    newest = list((await run.fetch(page=page, updated_after=since, per_page=per_page)).value.items)
    check_order(newest, since)
    live = [item for item in newest if item.updated_at is not None]
    if not live or sort_key(since) >= live[0].updated_at:  # type: ignore[operator]
        await keyset_pass(run, resume)
        return False
    oldest = live[0]
    state.set_floor(cache, Cursor(_text(oldest), frozenset({oldest.id})))
    run.store(newest, next_cursor(newest, None))
    expected = max(0, total - len(newest) - len(items))
    state.save_progress(
        cache,
        state.BackfillProgress(
            expected=expected + len(items), received=len(items), head=len(newest)
        ),
    )
    run.tell(0)
    return True


async def _walk_head(run: ResourceRun) -> bool:
    cache = run.session.cache
    cache.state.set(state.WALK_KEY, None)
    began = run.session.limiter.server_now()
    response = await run.fetch(page=1, updated_after=None)
    first = response.value
    items = list(first.items)
    total = first.pagination.total
    if total is None or total <= SMALL or run.is_last(first, 1):
        await walk_pass(run, None, filtered=False)
        return False
    run.store(items, None)
    cache.state.set(state.WALK_KEY, {"page": 1, "total": total})
    now = run.session.limiter.server_now()
    stamps = [item.updated_at.timestamp() for item in items if item.updated_at is not None]
    if not stamps or not run.session.features.updated_after:
        _whole_list(run, items, began)
        return True
    span = max(1.0, now - min(stamps))
    window = span * HEAD_TARGET / total
    low, high = 0.0, span  # windows known to hold too few, too many
    for _ in range(WINDOW_TRIES):
        start = format_timestamp(datetime.fromtimestamp(now - window, UTC))
        began = run.session.limiter.server_now()
        listing = (await run.fetch(page=1, updated_after=start)).value
        found = listing.pagination.total
        if found is None:
            break
        if HEAD_MIN <= found <= HEAD_MAX or (found < HEAD_MIN and window >= span):
            await _walk_window(run, start, began, list(listing.items), run.is_last(listing, 1))
            state.save_progress(cache, state.BackfillProgress(expected=total, received=len(items)))
            return True
        if found < HEAD_MIN:
            low = window
        else:
            high = window
        window = _next_window(window * HEAD_TARGET / max(1, found), low, high)
    _whole_list(run, items, began)
    state.save_progress(cache, state.BackfillProgress(expected=total, received=len(items)))
    return True


async def _walk_window(
    run: ResourceRun, start: str, began: float, first: list[Record | Tombstone], last: bool
) -> None:
    """Store the window's pages and set the floor at its start and the incremental cursor as
    a page walk does (never after the walk `began`, server time)."""
    cache = run.session.cache
    state.set_floor(cache, Cursor(start))
    newest = Newest()
    newest.see(first)
    run.store(first, None)
    page = 1
    while not last:
        page += 1
        listing = (await run.fetch(page=page, updated_after=start)).value
        items = list(listing.items)
        newest.see(items)
        run.store(items, None)
        last = run.is_last(listing, page)
    run.store([], newest.cursor(began))
    run.tell(0)


def _next_window(guess: float, low: float, high: float) -> float:
    """The density's guess when it lies between the windows known too small and too large,
    else halfway between them: records are seldom spread evenly over time."""
    if low < guess < high:
        return guess
    return (low + high) / 2


def _whole_list(run: ResourceRun, items: list[Record | Tombstone], began: float) -> None:
    """No window of a few pages: the backfill's walk is the whole pull, and the incremental
    pull reads what changes from the moment it `began` (server time)."""
    texts = [item.raw.get("updated_at") for item in items]
    whole = all(resolution(text).total_seconds() >= 1 for text in texts if isinstance(text, str))
    state.set_floor(run.session.cache, Cursor(EPOCH))
    run.store([], Cursor(from_unix(began, whole=whole)))


def _text(item: Record | Tombstone) -> str:
    given = item.raw.get("updated_at")
    assert item.updated_at is not None
    return given if isinstance(given, str) else format_timestamp(item.updated_at)
