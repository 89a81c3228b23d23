"""This process's own requests, and when their answers came: a tighter bound than the margin.

The sliding log pads every window with a margin because a request is logged when let through
but counted when it reaches the server, and that delay varies. For a request of this process
that has been answered, the delay is bounded exactly: the server counted it (once
authenticated, whatever the outcome: docs/api.md#rate-limit-windows) before answering, so no later
than the moment its answer was read here. Once a window's length has passed since then, no request
sent from now on can share a server window with it, fixed or sliding. A window of ours therefore
stops counting that entry at the earlier of its padded end and "answer + window".

Only entries this process logged and saw answered are known this way; every other entry
(another process's, one whose answer never came) keeps the full margin. Entries are matched
to the log by their time, which is exactly what `acquire` logged and the response carries
back as `sent_at`; a time this process logged twice is ambiguous and is left out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Answered:
    """One of this process's log entries whose answer was read at `received` (local time)."""

    bucket: str
    received: float


class AnsweredLog:
    """Own log entries, by their logged time, waiting for or holding their answer's time.

    `keep` is how long an entry can matter (a window plus its margin): older ones are dropped.
    """

    def __init__(self, keep: float) -> None:
        self._keep = keep
        self._sent: dict[float, str | None] = {}
        self._answered: dict[float, Answered] = {}

    def helps(self, span: float) -> bool:
        """Whether any own entry could end early in a window of length `span`: entries are
        kept only as long as a minute window can count them, so never in a day's."""
        return bool(self._answered) and span < self._keep

    def sent(self, at: float, bucket: str) -> None:
        """A request logged at `at` in log bucket `bucket` is on its way."""
        self._sent[at] = None if at in self._sent or at in self._answered else bucket
        self._answered.pop(at, None)

    def forget(self, at: float) -> None:
        """The request logged at `at` never left; its log entry is gone."""
        self._sent.pop(at, None)

    def answered(self, at: float | None, received: float) -> None:
        """The request logged at `at` was answered (any status) at `received`."""
        if at is None or received < at:
            return
        bucket = self._sent.pop(at, None)
        if bucket is not None:
            self._answered[at] = Answered(bucket, received)

    def prune(self, now: float) -> None:
        """Forget entries no minute window can count any more. Both maps are in about the
        order of their times, so this looks only at their oldest ends."""
        oldest = now - self._keep
        for times in (self._sent, self._answered):
            while times and next(iter(times)) < oldest:
                del times[next(iter(times))]

    def released(self, times: Sequence[float], bucket: str | None, span: float, now: float) -> int:
        """How many of `times` (log entries of `bucket`; None: any) are own entries that no
        longer count at `now` in a window of length `span`: answered at least `span` ago.
        Matched against the log rather than taken from memory, so that only entries the log
        still counts are let off."""
        gone = self._own(bucket, lambda at, entry: entry.received + span <= now)
        return sum(1 for at in times if _take(gone, at))

    def ends(
        self, times: Sequence[float], bucket: str | None, span: float, padded: float
    ) -> list[float]:
        """When each of `times` (log entries of `bucket`, ascending) stops counting in a window
        of length `span`, ascending: its padded end (`time + padded`), or earlier for an own
        entry answered in time. Each own entry shortens at most one equal time."""
        early = self._own(bucket, lambda at, entry: entry.received + span < at + padded)
        return sorted(
            self._answered[at].received + span if _take(early, at) else at + padded for at in times
        )

    def _own(self, bucket: str | None, chosen: Callable[[float, Answered], bool]) -> Counter[float]:
        return Counter(
            at
            for at, entry in self._answered.items()
            if bucket in (None, entry.bucket) and chosen(at, entry)
        )


def _take(counts: Counter[float], at: float) -> bool:
    """Use up one of `at` in `counts`, if any is left."""
    if counts[at] <= 0:
        return False
    counts[at] -= 1
    return True
