"""What a command that talks to the server is waiting for, said, and bounded.

With writes pending and the server down, `sync` used to print nothing for 46 s (five push
rounds, each retrying its reads) and exit 0. Here every retry of a command's sync work waits
through one `Waits`: it says why and for how long on a terminal, and once the server has been
failing for `give_up_after` seconds the work is cancelled (the outbox is built to be
interrupted at any point: an unsent write stays queued, one whose answer was lost is looked
for before it is sent again). A wait for the rate limit is never cut short: it ends by itself
(the sync's progress display counts it down; a write command says it).

What the server did comes from the engine's `ConnectionWatch` (`heard` is told each of its
states), so the exit status rests on what happened (a refused key, a server out of reach)
rather than on the words of a report.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from sync.connection import Connection, ConnectionState, seconds_until

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")

SAID_FROM = 1.0
"""Retries sooner than this are not worth a line."""
FAILING = (Connection.OFFLINE, Connection.SERVER_ERROR)


class Waits:
    """The retries of one command's sync work (`retry` is the `sleep` of its `Backoff`, the
    push's and the pull's); `say` shows a line (on a terminal). With `tell_rate_limit`,
    a wait for the rate limit is said too (the sync's progress display says its own)."""

    def __init__(
        self,
        say: Callable[[str], None],
        *,
        give_up_after: float,
        tell_rate_limit: bool = False,
    ) -> None:
        self._say = say
        self.give_up_after = give_up_after
        self._tell_rate_limit = tell_rate_limit
        self.state = ConnectionState()
        self.failing_since: float | None = None
        """When the current run of failures began (monotonic clock)."""
        self.gave_up: str | None = None
        """Why the work was cancelled, once it was."""
        self._work: asyncio.Future[Any] | None = None

    @property
    def key_refused(self) -> bool:
        return self.state.kind is Connection.KEY_REFUSED

    def heard(self, state: ConnectionState) -> None:
        """The connection's new state (a `ConnectionWatch`'s `on_change`)."""
        waiting = state.kind is Connection.RATE_LIMITED and state.until is not None
        if waiting and self.state.kind is not Connection.RATE_LIMITED and self._tell_rate_limit:
            assert state.until is not None
            self._say(
                f"waiting for the rate limit, {seconds_until(state.until, time.monotonic())} s"
            )
        if state.kind in FAILING:
            self.failing_since = self.failing_since or time.monotonic()
        elif state.kind is Connection.ONLINE:
            self.failing_since = None
        self.state = state

    async def run(self, work: asyncio.Future[T]) -> T | None:
        """Await `work`; None when it was cancelled because the server kept failing."""
        import asyncio

        self._work = work
        try:
            return await work
        except asyncio.CancelledError:
            if self.gave_up is None:
                raise
            return None

    async def retry(self, seconds: float) -> None:
        import asyncio

        failing_now = self.state.kind in FAILING
        why = self.state.detail if failing_now and self.state.detail else "no answer"
        since = self.failing_since
        failing = 0.0 if since is None else time.monotonic() - since
        left = self.give_up_after - failing
        if seconds > left and self._work is not None:
            self.gave_up = f"{why}; stopped retrying after {failing:.0f} s"
            self._say(f"{why}: stopping after {failing:.0f} s of retries")
            self._work.cancel()
        elif seconds >= SAID_FROM:
            self._say(f"{why}: retrying in {seconds:.0f} s (giving up in {left:.0f} s)")
        await asyncio.sleep(seconds)
