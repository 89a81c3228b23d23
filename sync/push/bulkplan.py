"""Which sendable entries share a `POST /issues/bulk` request, and which go one by one.

The bulk endpoint (docs/api.md#bulk-writes) takes up to 100 issue operations and counts as one
request for every limit, so 1,000 edits cost 10 requests instead of 1,000. Only issues have it;
comments and projects, and any entry a bulk request could not carry, go singly.

Creates go in bulk too when `creates` is on. Their idempotency: the bulk request carries one
`Idempotency-Key` derived from its entries' own keys, so resending the same entries replays
the first answer where keys are honoured. The batch may be composed differently after a crash
or a partial failure, so the request's key and body are kept with its entries
(`Cache.mark_sending_many`): a create whose attempt had an unknown outcome is asked of that key
with that body (`sync.push.replay`), or looked for on the server where keys are not honoured,
before it is sent again, in bulk or not, exactly as for single creates.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from cache import Operation, OutboxEntry, Resource
from sync.models import BulkCreate, BulkDelete, BulkOperation, BulkUpdate

MAX_BULK = 100


@dataclass(frozen=True)
class Single:
    entry: OutboxEntry


@dataclass(frozen=True)
class Bulk:
    entries: tuple[OutboxEntry, ...]

    @property
    def idempotency_key(self) -> str | None:
        """A key for a request holding creates: the same entries give the same key."""
        keys = [e.idempotency_key for e in self.entries if e.operation is Operation.CREATE]
        if not keys:
            return None
        return "bulk-" + hashlib.sha256("\n".join(keys).encode()).hexdigest()

    @property
    def body(self) -> dict[str, Any]:
        """The request's body: kept with its entries when it holds creates, so that a lost
        answer can be asked for again under the same key with the same body."""
        return {"operations": [operation(entry).to_json() for entry in self.entries]}


def operation(entry: OutboxEntry) -> BulkOperation:
    if entry.operation is Operation.CREATE:
        return BulkCreate(dict(entry.changes))
    if entry.operation is Operation.DELETE:
        return BulkDelete(entry.target_id)
    return BulkUpdate(entry.target_id, dict(entry.changes))


Step = Single | Bulk


def plan(
    entries: Sequence[OutboxEntry],
    *,
    bulk: bool,
    creates: bool,
    single_only: Iterable[int] = (),
) -> list[Step]:
    """Steps for one round: bulk requests first, then single writes. `sendable` gives at most one
    entry per record, so the entries of a round are independent and may share a request."""
    forced = set(single_only)
    grouped: list[OutboxEntry] = []
    steps: list[Step] = []
    for entry in entries:
        if bulk and entry.id not in forced and _bulkable(entry, creates):
            grouped.append(entry)
        else:
            steps.append(Single(entry))
    chunks = [
        Bulk(tuple(grouped[start : start + MAX_BULK])) for start in range(0, len(grouped), MAX_BULK)
    ]
    return [*chunks, *steps]


def _bulkable(entry: OutboxEntry, creates: bool) -> bool:
    if entry.resource is not Resource.ISSUES:
        return False
    return entry.operation is not Operation.CREATE or creates
