"""Sync orchestration: one pass (`sync_once`) and the TUI's background loop (`SyncLoop`).

Push comes before pull, so the pull sees our own writes land and never shows a stale value
over a just-sent edit. The loop pushes soon after a local write (`poke`), pulls when a webhook
says something changed (`wake`, debounced so a burst of deliveries costs one pull), and
otherwise polls at the pace the limiter's background budget allows (`poll_interval`), since
deliveries can be lost (SYNC.md 9). User-facing pushes go at user priority; polls and
webhook pulls at background priority, so they never crowd out what the user is doing.

`sync.pull` is imported when first needed: the push half works, and is tested, on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cache import CacheError
from sync.errors import SyncError
from sync.push import Backoff, PushReport, push_outbox
from sync.ratelimit import Priority
from sync.session import SyncSession

if TYPE_CHECKING:
    from sync.pull import PullReport, RetryPolicy

PUSH_DELAY = 0.2
"""Seconds a poke waits for more local writes, so a burst of edits leaves as one round."""
WAKE_DEBOUNCE = 1.0
"""Seconds a webhook wake waits for more deliveries before the one pull they share."""
ERROR_PAUSE = 30.0
"""Seconds the loop rests after a pass failed (server down), before trying again."""


@dataclass
class SyncReport:
    push: PushReport
    pull: PullReport | None
    """None when the push stopped (401/403): pulling would fail the same way."""


async def sync_once(
    session: SyncSession,
    *,
    full: bool = False,
    progress: Callable[[object], None] | None = None,
    backoff: Backoff | None = None,
    retry: RetryPolicy | None = None,
) -> SyncReport:
    """Push the outbox, then pull. Errors of the pull propagate (`sync.errors`); the push
    never raises for a refused write (see `push_outbox`). `backoff` paces the push's retries,
    `retry` the pull's (scaled down by tests against a fast service)."""
    from sync.pull import pull

    pushed = await push_outbox(session, progress=progress, backoff=backoff)
    if pushed.stopped is not None and "another process" not in pushed.stopped:
        return SyncReport(pushed, None)
    pulled = await pull(session, full=full, progress=progress, retry=retry)
    return SyncReport(pushed, pulled)


Listener = Callable[[PushReport | object | BaseException], None]


class SyncLoop:
    """Runs in the background of the app for the life of a session.

    `listener` is called (on the loop's task) with each `PushReport`, each `PullProgress`,
    each `PullReport` and each error, so the app can post typed messages; it must not block.
    """

    def __init__(
        self,
        session: SyncSession,
        *,
        listener: Listener | None = None,
        interval: float | None = None,
        push_delay: float = PUSH_DELAY,
        wake_debounce: float = WAKE_DEBOUNCE,
        error_pause: float = ERROR_PAUSE,
    ) -> None:
        self._session = session
        self._listener = listener
        self._interval = interval
        self._push_delay = push_delay
        self._wake_debounce = wake_debounce
        self._error_pause = error_pause
        self._signal = asyncio.Event()
        self._push_wanted = True
        self._pull_wanted = False
        self._stopping = False
        self._pulled = False
        self.passes = 0

    def poke(self) -> None:
        """A local write was queued: push soon."""
        self._push_wanted = True
        self._signal.set()

    def wake(self) -> None:
        """The server said something changed (a webhook): pull soon."""
        self._pull_wanted = True
        self._signal.set()

    def stop(self) -> None:
        self._stopping = True
        self._signal.set()

    def interval(self) -> float:
        """Seconds between polls: the limiter's background pace (2 requests: changes and the
        delete check) unless the caller fixed one."""
        if self._interval is not None:
            return self._interval
        return self._session.limiter.poll_interval(2)

    async def run(self) -> None:
        """Until `stop()`: push when poked, pull when woken or when a poll is due."""
        while not self._stopping:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._signal.wait(), self.interval())
            if self._stopping:
                break
            if not self._signal.is_set():
                self._pull_wanted = True
            await self._settle()
            self._signal.clear()
            try:
                await self._pass()
            except (SyncError, CacheError) as error:
                self._tell(error)
                await self._rest()

    async def _settle(self) -> None:
        """Let a burst of pokes or wakes gather before acting on them."""
        delay = self._wake_debounce if self._pull_wanted else self._push_delay
        await asyncio.sleep(delay)

    async def _pass(self) -> None:
        """Push, then pull. The first pull after start is the user's (the app just opened and
        waits for it); later ones are background work. Pull progress reaches the listener
        page by page, so the app can show records as they land."""
        from sync.pull import pull

        self.passes += 1
        if self._push_wanted:
            self._push_wanted = False
            self._tell(await push_outbox(self._session))
        if self._pull_wanted:
            self._pull_wanted = False
            priority = Priority.BACKGROUND if self._pulled else Priority.USER
            self._tell(await pull(self._session, priority=priority, progress=self._tell))
            self._pulled = True

    async def _rest(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wait_stop(), self._error_pause)

    async def _wait_stop(self) -> None:
        while not self._stopping:
            self._signal.clear()
            await self._signal.wait()

    def _tell(self, what: PushReport | object | BaseException) -> None:
        if self._listener is not None:
            self._listener(what)
