"""One outbox entry, one request (plus the GET of the ETag path).

The caller has marked the entry `sending`; this settles it as done, conflicting, rejected or
under the outcome of its failed attempt (`PushContext.settle`). An edit whose fields partly
conflict is split (`PushContext.park`): the conflicting fields wait for the user, the others
go out as a new entry, which is the one every later outcome applies to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cache import Operation, OutboxEntry, Resource
from sync.errors import NotFound, PreconditionFailed, SyncError
from sync.push import conflicts
from sync.push.outcomes import PushContext

MAX_PRECONDITION_ROUNDS = 3
"""412s in a row before leaving the entry for the next run: the record is being written hard."""


@dataclass
class _Sending:
    """The entry in flight: a split replaces it with the part that still goes out."""

    entry: OutboxEntry


async def send(ctx: PushContext, entry: OutboxEntry) -> None:
    sending = _Sending(entry)
    try:
        if entry.operation is Operation.CREATE:
            await _create(ctx, entry)
        elif entry.operation is Operation.DELETE:
            await _delete(ctx, entry)
        elif ctx.if_match(entry):
            await _update_if_match(ctx, sending)
        else:
            await _update(ctx, sending, conflicts.current(ctx.session, entry), None)
    except SyncError as error:
        await ctx.settle(sending.entry, error)


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


async def _update_if_match(ctx: PushContext, sending: _Sending) -> None:
    for _ in range(MAX_PRECONDITION_ROUNDS):
        entry = sending.entry
        try:
            record, etag = await conflicts.fetch(
                ctx.session, entry.resource, entry.target_id, reads=ctx.reads
            )
        except NotFound as error:
            ctx.refused(entry, error.status, error.code, error.message)
            return
        try:
            await _update(ctx, sending, record, etag)
        except PreconditionFailed:
            continue
        return
    await ctx.retryable(sending.entry, "the record kept changing on the server", None, wait=True)


async def _update(
    ctx: PushContext, sending: _Sending, server: dict[str, Any] | None, etag: str | None
) -> None:
    if server is not None:
        going = ctx.park(sending.entry, conflicts.detect(ctx.session, sending.entry, server))
        if going is None:
            return
        sending.entry = going
    entry = sending.entry
    client, target, changes = ctx.session.client, entry.target_id, dict(entry.changes)
    ctx.report.requests += 1
    if entry.resource is Resource.ISSUES:
        issue = await client.update_issue(target, changes, if_match=etag)
        ctx.done(entry, issue.value.raw)
    elif entry.resource is Resource.PROJECTS:
        project = await client.update_project(target, changes, if_match=etag)
        ctx.done(entry, project.value.raw)
    elif entry.resource is Resource.WORKSPACES:
        workspace = await client.update_workspace(target, changes, if_match=etag)
        ctx.done(entry, workspace.value.raw)
    else:
        comment = await client.update_comment(target, str(changes.get("body", "")))
        ctx.done(entry, comment.value.raw)
