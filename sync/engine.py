"""Sync orchestration: one pass (`sync_once`) and the TUI's background loop (`SyncLoop`).

Push comes before pull, so the pull sees our own writes land and never shows a stale value
over a just-sent edit. The loop pushes soon after a local write (`poke`), pulls when a webhook
says something changed (`wake`, debounced so a burst of deliveries costs one pull), and
otherwise polls at the pace the limiter's background budget allows (`poll_interval`), since
deliveries can be lost (docs/sync.md#webhooks). User-facing pushes go as the user's requests; polls
and webhook pulls as background ones, so they never crowd out what the user is doing.

`sync.pull` is imported when first needed: the push half works, and is tested, on its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeAlias

from cache import CacheError
from sync.backfill_progress import BACKFILL_SHARE, pending
from sync.errors import SyncError
from sync.push import PushReport, StopReason, push_outbox
from sync.ratelimit import RequestClass
from sync.retry import Backoff
from sync.session import SyncSession

if TYPE_CHECKING:
    from sync.pull import PullProgress, PullReport
    from sync.pull.backfill import StepReport

PUSH_DELAY = 0.2
"""Seconds a poke waits for more local writes, so a burst of edits leaves as one round."""
WAKE_DEBOUNCE = 1.0
"""Seconds a webhook wake waits for more deliveries before the one pull they share."""
RETRY_BASE = 1.0
"""Seconds before the first attempt after a failed pass (then doubling, with jitter:
`sync.retry`)."""
RETRY_CAP = 60.0
"""The longest wait between attempts while the server cannot be reached or keeps failing."""


SyncProgress: TypeAlias = "PushReport | PullProgress"
"""What a sync tells its `progress` callback as it goes: the push's report after each round
(counts so far), the pull's progress after each page stored."""


@dataclass
class SyncReport:
    push: PushReport
    pull: PullReport | None
    """None when the push stopped for any reason but another process pushing (a refused key,
    a server out of reach or failing): the pull would meet the same."""


async def sync_once(
    session: SyncSession,
    *,
    full: bool = False,
    progress: Callable[[SyncProgress], None] | None = None,
    backoff: Backoff | None = None,
    retry: Backoff | None = None,
) -> SyncReport:
    """Push the outbox, then pull. Errors of the pull propagate (`sync.errors`); the push
    never raises for a refused write (see `push_outbox`). `backoff` paces the push's retries,
    `retry` the pull's (scaled down by tests against a fast service)."""
    from sync.pull import pull

    pushed = await push_outbox(session, progress=progress, backoff=backoff)
    if pushed.stopped is not None and pushed.stopped.reason is not StopReason.BUSY:
        return SyncReport(pushed, None)
    pulled = await pull(session, full=full, progress=progress, retry=retry)
    return SyncReport(pushed, pulled)


@dataclass(frozen=True)
class RetryPlanned:
    """Told to the listener when a failed pass is to be tried again (`SyncLoop.retry_at`)."""

    at: float
    """`time.monotonic()` of the next attempt."""
    failures: int
    """Failed passes in a row, this one included."""


@dataclass(frozen=True)
class PassFailed:
    """Told to the listener when a pass ended on an error, after the `RetryPlanned` of the
    attempt that follows."""

    error: SyncError | CacheError


LoopEvent: TypeAlias = (
    "PushReport | PullProgress | PullReport | StepReport | RetryPlanned | PassFailed"
)
"""Everything the loop tells its listener, each a type of its own to match on."""
Listener = Callable[[LoopEvent], None]


