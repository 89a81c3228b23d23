"""The shared log of sent requests: the limiter's only state that outlives a process.

Every process using the same key (the TUI, a `sync` in another terminal) must count each other's
requests, so the log is kept by the profile's cache (in a SQLite file of its own beside it),
not here. This module only says what the limiter needs from it. Times in the log are the
local clock (`time.time()`): the processes sharing a cache share a machine, hence a clock,
whatever its offset from the server's.
`LogCheck` is the cache's own class, so the limiter and the log agree on one shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from cache.models import LogCheck

__all__ = ["LogCheck", "RequestLog"]


class RequestLog(Protocol):
    """A sliding log of sent requests, shared by every process of a profile.

    `reserve_request` must be atomic across processes (one SQLite transaction), or two processes
    could both take the last slot of a window.
    """

    def reserve_request(self, at: float, bucket: str, checks: Sequence[LogCheck]) -> bool:
        """Insert an entry (`at`, `bucket`) if every check passes, in one atomic step."""
        ...

    def release_request(self, at: float, bucket: str) -> bool:
        """Delete one entry (`at`, `bucket`), in one atomic step; False when none was left."""
        ...

    def request_times(self, since: float, bucket: str | None = None) -> list[float]:
        """The times of entries at or after `since`, of `bucket` (None: any), ascending."""
        ...

    def prune_requests(self, before: float) -> int:
        """Delete entries older than `before`; return how many went."""
        ...
