"""Creates whose answer was lost, asked of their `Idempotency-Key` [ext] before any listing.

A listing finds a lost create's record only while it still looks like what was sent: once
someone else retitled it, or deleted it, before the client looked, nothing matches, and the
create was sent again (issue 15's `altered`). A server that honours keys keeps the first answer
for 24 hours whatever became of the record since, so there the key is asked, not the listing:

1. The request the last attempt went out in (one POST, or a whole bulk request: its key and
   body are kept with the entries, `Cache.attempts`) is sent again under its key with an
   empty body. That creates nothing anywhere; a server holding an answer under the key refuses
   it as `idempotency_key_reused` (`ApiClient.key_used`), which also proves it honours keys.
2. Held: the request is sent again under its first key with its first body, byte for byte,
   and the server replays its first answer: the create's record, as it was made.
3. Not held, on a server known to honour keys and within the key's life: the attempt was
   never applied, and the create goes out again. Not held anywhere else says nothing (a server
   that ignores keys answers the empty body as a missing field): on a server not known either
   way, the key of the last create it did answer is asked (`_witnessed`): held, the server
   honours keys; not held, it ignores them and is not asked again, and the create is looked
   for in a listing (`sync.push.reconcile`).

Replayed records are then looked for in one listing of what changed since the attempt (what
was made since has changed since): there, the record as it is now; absent, someone deleted it.
Either way the create happened: it is done, linked to its record, and a deleted one is
removed from the cache with it, never made again.

Cost: one request per lost single create or lost bulk request, one more for each that was
applied, one listing per resource when any was, and once per server one to learn whether it
honours keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cache import BulkAttempt, OutboxEntry, Resource
from sync.errors import NotFound
from sync.push.outcomes import PushContext
from sync.push.reconcile import list_since, listing_parent, listings, read, server_time
from sync.session import SyncSession, remember_features

LIFETIME = 23 * 3600.0
"""Seconds after an attempt within which a server that honours keys still holds its answer:
the 24 hours a server keeps them (docs/api.md#idempotency-keys), less an hour for the clocks."""
PATHS = {Resource.ISSUES: "/issues", Resource.PROJECTS: "/projects", Resource.COMMENTS: "/comments"}
BULK_PATH = "/issues/bulk"


@dataclass
class Asked:
    """What the keys said; an entry in neither is looked for by listing."""

    applied: dict[int, tuple[dict[str, Any], bool]] = field(default_factory=dict)
    """Entry id -> (its record as the server holds it now, or as it was made when it is gone;
    whether someone deleted it since)."""
    not_applied: list[int] = field(default_factory=list)
    unheld: set[int] = field(default_factory=set)
    """Entries whose key the server held no answer for, on a server not known to honour keys:
    if a listing then finds one applied, the server ignores keys (`learn_ignored`)."""


async def ask_keys(ctx: PushContext, entries: Sequence[OutboxEntry]) -> Asked:
    """What became of each create, by its key where the server answers for it (above)."""
    session = ctx.session
    asked = Asked()
    made: dict[int, dict[str, Any]] = {}
    if session.features.idempotency is False:
        return asked
    fresh = [entry for entry in entries if _within_life(session, entry)]
    attempts = session.cache.push.attempts(entry.id for entry in fresh)
    requests: dict[str, list[tuple[OutboxEntry, BulkAttempt]]] = {}
    for entry in fresh:
        if entry.id not in attempts:
            continue  # which request it went out in is not known: looked for by listing
        attempt = attempts[entry.id]
        if attempt is not None:
            requests.setdefault(attempt.key, []).append((entry, attempt))
            continue
        if await _held(ctx, PATHS[entry.resource], entry.idempotency_key):
            made[entry.id] = await _replay_one(ctx, entry)
        elif session.features.idempotency:
            asked.not_applied.append(entry.id)
        else:
            asked.unheld.add(entry.id)
    for key, members in requests.items():
        if await _held(ctx, BULK_PATH, key):
            landed, refused = await _replay_bulk(ctx, key, members)
            made.update(landed)
            asked.not_applied.extend(refused)
        elif session.features.idempotency:
            asked.not_applied.extend(entry.id for entry, _ in members)
        else:
            asked.unheld.update(entry.id for entry, _ in members)
    if asked.unheld and session.features.idempotency is None and await _witnessed(ctx):
        asked.not_applied.extend(sorted(asked.unheld))
        asked.unheld.clear()
    if made:
        by_id = {entry.id: entry for entry in entries}
        asked.applied = await _as_now(ctx, [by_id[entry_id] for entry_id in made], made)
    return asked


def learn_ignored(session: SyncSession, asked: Asked, applied: Iterable[int]) -> None:
    """A create a listing found applied whose key the server held no answer for: the server
    ignores keys, and is not asked again (each asking costs a POST)."""
    if session.features.idempotency is None and asked.unheld.intersection(applied):
        session.features = session.features.replace(idempotency=False)
        remember_features(session)


async def _witnessed(ctx: PushContext) -> bool:
    """Whether the server honours keys, asked of the key of a create it answered within the
    keys' life (`Cache.witness`): held, it does (and what it did not hold was never applied);
    not held, it ignores keys, and is not asked again. None such: not known yet."""
    session = ctx.session
    now = session.limiter.offset.to_local(session.limiter.server_now())
    found = session.cache.push.witness(now - LIFETIME)
    if found is None:
        return False
    resource, key, bulk_key = found
    if await _held(ctx, PATHS[resource] if bulk_key is None else BULK_PATH, bulk_key or key):
        return True
    session.features = session.features.replace(idempotency=False)
    remember_features(session)
    return False


def _within_life(session: SyncSession, entry: OutboxEntry) -> bool:
    sent = entry.sent_at or entry.created_at
    return session.limiter.server_now() - session.limiter.offset.to_server(sent) < LIFETIME


async def _held(ctx: PushContext, path: str, key: str) -> bool:
    client = ctx.session.client
    held = await read(ctx.reads, lambda: client.key_used(path, key))
    if held and not ctx.session.features.idempotency:
        ctx.session.features = ctx.session.features.replace(idempotency=True)
        remember_features(ctx.session)
    return held


async def _replay_one(ctx: PushContext, entry: OutboxEntry) -> dict[str, Any]:
    """The first answer to the entry's own request, replayed: the same key, the same body."""
    client, key, fields = ctx.session.client, entry.idempotency_key, dict(entry.changes)
    if entry.resource is Resource.ISSUES:
        issue = await read(ctx.reads, lambda: client.create_issue(fields, idempotency_key=key))
        return issue.value.raw
    if entry.resource is Resource.PROJECTS:
        project = await read(ctx.reads, lambda: client.create_project(fields, idempotency_key=key))
        return project.value.raw
    issue_id, body = str(fields.get("issue_id", "")), str(fields.get("body", ""))
    comment = await read(
        ctx.reads, lambda: client.create_comment(issue_id, body, idempotency_key=key)
    )
    return comment.value.raw


async def _replay_bulk(
    ctx: PushContext,
    key: str,
    members: Sequence[tuple[OutboxEntry, BulkAttempt]],
) -> tuple[dict[int, dict[str, Any]], list[int]]:
    """The first answer to a bulk request, replayed; each create's result at its place. A
    create the request refused was not applied; one whose result is missing stays in doubt."""
    body = members[0][1].body
    client = ctx.session.client
    answer = await read(ctx.reads, lambda: client.bulk_body(body, idempotency_key=key))
    results = {result.index: result for result in answer.value}
    made: dict[int, dict[str, Any]] = {}
    refused: list[int] = []
    for entry, attempt in members:
        result = results.get(attempt.index)
        if result is not None and result.ok and result.issue is not None:
            made[entry.id] = result.issue.raw
        elif result is not None and not result.ok:
            refused.append(entry.id)
    return made, refused


async def _as_now(
    ctx: PushContext, entries: Sequence[OutboxEntry], made: dict[int, dict[str, Any]]
) -> dict[int, tuple[dict[str, Any], bool]]:
    """The replayed records as they are now: one listing of what changed since the attempts
    per resource (per issue for comments where the server lists them so); a record made then
    and absent now was deleted."""
    session = ctx.session
    found: dict[int, tuple[dict[str, Any], bool]] = {}
    for group in listings(session, entries):
        resource, parent = group[0].resource, listing_parent(group)
        since = server_time(session, min(entry.sent_at or entry.created_at for entry in group))
        try:
            listed = await list_since(session, resource, since, parent=parent, reads=ctx.reads)
        except NotFound:
            if parent is None:
                raise
            listed = []  # the comments' issue is gone, and they with it
        now = {record.id: record.raw for record in listed}
        for entry in group:
            first = made[entry.id]
            current = now.get(str(first.get("id")))
            found[entry.id] = (first, True) if current is None else (current, False)
    return found
