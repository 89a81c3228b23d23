"""`push_outbox`: drain the outbox to the server, each write exactly once.

A run holds the cache's push lock (`sync.push.lock`), then works in rounds until nothing more
can go: each round takes the entries `Cache.sendable` offers (at most one per record, in queue
order, those waiting for a create's server id held back), reconciles creates whose earlier
attempt has an unknown outcome, checks edits for conflicts, and sends the rest, bulk where it
can, up to `CONCURRENCY` requests at a time; the limiter paces them all. Entries whose create
just landed become sendable in the next round with the server id substituted.

Entries found `sending` at the start were left by a run that died mid-request: their outcome
is unknown, so they go back to pending and are reconciled like any other unknown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from cache import EntryState, Operation, OutboxEntry
from sync import conflicts
from sync.bulkplan import Bulk, Single, Step, plan
from sync.errors import SyncError
from sync.push import bulk, single
from sync.push.lock import PushLock
from sync.push.outcomes import PushContext
from sync.push.report import Backoff, ProgressCallback, PushReport
from sync.reconcile import find_applied_creates
from sync.session import SyncSession

CONCURRENCY = 4
"""Requests in flight at once: enough to keep the limiter's slots used, few enough that a
burst of failures stays small."""
MAX_ROUNDS = 10_000


async def push_outbox(
    session: SyncSession,
    *,
    progress: ProgressCallback | None = None,
    backoff: Backoff | None = None,
    bulk_creates: bool = True,
    preconditions: bool = True,
) -> PushReport:
    """Send every pending write it can; see the module docstring. Never raises for a refused
    or failed write (those are in the outbox and the report); raises only for cache errors.

    `bulk_creates` lets creates share bulk requests (see sync.bulkplan). `preconditions` sends
    single edits as GET + PATCH with `If-Match` on servers with ETags, which leaves no window
    for an unseen overwrite; False checks them against one listing instead, for half the
    requests (see sync.conflicts).
    """
    ctx = PushContext(
        session,
        backoff or Backoff(),
        progress=progress,
        bulk_creates=bulk_creates,
        preconditions=preconditions,
    )
    with PushLock(session.cache.path) as lock:
        if not lock.acquired:
            ctx.stop("another process is sending this profile's outbox")
            return ctx.report
        _recover(ctx)
        for _ in range(MAX_ROUNDS):
            ready = [e for e in session.cache.sendable() if e.id not in ctx.skip]
            if not ready or ctx.stopped:
                break
            await _round(ctx, ready)
            ctx.tick()
    active = (EntryState.PENDING, EntryState.SENDING)
    ctx.report.remaining = len(session.cache.outbox(active))
    return ctx.report


def _recover(ctx: PushContext) -> None:
    for entry in ctx.session.cache.outbox((EntryState.SENDING,)):
        ctx.session.cache.release(entry.id, "interrupted while sending: outcome unknown")


async def _round(ctx: PushContext, ready: list[OutboxEntry]) -> None:
    try:
        ready = await _reconcile(ctx, ready)
        features = ctx.session.features
        steps = plan(
            ready,
            bulk=bool(features.bulk),
            creates=ctx.bulk_creates,
            single_only=ctx.single_only,
        )
        await _check_listed(ctx, steps)
    except SyncError as error:
        await _settle_all(ctx, ready, error)
        return
    gate = asyncio.Semaphore(CONCURRENCY)

    async def run(step: Step) -> None:
        async with gate:
            if not ctx.stopped:
                await _run_step(ctx, step)

    await asyncio.gather(*(run(step) for step in steps))


async def _reconcile(ctx: PushContext, ready: list[OutboxEntry]) -> list[OutboxEntry]:
    """Creates tried before without a known outcome are looked for first (SYNC.md 4)."""
    doubtful = [
        e
        for e in ready
        if e.operation is Operation.CREATE and e.attempts > 0 and e.id not in ctx.clean
    ]
    if not doubtful:
        return ready
    ctx.report.requests += len({(e.resource, e.parent_id) for e in doubtful})
    found = await find_applied_creates(ctx.session, doubtful)
    for entry_id, record in found.items():
        ctx.session.cache.mark_done(entry_id, record)
        ctx.report.done += 1
        ctx.report.reconciled += 1
    for entry in doubtful:
        ctx.clean.add(entry.id)
    return [e for e in ready if e.id not in found]


async def _check_listed(ctx: PushContext, steps: Sequence[Step]) -> None:
    """Edits not sent with `If-Match` are compared against a fresh listing (sync.conflicts)."""
    listed: list[OutboxEntry] = []
    for step in steps:
        entries = step.entries if isinstance(step, Bulk) else (step.entry,)
        for entry in entries:
            if entry.operation is not Operation.UPDATE:
                continue
            if isinstance(step, Single) and ctx.if_match(entry):
                continue
            listed.append(entry)
    if listed:
        ctx.report.requests += 1
        await conflicts.refresh(ctx.session, listed)


async def _run_step(ctx: PushContext, step: Step) -> None:
    if isinstance(step, Single):
        entry = ctx.session.cache.mark_sending(step.entry.id)
        try:
            await single.send(ctx, entry)
        except SyncError as error:
            await ctx.settle(entry, error)
        return
    sending: list[OutboxEntry] = []
    for entry in step.entries:
        server = conflicts.current(ctx.session, entry)
        if entry.operation is Operation.UPDATE and server is not None:
            found = conflicts.detect(ctx.session, entry, server)
            if found:
                ctx.session.cache.record_conflicts(entry.id, found)
                ctx.report.conflicts += 1
                continue
        sending.append(ctx.session.cache.mark_sending(entry.id))
    if sending:
        await bulk.send(ctx, Bulk(tuple(sending)))


async def _settle_all(ctx: PushContext, entries: list[OutboxEntry], error: SyncError) -> None:
    """A failure before anything was sent (the reconcile or conflict listing)."""
    first = ctx.session.cache.mark_sending(entries[0].id)
    await ctx.settle(first, error)
    if not ctx.stopped:
        ctx.clean.discard(first.id)
