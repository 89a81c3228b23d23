"""The user's keys as the pull sees them: a pull's next request waits while the user types.

The engine runs in the app's process, on a thread of its own, and a first start's pull keeps
it busy for minutes: parsing pages, preparing their rows, storing them. The app's keys need
the same cores (and, for their Python, the same interpreter lock), so a search key during a
pull took two to four times as long as one on an idle engine (issue 18, goal 4). Background
work yields to the user's: before each page it asks for, a pull waits until no key has come
for `QUIET`, but never longer than `LONGEST` for one page, so that a user who types without a
pause still sees the pull go on (docs/sync.md#the-users-keys-first).

The app calls `typed` from its event loop, the pull awaits `quiet` on the engine's: the one
value they share is a float, written whole.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

QUIET = 0.2
"""Seconds after a key before the pull asks for its next page: longer than the app takes to
answer most keys (p99 of an idle key 30-80 ms), shorter than most pauses in typing."""
LONGEST = 1.0
"""Seconds a page waits at most: one page a second goes on under keys that never pause."""


class Foreground:
    """When the user last typed, and a wait for a pause in their typing."""

    def __init__(
        self,
        *,
        quiet: float = QUIET,
        longest: float = LONGEST,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self._quiet = quiet
        self._longest = longest
        self._clock = clock
        self._sleep = sleep
        self._typed_at = -float("inf")
        self.waited = 0.0
        """Seconds pulls spent waiting for the user so far (what tests read)."""

    def typed(self) -> None:
        """The user pressed a key (any thread)."""
        self._typed_at = self._clock()

    async def quiet(self) -> None:
        """Return once no key has come for `quiet` seconds, or after `longest` seconds."""
        began = self._clock()
        while True:
            now = self._clock()
            left = min(self._typed_at + self._quiet, began + self._longest) - now
            if left <= 0:
                break
            await self._sleep(left)
        self.waited += self._clock() - began