class SyncLoop:
    """Runs in the background of the app for the life of a session.

    `listener` is called (on the loop's task) with each `LoopEvent`: a `PushReport`, a
    `PullProgress`, a `PullReport`, a `PassFailed` and a `RetryPlanned`, so the app can post
    typed messages; it must not block.

    A pass that failed (the server could not be reached, answered 5xx, refused the key) is
    tried again after a jittered, capped backoff (`retry`), and so is a push that left
    writes it could still send: pending writes are retried for as long as any are pending,
    without waiting for another edit. Writes the server refused (failed, conflicts) wait for
    the user and are not retried. `retry_at` says when the next attempt is due.
    """

    def __init__(
        self,
        session: SyncSession,
        *,
        listener: Listener | None = None,
        interval: float | None = None,
        push_delay: float = PUSH_DELAY,
        wake_debounce: float = WAKE_DEBOUNCE,
        retry: Backoff | None = None,
        push_backoff: Backoff | None = None,
        pull_retry: Backoff | None = None,
        offline: Callable[[], bool] | None = None,
    ) -> None:
        self._session = session
        self._offline = offline
        self._listener = listener
        self._interval = interval
        self._push_delay = push_delay
        self._wake_debounce = wake_debounce
        self._retry = retry or Backoff(base=RETRY_BASE, cap=RETRY_CAP)
        self._push_backoff = push_backoff
        self._pull_retry = pull_retry
        self._signal = asyncio.Event()
        self._push_wanted = True
        self._pull_wanted = False
        self._now = False
        self._stopping = False
        self._pulled = False
        self._failures = 0
        self._poll_due = time.monotonic() + self.interval()
        self._backfill_at: float | None = None
        """`time.monotonic()` at which a backfill stopped by the day's budget goes on."""
        self.retry_at: float | None = None
        """`time.monotonic()` of the next attempt after a failure; None when none is due."""
        self.passes = 0

    def poke(self) -> None:
        """A local write was queued: push soon."""
        self._push_wanted = True
        self._signal.set()

    def wake(self) -> None:
        """The server said something changed (a webhook): pull soon."""
        self._pull_wanted = True
        self._signal.set()

    def sync_now(self) -> None:
        """The user asked: push and pull at once, whatever backoff was running."""
        self._push_wanted = self._pull_wanted = self._now = True
        self._failures = 0
        self._signal.set()

    def stop(self) -> None:
        self._stopping = True
        self._signal.set()

    def interval(self) -> float:
        """Seconds between polls: the limiter's background pace (2 requests: changes and the
        delete check) unless the caller fixed one; while a backfill is pending, at the pace
        of the share of the budget it leaves to the polls (docs/sync.md#head-first)."""
        if self._interval is not None:
            return self._interval
        pace = self._session.limiter.poll_interval(2)
        if self._backfilling():
            return pace / (1 - BACKFILL_SHARE)
        return pace

    async def run(self) -> None:
        """Until `stop()`: push when poked, pull when woken or when a poll is due, try again
        when a retry is due."""
        while not self._stopping:
            woken = await self._wait(self._next_due() - time.monotonic())
            if self._stopping:
                break
            self._due(time.monotonic())
            if not (self._push_wanted or self._pull_wanted):
                await self._go_on_backfilling()
                continue
            if woken and not self._now:
                await self._settle()
            self._now = False
            self._signal.clear()
            try:
                await self._pass()
            except (SyncError, CacheError) as error:
                self._failed(error)
                self._tell(PassFailed(error))

    def _next_due(self) -> float:
        """The retry, while one is planned: a poll due before it would fail as the pass
        did (the retry pulls too), and after a push that found the server unreachable no
        pull ran to move the poll's time on, so a poll due then started pass after pass at
        once. Otherwise the next poll, or the backfill's next step."""
        if self.retry_at is not None:
            return self.retry_at
        if self._pulled and self._backfilling():
            return min(self._poll_due, self._backfill_at or 0.0)
        return self._poll_due

    def _backfilling(self) -> bool:
        try:
            return pending(self._session.cache)
        except CacheError:
            return False

    def _wants_the_line(self) -> bool:
        """Whether something goes before the backfill's next request: a write to push, a
        pull asked for, a stop."""
        return self._stopping or self._push_wanted or self._pull_wanted or self._signal.is_set()

    async def _go_on_backfilling(self) -> None:
        """A page or more of a pending backfill, as background work, until something else
        wants the connection or the day's share is spent (then it waits for its time)."""
        if not self._pulled or self.retry_at is not None or not self._backfilling():
            return
        now = time.monotonic()
        if self._backfill_at is not None and now < self._backfill_at:
            return
        from sync.pull.engine import backfill_step

        try:
            step = await backfill_step(
                self._session,
                should_yield=self._wants_the_line,
                progress=self._tell,
                retry=self._pull_retry,
                give_way=self._signal,
            )
        except (SyncError, CacheError) as error:
            self._failed(error)
            self._tell(PassFailed(error))
            return
        if step is None:
            return
        self._backfill_at = None
        if step.resumes_at is not None:
            wait = step.resumes_at - self._session.limiter.now()
            self._backfill_at = time.monotonic() + max(0.0, wait)
        elif step.stop.value == "done":
            self._pull_wanted = True  # the comments, which waited for the issues
            self._signal.set()
        self._tell(step)

    async def _wait(self, timeout: float) -> bool:
        """Wait for a poke, a wake or a stop (True), or until `timeout` passed (False)."""
        try:
            await asyncio.wait_for(self._signal.wait(), max(0.0, timeout))
        except TimeoutError:
            return False
        return True

    def _due(self, now: float) -> None:
        """What the timers ask for: a poll pulls, a retry tries what failed again (and no
        poll falls due before a planned retry, `_next_due`)."""
        if self.retry_at is None:
            if now >= self._poll_due:
                self._pull_wanted = True
        elif now >= self.retry_at:
            self.retry_at = None
            self._pull_wanted = True
            self._push_wanted = True

    async def _settle(self) -> None:
        """Let a burst of pokes or wakes gather before acting on them."""
        delay = self._wake_debounce if self._pull_wanted else self._push_delay
        await asyncio.sleep(delay)

    async def _pass(self) -> None:
        """Push, then pull. The first pull after start is the user's (the app just opened and
        waits for it); later ones are background work. Pull progress reaches the listener
        page by page, so the app can show records as they land.

        A pass that retries a failed one, or runs while `offline()` says the server cannot be
        reached, only probes: one attempt per request, no retries inside the push or the pull
        (this loop's backoff is the retry), so a long time offline costs a request or two a
        minute rather than dozens. A push that found the server unreachable (its first
        refused connection ends it) skips the pull too: the retry does both."""
        from sync.pull import pull

        self.passes += 1
        push_backoff, pull_retry = self._push_backoff, self._pull_retry
        if self._failures or (self._offline is not None and self._offline()):
            push_backoff = replace(push_backoff or Backoff(), tries=1)
            pull_retry = replace(pull_retry or Backoff(), tries=1)
        unsent = unreachable = False
        if self._push_wanted:
            self._push_wanted = False
            pushed = await push_outbox(self._session, backoff=push_backoff)
            unreachable = pushed.stopped_for(StopReason.UNREACHABLE)
            unsent = unreachable or (pushed.stopped is not None and pushed.remaining > 0)
            self._push_wanted = self._push_wanted or unsent  # or poked meanwhile
            self._tell(pushed)
        if self._pull_wanted and not unreachable:
            self._pull_wanted = False
            self._poll_due = time.monotonic() + self.interval()
            request_class = RequestClass.BACKGROUND if self._pulled else RequestClass.USER
            pulled = await pull(
                self._session,
                request_class=request_class,
                progress=self._tell,
                retry=pull_retry,
                head_first=True,
                finish_backfill=False,
            )
            self._pulled = True
            self._tell(pulled)
        if unsent:
            self._failed(None)
        else:
            self._failures = 0
            self.retry_at = None

    def _failed(self, error: BaseException | None) -> None:
        """Plan the next attempt: sooner after the first failure, later after each more.
        `error` is what ended the pass (None: the push left writes it could still send)."""
        self._failures += 1
        if error is not None:
            self._pull_wanted = True  # what failed may have been the pull: it is done again
        self.retry_at = time.monotonic() + self._retry.delay(self._failures)
        if self._session.cache.push.sendable():
            self._push_wanted = True
        self._tell(RetryPlanned(self.retry_at, self._failures))

    def _tell(self, event: LoopEvent) -> None:
        if self._listener is not None:
            self._listener(event)
