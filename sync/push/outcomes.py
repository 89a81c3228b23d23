"""The three outcomes of an attempt (docs/sync.md#three-outcomes), applied to outbox entries; the
state one push run keeps.

Mapping of a failed attempt (the tree is in `sync.errors`):

- retryable: 429, 5xx, a connection that failed before the request left. The entry goes back
  to pending and is known *not* applied (`Cache.push.release(not_applied=True)`, kept in the outbox
  across runs), so it is resent without reconciling. A 429 needs no wait here: the limiter saw
  it and blocks the next request until `retry_after`. A connection that failed before the
  request left says the server cannot be reached: the run stops there (`UNREACHABLE`)
  and the caller's backoff tries again, rather than every entry and read retrying first.
- unknown: a request sent without a readable answer (timeout, reset, garbled 2xx). Back to
  pending, outcome open: a create is looked for on the server before it is sent again.
- rejected: any other 4xx. Failed with the server's message; the rest of the queue goes on.
  404 on a DELETE is success; on a PATCH it means the record is gone. A workflow refusal also
  names the moves the workflow allows from the record's current status
  (docs/api.md#statuses-and-workflow).
- 401 stops the run: every following request would be refused the same way. A 403 stops it
  when the key lacks a permission for the whole resource, and fails the one entry when that
  record refused it (`sync.push.forbidden` says how the two are told apart). A refused
  workspace rename always fails, naming `admin` and what to do: it is the only write of its
  kind, and waiting would only hide it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from cache import FieldConflict, OutboxEntry, Resource
from issuefields import TRANSITIONS
from sync.errors import (
    ApiError,
    Forbidden,
    NetworkError,
    ProtocolError,
    RateLimited,
    ServerError,
    SyncError,
    Unauthorized,
)
from sync.permissions import keep_granted
from sync.push.forbidden import Refusals, Verdict
from sync.push.reads import read_retrier, unreachable
from sync.push.reconcile import describe_suspects
from sync.push.report import ProgressCallback, PushReport, Stop, StopReason
from sync.retry import Backoff, Retrier
from sync.session import SyncSession

NOT_FOUND = 404


@dataclass
class PushContext:
    """Everything one run shares between its concurrent sends."""

    session: SyncSession
    backoff: Backoff
    report: PushReport = field(default_factory=PushReport)
    progress: ProgressCallback | None = None
    bulk_creates: bool = True
    preconditions: bool = True
    skip: set[int] = field(default_factory=set)
    """Entries this run will not try again (after too many retryable failures)."""
    single_only: set[int] = field(default_factory=set)
    """Entries a bulk request could not carry: they go one by one."""
    failures: dict[int, int] = field(default_factory=dict)
    reads: Retrier = field(init=False)
    """Every read of the run goes through it (`sync.push.reads`); it also counts them."""
    read_failures: int = 0
    """Rounds in a row whose reads failed even after their retries."""
    refusals: Refusals = field(default_factory=Refusals)
    """What the 403s of this run said about the key (`sync.push.forbidden`)."""
    _reads_counted: int = 0
    _me: asyncio.Future[frozenset[str] | None] | None = None

    def __post_init__(self) -> None:
        self.reads = read_retrier(self.backoff)

    def if_match(self, entry: OutboxEntry) -> bool:
        """Whether this edit goes out as GET + PATCH with `If-Match` (sync.push.conflicts)."""
        etag = self.preconditions and bool(self.session.features.etag)
        return etag and entry.resource is not Resource.COMMENTS

    @property
    def stopped(self) -> bool:
        return self.report.stopped is not None

    def stop(self, reason: StopReason, message: str) -> None:
        """End the run after the requests in flight; the first reason given is the run's."""
        if self.report.stopped is None:
            self.report.stopped = Stop(reason, message)

    def stop_for_the_key(self, message: str) -> None:
        """Stop the run: the API key may not make these writes (`StopReason.KEY_REFUSED`)."""
        self.stop(StopReason.KEY_REFUSED, message)

    def count_reads(self) -> None:
        """Add the reads sent since the last call (retries included) to the report."""
        self.report.requests += self.reads.requests - self._reads_counted
        self._reads_counted = self.reads.requests

    def tick(self) -> None:
        self.count_reads()
        if self.progress is not None:
            self.progress(self.report)

    def done(self, entry: OutboxEntry, record: dict[str, object] | None = None) -> None:
        self.session.cache.push.mark_done(entry.id, record)
        self.report.done += 1
        self._granted(entry.resource)

    def done_many(self, landed: list[tuple[OutboxEntry, dict[str, object] | None]]) -> None:
        """`done` for the successes of one bulk answer, in one transaction."""
        if landed:
            self.session.cache.push.mark_done_many([(entry.id, record) for entry, record in landed])
            self.report.done += len(landed)
            for resource in {entry.resource for entry, _ in landed}:
                self._granted(resource)

    def _granted(self, resource: Resource) -> None:
        """A write of `resource` succeeded: its undecided 403s were their records' refusals."""
        for waiting in self.refusals.succeeded(resource):
            self.rejected(waiting.entry, waiting.message)

    def settle_undecided(self) -> bool:
        """At the end of a run, fail the 403s nothing decided (`sync.push.forbidden`); whether
        there were any (writes behind them may have become sendable)."""
        left = self.refusals.unresolved()
        for waiting in left:
            self.rejected(waiting.entry, waiting.message)
        return bool(left)

    def park(self, entry: OutboxEntry, found: list[FieldConflict]) -> OutboxEntry | None:
        """Settle an edit's conflicting fields as conflicts; returns the entry with the fields
        nobody else touched, to send now (None when every field conflicts)."""
        if not found:
            return entry
        self.report.conflicts += 1
        return self.session.cache.push.park_conflicts(entry.id, found)

    def unsure(self, entry: OutboxEntry, records: list[dict[str, Any]]) -> None:
        """A create that may have made one of `records`, or none: kept for the user to
        settle (`Cache.outbox.same_as`, `send_anyway`, `discard`), counted apart from what
        was sent."""
        message = describe_suspects(records)
        self.session.cache.push.mark_unsure(entry.id, records, message)
        self.report.unsure += 1
        self.report.messages.append(f"{entry.resource.value} {entry.target_id}: {message}")

    def rejected(self, entry: OutboxEntry, message: str) -> None:
        self.session.cache.push.mark_failed(entry.id, message)
        self.report.failed += 1
        self.report.messages.append(f"{entry.resource.value} {entry.target_id}: {message}")

    async def retryable(
        self, entry: OutboxEntry, message: str, retry_after: float | None, *, wait: bool
    ) -> None:
        """Back to pending; after `backoff.tries` in a row this run leaves the entry alone."""
        self.not_applied(entry, message)
        self.report.retried += 1
        count = self.failures.get(entry.id, 0) + 1
        self.failures[entry.id] = count
        if count >= self.backoff.tries:
            self.skip.add(entry.id)
            self.stop(
                StopReason.SERVER_FAILING,
                f"the server keeps failing ({message}); the queue will be retried later",
            )
        elif wait:
            await self.backoff.sleep(self.backoff.delay(count, retry_after))

    def not_applied(self, entry: OutboxEntry, message: str) -> None:
        """Back to pending, known not applied: a create goes out again without a look."""
        self.session.cache.push.release(entry.id, message, not_applied=True)

    async def read_failed(self, error: SyncError) -> None:
        """A read the round needed failed, retries spent; no entry was sent, so none is
        charged. After `backoff.tries` such rounds in a row the run stops; at once when the
        server cannot be reached."""
        if isinstance(error, Unauthorized | Forbidden):
            self.stop_for_the_key(_refusal(error))
            return
        if unreachable(error):
            self.cut_off(error)
            return
        self.read_failures += 1
        if self.read_failures >= self.backoff.tries:
            self.stop(
                StopReason.SERVER_FAILING,
                f"the server keeps failing ({error}); the queue will be retried later",
            )
            return
        retry_after = error.meta.retry_after if isinstance(error, ApiError) else None
        await self.backoff.sleep(self.backoff.delay(self.read_failures, retry_after))

    def unknown(self, entry: OutboxEntry, message: str) -> None:
        """Back to pending, to be looked for before any resend; counted like a retryable
        failure, so a server that never answers readably cannot keep the run going."""
        self.session.cache.push.release(entry.id, f"outcome unknown: {message}")
        self.report.retried += 1
        count = self.failures.get(entry.id, 0) + 1
        self.failures[entry.id] = count
        if count >= self.backoff.tries:
            self.skip.add(entry.id)
            self.stop(
                StopReason.NO_ANSWER,
                f"no readable answer from the server ({message}); will retry later",
            )

    def cut_off(self, error: SyncError) -> None:
        """The server cannot be reached (`unreachable`): stop the run, nothing more is tried."""
        self.stop(
            StopReason.UNREACHABLE,
            f"cannot reach the server ({error}); the queue will be retried later",
        )

    async def settle(self, entry: OutboxEntry, error: SyncError) -> None:
        """File a failed attempt under its outcome."""
        if isinstance(error, Unauthorized):
            self.not_applied(entry, error.message)
            self.stop_for_the_key(_refusal(error))
        elif isinstance(error, Forbidden):
            await self.forbidden(entry, error)
        elif isinstance(error, RateLimited):
            await self.retryable(entry, error.message, error.retry_after, wait=False)
        elif isinstance(error, ServerError):
            await self.retryable(entry, error.message, error.meta.retry_after, wait=True)
        elif isinstance(error, NetworkError):
            if error.request_sent:
                self.unknown(entry, str(error))
            else:
                self.not_applied(entry, str(error))
                self.cut_off(error)
        elif isinstance(error, ProtocolError):
            if 200 <= error.status < 300:
                self.unknown(entry, str(error))
            else:
                await self.retryable(entry, str(error), None, wait=True)
        elif isinstance(error, ApiError):
            self.refused(entry, error.status, error.code, error.message)
        else:
            await self.retryable(entry, str(error), None, wait=True)

    async def forbidden(self, entry: OutboxEntry, error: Forbidden) -> None:
        """A 403 on a request for this entry: the key's refusal stops the run (the entry
        waits), a record's fails the entry, an undecided one waits for the run to tell."""
        judgement = self.refusals.judge(entry.resource, error, await self.permissions())
        if entry.resource is Resource.WORKSPACES:
            self.rejected(entry, _workspace_refused(entry, judgement.verdict, judgement.reason))
        elif judgement.verdict is Verdict.KEY:
            self.not_applied(entry, judgement.reason)
            self.stop_for_the_key(judgement.reason)
        elif judgement.verdict is Verdict.RECORD:
            self.rejected(entry, judgement.reason)
        else:
            self.not_applied(entry, judgement.reason)
            self.skip.add(entry.id)
            self.refusals.wait(entry, judgement.reason)

    async def refuses_key(self, resource: Resource, error: Forbidden) -> str | None:
        """Why the key may not make a request about `resource` that drew `error`, or None
        when the 403 may be about a record (a bulk request's entries then go one by one)."""
        judgement = self.refusals.judge(resource, error, await self.permissions())
        return judgement.reason if judgement.verdict is Verdict.KEY else None

    async def permissions(self) -> frozenset[str] | None:
        """The key's permissions by `/me`, asked once a run and only after a 403, on servers
        that have it; None when unknown (no `/me`, it failed, or it lists none)."""
        if self._me is None:
            self._me = asyncio.ensure_future(self._ask_me())
        return await self._me

    async def _ask_me(self) -> frozenset[str] | None:
        if not self.session.features.me:
            return None
        try:
            me = await self.reads.run(self.session.client.me)
        except SyncError:
            return None
        if self.session.key_tag and me.value.permissions:
            keep_granted(
                self.session.cache,
                self.session.server,
                self.session.key_tag,
                list(me.value.permissions),
            )
        return frozenset(me.value.permissions) or None

    def refused(self, entry: OutboxEntry, status: int, code: str | None, message: str) -> None:
        """A 4xx for this one entry (a single request's, or a bulk operation's)."""
        if status == NOT_FOUND:
            if entry.operation.value == "delete":
                self.done(entry)
                return
            message = f"the record is gone from the server ({message})"
        elif code == "invalid_transition":
            message = self._with_moves(entry, message)
        self.rejected(entry, message)

    def _with_moves(self, entry: OutboxEntry, message: str) -> str:
        if entry.resource is not Resource.ISSUES:
            return message
        record = self.session.cache.server.server_record(entry.resource, entry.target_id) or {}
        status = record.get("status")
        moves = TRANSITIONS.get(status) if isinstance(status, str) else None
        if not moves:
            return message
        return f"{message} (from {status} an issue can move to: {', '.join(moves)})"


def _workspace_refused(entry: OutboxEntry, verdict: Verdict, reason: str) -> str:
    """A refused rename fails (not waits, as a key's refused issue writes do: nothing else
    queues behind it), saying what to do about it."""
    if verdict is Verdict.RECORD:
        return reason
    if verdict is Verdict.UNDECIDED:
        reason = f"the API key may not rename the workspace (needs admin): {reason}"
    return (
        f"{reason}. Renaming the workspace needs a key with admin: log in with one (or ask a "
        f"workspace admin for it), then `tracker-tui outbox retry {entry.id}`; or drop the "
        f"rename with `tracker-tui outbox discard {entry.id}`"
    )


def _refusal(error: ApiError) -> str:
    if isinstance(error, Unauthorized):
        return f"the server refused the API key ({error.message}); log in again"
    permission = getattr(error, "permission", None)
    needed = f" (needs {permission})" if permission else ""
    return f"the API key may not make this change{needed}: {error.message}"
