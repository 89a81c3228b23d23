"""`push_outbox`: drain the outbox to the server, each write exactly once.

A run holds the cache's push lock (`sync.push.lock`), then works in rounds until nothing more
can go: each round takes the entries `cache.push.sendable` offers (at most one per record, in queue
order, those waiting for a create's server id held back), reconciles creates whose earlier
attempt has an unknown outcome, checks edits for conflicts (parking only the conflicting
fields; the rest of an edit goes out), and sends the rest, bulk where it can, up to
`CONCURRENCY` requests at a time; the limiter paces them all. Entries whose create
just landed become sendable in the next round with the server id substituted.

Entries found `sending` at the start were left by a run that died mid-request: their outcome
is unknown, so they go back to pending and are reconciled like any other unknown.

Every read the rounds need (reconcile and conflict listings, the GET before `If-Match`) is
retried in place (`sync.push.reads`); one that still fails ends its round without charging
any entry, and `Backoff.tries` such rounds in a row end the run. What reconciling learned
(a create not on the server) is kept in the outbox, so no later round or run looks again
until the create has been sent again.

At the end of a run, under the same lock, entries done longer ago than `keep_settled` (30
days unless told) are forgotten (`cache.push.prune_settled`): once sent, nothing reads them
but an undo of their batch and the conflict check of a write queued before they landed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from cache import SETTLED_RETENTION, EntryState, Operation, OutboxEntry
from sync.errors import ApiError, Forbidden, SyncError, Unauthorized
from sync.push import bulk, conflicts, single
from sync.push.bulkplan import Bulk, Single, Step, plan
from sync.push.lock import PushLock
from sync.push.outcomes import PushContext
from sync.push.reads import RETRYABLE
from sync.push.reconcile import find_applied_creates, listings
from sync.push.replay import ask_keys, learn_ignored
from sync.push.report import ProgressCallback, PushReport, StopReason
from sync.retry import Backoff
from sync.session import SyncSession

CONCURRENCY = 2
"""Requests in flight at once: one being answered while the next is prepared. More only queue
at the server, and a longer round trip delays the limiter, which ends a request's window
early from the moment it was answered (`sync.ratelimit.answered`); few enough too that a
burst of failures stays small."""
MAX_ROUNDS = 10_000
UNCHARGED = (*RETRYABLE, Unauthorized, Forbidden)
"""Failures of a read that say nothing about any entry."""


async def push_outbox(
    session: SyncSession,
    *,
    progress: ProgressCallback | None = None,
    backoff: Backoff | None = None,
    bulk_creates: bool = True,
    preconditions: bool = True,
    keep_settled: float = SETTLED_RETENTION,
) -> PushReport:
    """Send every pending write it can; see the module docstring. Never raises for a refused
    or failed write (those are in the outbox and the report); raises only for cache errors.

    `bulk_creates` lets creates share bulk requests (see sync.push.bulkplan). `preconditions` sends
    single edits as GET + PATCH with `If-Match` on servers with ETags, which leaves no window
    for an unseen overwrite; False checks them against one listing instead, for half the
    requests (see sync.push.conflicts). `keep_settled`: seconds a sent entry stays in the outbox.
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
            ctx.stop(StopReason.BUSY, "another process is sending this profile's outbox")
            return ctx.report
        _recover(ctx)
        for _ in range(MAX_ROUNDS):
            if ctx.stopped:
                break
            ready = [e for e in session.cache.push.sendable() if e.id not in ctx.skip]
            if not ready:
                if ctx.settle_undecided():
                    continue
                break
            await _round(ctx, ready)
            ctx.tick()
        session.cache.push.prune_settled(keep_settled)
    ctx.count_reads()
    active = (EntryState.PENDING, EntryState.SENDING)
    ctx.report.remaining = len(session.cache.outbox.entries(active))
    ctx.report.unknown = len(session.cache.push.doubtful())
    return ctx.report


