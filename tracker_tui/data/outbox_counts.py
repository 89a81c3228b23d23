"""How many local writes wait, and for what: one definition for every screen that counts them.

The status bar once said "↑ 1 pending" while the sync panel said "0 pending · 1 failed": it
counted every unsettled entry as pending. A write is *pending* while the engine may still send
it (pending, or sending right now); *failed* when the server refused it and it waits for the
user (retry, edit or discard); a *conflict* is one field the server changed meanwhile, which the
user settles (keep mine, take theirs); *unsure* when a create's answer was lost and the server
holds look-alike records it may have made, so the user says whether one of them is it, or sends
it anyway. The engine counts them for its status report and every screen shows that report.
"""

from __future__ import annotations

from collections.abc import Iterable

from cache import ACTIVE_STATES, Cache, EntryState, OutboxEntry
from cache.models import Frozen

SENDABLE_STATES = (EntryState.PENDING, EntryState.SENDING)


class OutboxCounts(Frozen):
    _fields = ("pending", "failed", "conflicts", "unsure")
    __slots__ = _fields
    pending: int
    """Writes the engine still sends (it retries them until the server has them)."""
    failed: int
    """Writes the server refused; they wait for the user."""
    conflicts: int
    """Conflicting fields the user has to settle."""
    unsure: int
    """Creates that may already be on the server; they wait for the user."""

    def __init__(
        self, pending: int = 0, failed: int = 0, conflicts: int = 0, unsure: int = 0
    ) -> None:
        self._init(pending, failed, conflicts, unsure)

    @classmethod
    def of(cls, entries: Iterable[OutboxEntry], conflicts: int) -> OutboxCounts:
        """Counted from unsettled entries and the number of unresolved conflicts."""
        states = [entry.state for entry in entries]
        return cls(
            pending=sum(1 for state in states if state in SENDABLE_STATES),
            failed=states.count(EntryState.FAILED),
            conflicts=conflicts,
            unsure=states.count(EntryState.UNSURE),
        )


def count_outbox(cache: Cache) -> OutboxCounts:
    """The counts of `cache`'s outbox now (two reads)."""
    return OutboxCounts.of(cache.outbox.entries(ACTIVE_STATES), len(cache.outbox.conflicts()))
