"""What a push did, and how it waits after a retryable failure.

The report is counts, not entries: the outbox itself (`Cache.outbox`) holds each entry's state
and the server's message, so the caller shows those rather than a copy that goes stale.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field


@dataclass
class PushReport:
    """Counts of one `push_outbox` run; `stopped` says why it ended early (a refused key, server
    down, another process pushing), None when it drained all it could."""

    done: int = 0
    failed: int = 0
    conflicts: int = 0
    retried: int = 0
    reconciled: int = 0
    requests: int = 0
    bulk_requests: int = 0
    stopped: str | None = None
    key_refused: str | None = None
    """Why the run stopped, when the API key itself was refused (401), or may not make these
    writes (a 403 judged the key's, see `sync.push.forbidden`): the entries wait, and will
    until the user gives the key the permission or logs in with another."""
    unreachable: bool = False
    """The run stopped because the server could not be reached (the connection was refused,
    the name did not resolve): nothing more was tried, the entries wait, known not applied."""
    remaining: int = 0
    """Entries still to send (pending or in flight), `unknown` ones included."""
    unknown: int = 0
    """Creates sent whose outcome is still unknown at the end: on the server or not, nobody
    can say yet; they are looked for before being sent again, never counted as sent."""
    unsure: int = 0
    """Creates this run found may have made one of several look-alike records: kept in the
    outbox (`unsure`) for the user to settle, never counted as sent."""
    messages: list[str] = field(default_factory=list)
    """One line per write the server refused or that needs the user, for a notification."""

    @property
    def sent(self) -> int:
        """Entries settled by the server one way or the other (never an unknown or unsure
        create: nobody confirmed those)."""
        return self.done + self.failed + self.conflicts


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with full jitter for 5xx and connection failures (SYNC.md 4).

    `sleep` and `random` are injectable so tests wait for nothing; `tries` is how many retryable
    failures in a row one run accepts before it stops and leaves the queue for later.
    """

    base: float = 0.5
    cap: float = 30.0
    tries: int = 5
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    random: Callable[[], float] = random.random

    def delay(self, failures: int, retry_after: float | None = None) -> float:
        """Seconds before the next try after `failures` failures in a row; a server's
        `retry_after` wins when it asks for longer."""
        ceiling = min(self.cap, self.base * 2 ** max(0, failures - 1))
        wait: float = ceiling * (0.5 + self.random() / 2)
        return max(wait, retry_after or 0.0)


ProgressCallback = Callable[[PushReport], None]