def _recover(ctx: PushContext) -> None:
    for entry in ctx.session.cache.outbox.entries((EntryState.SENDING,)):
        ctx.session.cache.push.release(entry.id, "interrupted while sending: outcome unknown")


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
        await _read_failed(ctx, ready, error)
        return
    ctx.read_failures = 0
    gate = asyncio.Semaphore(CONCURRENCY)

    async def run(step: Step) -> None:
        async with gate:
            if not ctx.stopped:
                await _run_step(ctx, step)

    await asyncio.gather(*(run(step) for step in steps))


async def _reconcile(ctx: PushContext, ready: list[OutboxEntry]) -> list[OutboxEntry]:
    """Creates tried before without a known outcome are looked for first
    (docs/sync.md#unknown-outcomes).

    Where the server answers for their `Idempotency-Key`, the key settles them
    (`sync.push.replay`); the rest are looked for in listings: one per group of
    `sync.push.reconcile.listings`, each settled as soon as it is read and its findings stored
    (done, unsure, or `not_applied`): when a later one fails, the round ends but the next
    round, or run, starts from there. All or nothing, a lossy network failed one of many
    listings nearly every round and the push never moved on.
    """
    unsure = ctx.session.cache.push.doubtful()
    doubtful = [e for e in ready if e.id in unsure]
    if not doubtful:
        return ready
    asked = await ask_keys(ctx, doubtful)
    for entry_id, (record, gone) in asked.applied.items():
        ctx.session.cache.push.mark_done(entry_id, record, gone=gone)
        ctx.report.done += 1
        ctx.report.reconciled += 1
    ctx.session.cache.push.mark_not_applied(asked.not_applied)
    settled: set[int] = set(asked.applied)
    known = settled | set(asked.not_applied)
    for group in listings(ctx.session, [e for e in doubtful if e.id not in known]):
        found = await find_applied_creates(ctx.session, group, reads=ctx.reads)
        learn_ignored(ctx.session, asked, found.applied)
        for entry_id, record in found.applied.items():
            ctx.session.cache.push.mark_done(entry_id, record)
            ctx.report.done += 1
            ctx.report.reconciled += 1
        for entry in group:
            if entry.id in found.unsure:
                ctx.unsure(entry, found.unsure[entry.id])
        settled.update(found.applied, found.unsure)
        ctx.session.cache.push.mark_not_applied([e.id for e in group if e.id not in settled])
    return [e for e in ready if e.id not in settled]


async def _check_listed(ctx: PushContext, steps: Sequence[Step]) -> None:
    """Edits not sent with `If-Match` are compared against a fresh listing (sync.push.conflicts)."""
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
        await conflicts.refresh(ctx.session, listed, reads=ctx.reads)


async def _run_step(ctx: PushContext, step: Step) -> None:
    if isinstance(step, Single):
        await single.send(ctx, ctx.session.cache.push.mark_sending(step.entry.id))
        return
    going: list[OutboxEntry] = []
    for entry in step.entries:
        clean: OutboxEntry | None = entry
        server = conflicts.current(ctx.session, entry)
        if entry.operation is Operation.UPDATE and server is not None:
            clean = ctx.park(entry, conflicts.detect(ctx.session, entry, server))
        if clean is not None:
            going.append(clean)
    if going:
        request = Bulk(tuple(going))
        key = request.idempotency_key
        sending = ctx.session.cache.push.mark_sending_many(
            [entry.id for entry in going], bulk=None if key is None else (key, request.body)
        )
        await bulk.send(ctx, Bulk(tuple(sending)))


async def _read_failed(ctx: PushContext, entries: list[OutboxEntry], error: SyncError) -> None:
    """A read before anything was sent (the reconcile or conflict listing) failed. Transient
    failures (retries spent) and 401/403 charge no entry (`PushContext.read_failed`). Any other
    refusal says the request itself is wrong, which retrying cannot mend: it is charged to the
    first entry still pending (the reconcile may have settled some before it failed), so the
    queue moves on."""
    if not isinstance(error, ApiError) or isinstance(error, UNCHARGED):
        await ctx.read_failed(error)
        return
    cache = ctx.session.cache
    pending = (e for e in entries if cache.outbox.entry(e.id).state is EntryState.PENDING)
    waiting = next(pending, None)
    if waiting is not None:
        ctx.refused(waiting, error.status, error.code, error.message)
