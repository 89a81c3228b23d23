"""One outbox entry, one request (plus the GET of the ETag path).

The caller has marked the entry `sending`; this settles it as done, conflicting or rejected,
or raises the `SyncError` of the failed attempt for `PushContext.settle` to file.
"""

from __future__ import annotations

from typing import Any

from cache import Operation, OutboxEntry, Resource
from sync import conflicts
from sync.errors import NotFound, PreconditionFailed
from sync.push.outcomes import PushContext

MAX_PRECONDITION_ROUNDS = 3
"""412s in a row before leaving the entry for the next run: the record is being written hard."""


async def send(ctx: PushContext, entry: OutboxEntry) -> None:
    if entry.operation is Operation.CREATE:
        await _create(ctx, entry)
    elif entry.operation is Operation.DELETE:
        await _delete(ctx, entry)
    elif ctx.if_match(entry):
        await _update_if_match(ctx, entry)
    else:
        await _update(ctx, entry, conflicts.current(ctx.session, entry), None)


async def _create(ctx: PushContext, entry: OutboxEntry) -> None:
    client, key = ctx.session.client, entry.idempotency_key
    fields = dict(entry.changes)
    ctx.report.requests += 1
    if entry.resource is Resource.ISSUES:
        issue = await client.create_issue(fields, idempotency_key=key)
        ctx.done(entry, issue.value.raw)
    elif entry.resource is Resource.PROJECTS:
        project = await client.create_project(fields, idempotency_key=key)
        ctx.done(entry, project.value.raw)
    else:
        issue_id, body = str(fields.get("issue_id", "")), str(fields.get("body", ""))
        comment = await client.create_comment(issue_id, body, idempotency_key=key)
        ctx.done(entry, comment.value.raw)


async def _delete(ctx: PushContext, entry: OutboxEntry) -> None:
    client, target = ctx.session.client, entry.target_id
    ctx.report.requests += 1
    try:
        if entry.resource is Resource.ISSUES:
            await client.delete_issue(target)
        elif entry.resource is Resource.PROJECTS:
            await client.delete_project(target)
        else:
            await client.delete_comment(target)
    except NotFound:
        pass
    ctx.done(entry)


async def _update_if_match(ctx: PushContext, entry: OutboxEntry) -> None:
    for _ in range(MAX_PRECONDITION_ROUNDS):
        ctx.report.requests += 1
        try:
            record, etag = await conflicts.fetch(ctx.session, entry.resource, entry.target_id)
        except NotFound as error:
            ctx.refused(entry, error.status, error.code, error.message)
            return
        try:
            await _update(ctx, entry, record, etag)
        except PreconditionFailed:
            continue
        return
    await ctx.retryable(entry, "the record kept changing on the server", None, wait=True)


async def _update(
    ctx: PushContext, entry: OutboxEntry, server: dict[str, Any] | None, etag: str | None
) -> None:
    if server is not None:
        found = conflicts.detect(ctx.session, entry, server)
        if found:
            ctx.session.cache.record_conflicts(entry.id, found)
            ctx.report.conflicts += 1
            return
    client, target, changes = ctx.session.client, entry.target_id, dict(entry.changes)
    ctx.report.requests += 1
    if entry.resource is Resource.ISSUES:
        issue = await client.update_issue(target, changes, if_match=etag)
        ctx.done(entry, issue.value.raw)
    elif entry.resource is Resource.PROJECTS:
        project = await client.update_project(target, changes, if_match=etag)
        ctx.done(entry, project.value.raw)
    else:
        comment = await client.update_comment(target, str(changes.get("body", "")))
        ctx.done(entry, comment.value.raw)
