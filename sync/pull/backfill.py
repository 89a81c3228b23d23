"""The backfill (docs/sync.md#head-first): every issue below the head, oldest first, up to the
floor, a page at a time, resumable after a kill, a yield or the end of the day's budget.

Keyset order: each request asks for the records after the backfill cursor (one timestamp
step before it, as every keyset query), stores its page with the cursor in one transaction,
and ends on the page that reaches the floor. That last request asks only for what is left
below the floor (its query's total, less the records the head and the pulls since hold above
it), plus one, so the records above the floor are not read twice. Page walking: the whole
list's pages, in the server's order, from where the walk stood.

Background work spends at most its share of the day (`BACKFILL_SHARE` of the background
budget: the rest is the polls'); when that is spent the backfill stops and says when it
resumes: when the oldest of its requests have left the day's sliding window. The user's own
requests (opening an issue, a search, writes) are never counted against it and go first.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from cache import CacheError, Resource
from sync.backfill_progress import BACKFILL_SHARE
from sync.models import Record, Tombstone
from sync.pull import backfill_state as state
from sync.pull.context import ResourceRun
from sync.pull.keyset import OrderBroken, check_order, next_cursor
from sync.pull.stamps import EPOCH, before, sort_key
from sync.ratelimit.give_way import GaveWay, giving_way
from sync.session import remember_features


class Stop(StrEnum):
    """Why a backfill step returned."""

    DONE = "done"
    YIELDED = "yielded"
    BUDGET = "budget"


@dataclass(frozen=True)
class StepReport:
    stop: Stop
    requests: int
    received: int
    resumes_at: float | None = None
    """Local Unix time the backfill may go on, when the budget stopped it."""


async def backfill(
    run: ResourceRun,
    *,
    should_yield: Callable[[], bool] = lambda: False,
    budgeted: bool = False,
    give_way: asyncio.Event | None = None,
) -> StepReport:
    """Go on with the backfill until it meets the floor, `should_yield()` says the caller has
    more pressing work (checked before every request), or, when `budgeted`, the day's share
    of background requests is spent. `give_way` set while a request waits in the limiter for
    its slot stops it there, unsent (sync.ratelimit.give_way): what the user asked for then
    waits for no backfill request at all, rather than for that slot and that request."""
    cache = run.session.cache
    shown = state.progress(cache) or state.BackfillProgress()
    requests = received = 0
    stop = Stop.DONE
    resumes_at: float | None = None
    while state.pending(cache):
        if should_yield():
            stop = Stop.YIELDED
            break
        if budgeted:
            resumes_at = _spent_until(run)
            if resumes_at is not None:
                stop = Stop.BUDGET
                break
        before_requests, before_received = run.report.requests, run.report.received
        run.gate = _share_gate(run) if budgeted else None
        try:
            with giving_way(give_way):
                finished = await _step(run)
        except ShareSpent:
            finished = False  # a retry would have gone past the day's share: what was stored stays
            resumes_at = _spent_until(run)
            stop = Stop.BUDGET
        except GaveWay:
            finished = False
            run.report.requests -= 1  # counted as it was asked, never sent
            stop = Stop.YIELDED
        finally:
            run.gate = None
        requests += run.report.requests - before_requests
        received += run.report.received - before_received
        shown = shown.replace(
            received=shown.received + run.report.received - before_received,
            requests=shown.requests + run.report.requests - before_requests,
            paused_until=None,
        )
        shown = shown.replace(finish_at=estimate_finish(run, shown))
        state.save_progress(cache, shown)
        run.tell(expected=shown.expected)
        if stop is not Stop.DONE:
            break
        if finished:
            finish_backfill(run)
            shown = shown.replace(done=True, finish_at=None)
            state.save_progress(cache, shown)
            break
    if stop is Stop.BUDGET:
        state.save_progress(cache, shown.replace(paused_until=resumes_at))
    if received:
        keep_anchors(run)
    return StepReport(stop, requests, received, resumes_at)


def keep_anchors(run: ResourceRun) -> None:
    """Keep the unfiltered list's anchors in the file, as a pass of the page writer does at
    its end (sync.pull.writer): the backfill stores its pages without it, so until the next
    poll's pass (3-6 minutes on; never, while a stretch with no user at work goes on) a new
    process found anchors from before the backfill's pages and walked to its deep windows.
    Called at the end of a stretch that stored pages (it met its floor, yielded to the
    user's work, or spent its share), not within one: moving the anchors by the log costs
    about 75 us a change at 100,000 issues (8-19 ms of CPU after a page of 100, 187 ms after
    25 pages, beside 23 and 709 ms to store them, `benchmarks/cache.py --backfill-anchors`),
    while past `anchors.MOVES_REPAIRED` changes they are laid afresh, 61-70 ms for the whole
    list. Kept every 2,500 records, a first start's backfill of 100,000 issues paid some 7 s
    of CPU beside the user's keys, against one laying at its end; a process started during a
    long stretch walks to its first deep window meanwhile, as it did before the file kept
    anchors. Anchors only save a reader its walk: a failure to keep them fails nothing."""
    with suppress(CacheError):
        run.session.cache.server.keep_anchors()


def finish_backfill(run: ResourceRun) -> None:
    """Forget the floor, the backfill cursor and its query: nothing is left below the head,
    and no issue is the server search's alone."""
    cache = run.session.cache
    cache.server.searched_reached()
    state.set_floor(cache, None)
    cache.server.clear_cursor(Resource.ISSUES, scope=state.BACKFILL)
    cache.state.set(state.WALK_KEY, None)
    cache.state.set(KEYSET_KEY, None)


async def _step(run: ResourceRun) -> bool:
    """One request of the backfill; True when it met the floor (or the list's end)."""
    if run.session.features.keyset_order:
        try:
            return await _keyset_step(run)
        except OrderBroken:
            run.session.features = run.session.features.replace(keyset_order=False)
            remember_features(run.session)
            run.report.note = "the server broke its sync order; the backfill walks pages"
            run.session.cache.state.set(state.WALK_KEY, None)
            return False
    return await _walk_step(run)


KEYSET_KEY = "pull_backfill_keyset:issues"
"""State key of a keyset backfill's query: `{"since", "page", "left"}`: the page of the same
query to ask next (after a page all of one timestamp) and what its total said was left."""


async def _keyset_step(run: ResourceRun) -> bool:
    cache = run.session.cache
    floor = state.floor(cache)
    assert floor is not None
    cursor = state.backfill_cursor(cache)
    since = EPOCH if cursor is None else before(cursor.updated_at)
    saved = cache.state.get(KEYSET_KEY)
    saved = saved if isinstance(saved, dict) else {}
    page = saved.get("page") if saved.get("since") == since else None
    page = page if isinstance(page, int) and page > 1 else 1
    per_page = _last_size(run, saved.get("left")) if page == 1 else None
    listing = (await run.fetch(page=page, updated_after=since, per_page=per_page)).value
    items = list(listing.items)
    check_order(items, since)
    floor_key = (sort_key(floor.updated_at), min(floor.ids, default=""))
    below = [item for item in items if _key(item) < floor_key]
    moved = next_cursor(below, cursor)
    run.store(items, moved, scope=state.BACKFILL)
    if len(below) < len(items) or run.is_last(listing, page):
        cache.state.set(KEYSET_KEY, None)
        return True
    total = listing.pagination.total
    left = None if total is None else max(0, total - (page - 1) * run.size - len(items))
    progressed = moved is not None and moved != cursor
    next_page = 1 if progressed else page + 1
    cache.state.set(KEYSET_KEY, {"since": since, "page": next_page, "left": left})
    return False


def _key(item: Record | Tombstone) -> tuple[datetime, str]:
    assert item.updated_at is not None
    return (item.updated_at, item.id)


def _last_size(run: ResourceRun, left: object) -> int | None:
    """The page size of the next query: a whole page, unless what is left below the floor
    (what the last query had left, less the head above the floor) fits in less: then that,
    plus one, so the records above the floor are not read again. An estimate: records
    edited above the floor since make it large (a few records read twice), head records
    deleted make it small (one request more)."""
    head = (state.progress(run.session.cache) or state.BackfillProgress()).head
    if not isinstance(left, int) or head is None:
        return None
    below = left - head
    if below + 1 >= run.size:
        return None
    return max(2, below + 1)


async def _walk_step(run: ResourceRun) -> bool:
    cache = run.session.cache
    saved = cache.state.get(state.WALK_KEY)
    done = saved.get("page") if isinstance(saved, dict) else None
    page = done if isinstance(done, int) else 0
    listing = (await run.fetch(page=page + 1, updated_after=None)).value
    items = list(listing.items)
    run.store(items, None)
    cache.state.set(state.WALK_KEY, {"page": page + 1, "total": listing.pagination.total})
    return run.is_last(listing, page + 1)


class ShareSpent(Exception):
    """A retry of a backfill request would go past the day's share."""


def _share_gate(run: ResourceRun) -> Callable[[], None]:
    """Checked before every attempt, so the retries of the step that spends the share's last
    request (a 5xx, a dropped connection) do not spend more than the share."""

    def gate() -> None:
        if _spent_until(run) is not None:
            raise ShareSpent

    return gate


def _spent_until(run: ResourceRun) -> float | None:
    """None while the backfill may send another request today; else the local time at which
    a tenth of its day's share is free again."""
    limiter = run.session.limiter
    share = math.floor(limiter.background_budget() * BACKFILL_SHARE)
    if share <= 0:
        return limiter.background_free_at(1)
    reserve = limiter.background_budget() - share
    if limiter.background_left() > reserve:
        return None
    return limiter.background_free_at(reserve + max(1, share // 10))


def estimate_finish(run: ResourceRun, shown: state.BackfillProgress) -> float | None:
    """When the backfill should end at the plan's pace: the requests left, at the background
    share of a minute, and a day's share a day."""
    if shown.expected is None:
        return None
    limiter = run.session.limiter
    left = math.ceil(max(0, shown.expected - shown.received) / max(1, run.size))
    per_day = max(1, math.floor(limiter.background_budget() * BACKFILL_SHARE))
    per_minute = max(1, limiter.background_per_minute())
    days, rest = divmod(left, per_day)
    seconds = days * limiter.day_seconds + rest * limiter.window_seconds / per_minute
    return limiter.now() + seconds
