"""One `POST /issues/bulk` request for up to 100 entries, its per-operation results mapped back.

Each operation succeeds or fails alone, so each entry is settled from its own result; the
successes are recorded together, in one transaction. A result missing or unreadable leaves
that entry's outcome unknown. The endpoint answering 404/405/501
means this server has no bulk after all: the entries go one by one from then on.
A 403 on one operation is that record's refusal (the server took the request as a whole); a 403
on the whole request stops the run when it refuses the key (`sync.push.forbidden`), else its
entries go one by one, so that each record answers for itself.
"""

from __future__ import annotations

from cache import Operation, OutboxEntry, Resource
from sync.errors import ApiError, ErrorBody, Forbidden, SyncError
from sync.models import BulkResult
from sync.push.bulkplan import Bulk
from sync.push.outcomes import PushContext
from sync.session import remember_features

ABSENT = frozenset({404, 405, 501})
STOPS = frozenset({401, 429})
"""Whole-request refusals every entry shares; a 403 does when it refuses the key
(`PushContext.refuses_key`), else the entries go one by one to learn which record it was."""


async def send(ctx: PushContext, step: Bulk) -> None:
    """Send one bulk request; the entries are already marked `sending`."""
    entries = step.entries
    ctx.report.requests += 1
    ctx.report.bulk_requests += 1
    try:
        answer = await ctx.session.client.bulk_body(step.body, idempotency_key=step.idempotency_key)
    except ApiError as error:
        if error.status in ABSENT:
            _no_bulk(ctx, entries)
            return
        await _whole(ctx, entries, error)
        return
    except SyncError as error:
        await _whole(ctx, entries, error)
        return
    by_index: dict[int, BulkResult] = {result.index: result for result in answer.value}
    landed: list[tuple[OutboxEntry, dict[str, object] | None]] = []
    others: list[tuple[OutboxEntry, BulkResult | None]] = []
    for index, entry in enumerate(entries):
        result = by_index.get(index)
        if result is not None and result.ok and entry.operation is Operation.DELETE:
            landed.append((entry, None))
        elif result is not None and result.ok and result.issue is not None:
            landed.append((entry, result.issue.raw))
        else:
            others.append((entry, result))
    ctx.done_many(landed)
    for entry, maybe in others:
        if maybe is None:
            ctx.unknown(entry, "the bulk answer had no result for this operation")
        else:
            await _settle_one(ctx, entry, maybe)


def _no_bulk(ctx: PushContext, entries: tuple[OutboxEntry, ...]) -> None:
    session = ctx.session
    session.features = session.features.replace(bulk=False)
    remember_features(session)
    for entry in entries:
        ctx.not_applied(entry, "the server has no bulk endpoint")


async def _whole(ctx: PushContext, entries: tuple[OutboxEntry, ...], error: SyncError) -> None:
    """The request as a whole failed: every entry shares its outcome, but a 4xx that is about
    one operation's content must not fail the others, so those go one by one."""
    if isinstance(error, Forbidden):
        reason = await ctx.refuses_key(Resource.ISSUES, error)
        if reason is not None:
            for entry in entries:
                ctx.not_applied(entry, reason)
            ctx.stop_for_the_key(reason)
            return
    if isinstance(error, ApiError) and 400 <= error.status < 500 and error.status not in STOPS:
        for entry in entries:
            ctx.not_applied(entry, str(error))
            ctx.single_only.add(entry.id)
        return
    for position, entry in enumerate(entries):
        if position and isinstance(error, ApiError) and error.status >= 500:
            ctx.not_applied(entry, error.message)
            continue
        await ctx.settle(entry, error)


async def _settle_one(ctx: PushContext, entry: OutboxEntry, result: BulkResult) -> None:
    if result.ok:
        ctx.unknown(entry, "the bulk answer had no record for this operation")
        return
    body = result.error or ErrorBody()
    message = body.message or f"HTTP {result.status}"
    if entry.operation is Operation.CREATE and _refuses_op(body):
        ctx.bulk_creates = False
        ctx.not_applied(entry, message)
        return
    if result.status == 429 or result.status >= 500:
        await ctx.retryable(entry, message, None, wait=result.status >= 500)
        return
    ctx.refused(entry, result.status, body.code, message)


def _refuses_op(body: ErrorBody) -> bool:
    """A server whose bulk endpoint takes updates and deletes only."""
    return any(detail.field == "op" for detail in body.details)
