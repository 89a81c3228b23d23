"""What a push did.

The report is counts, not entries: the outbox itself (`Cache.outbox`) holds each entry's state
and the server's message, so the caller shows those rather than a copy that goes stale.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum


class StopReason(StrEnum):
    """Why a push run ended with writes it could still send: what the caller does next
    depends on it (`sync.engine` pulls anyway only after `BUSY`, and retries soon only after
    `UNREACHABLE`), so it is decided by this value, never by the words of the message."""

    BUSY = "busy"
    """Another process is sending this profile's outbox: it sends these writes too."""
    KEY_REFUSED = "key_refused"
    """The server refused the API key (401), or the key may not make these writes (a 403
    judged the key's, `sync.push.forbidden`): the entries wait until the user gives the key
    the permission or logs in with another."""
    UNREACHABLE = "unreachable"
    """The server could not be reached (the connection was refused, the name did not
    resolve): nothing more was tried, the entries wait, known not applied."""
    SERVER_FAILING = "server_failing"
    """Retryable failures (5xx, 429, reads that kept failing) `Backoff.tries` times in a
    row: the queue is left for a later run."""
    NO_ANSWER = "no_answer"
    """Requests sent without a readable answer `Backoff.tries` times in a row: their
    outcomes are looked for before anything is sent again."""
    INTERRUPTED = "interrupted"
    """Cut short from outside, or never started: a command that stopped retrying a failing
    server, a session that could not open. Never set by `push_outbox` itself."""


@dataclass(frozen=True)
class Stop:
    """Why a run stopped: the `reason` to decide by, the `message` to show (its `str`)."""

    reason: StopReason
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass
class PushReport:
    """Counts of one `push_outbox` run; `stopped` says why it ended early, None when it
    drained all it could."""

    done: int = 0
    failed: int = 0
    conflicts: int = 0
    retried: int = 0
    reconciled: int = 0
    requests: int = 0
    bulk_requests: int = 0
    stopped: Stop | None = None
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

    def stopped_for(self, reason: StopReason) -> bool:
        """Whether the run stopped, and for `reason`."""
        return self.stopped is not None and self.stopped.reason is reason


ProgressCallback = Callable[[PushReport], None]
