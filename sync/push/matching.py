"""Which lost create made which record: one record to one create, or nobody guesses.

The candidates `sync.push.reconcile` found for each create are joined into groups of creates
and records that could be each other's; a group is settled when its records can be matched one
to one to its creates (each create then made its record), and is unsure otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cache import OutboxEntry
from sync.models import Record


@dataclass
class Findings:
    """What looking for creates with a lost answer found; an entry in neither was not applied."""

    applied: dict[int, dict[str, Any]] = field(default_factory=dict)
    """Entry id -> the record it made."""
    unsure: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    """Entry id -> the records it may have made, which outnumber the creates that may have."""

    def add(self, other: Findings) -> None:
        self.applied.update(other.applied)
        self.unsure.update(other.unsure)


def settle(
    group: Sequence[OutboxEntry],
    candidates: Mapping[int, list[Record]],
    altered: Mapping[int, list[Record]],
) -> Findings:
    """One record to one create, per group of creates and records that could be each other's
    (see `sync.push.reconcile`); more records than creates in a group: all of them unsure. A
    create only a record changed or deleted since may be (`altered`) is unsure too."""
    found = Findings()
    for entry_id, maybe in altered.items():
        found.unsure[entry_id] = [record.raw for record in maybe]
    by_id = {entry.id: entry for entry in group}
    for entries, records in _components(candidates):
        matched = _match(sorted(entries, key=lambda e: _specific(by_id[e])), candidates)
        if len(records) > len(entries) or len(matched) < len(records):
            for entry_id in entries:
                found.unsure[entry_id] = [record.raw for record in candidates[entry_id]]
        else:
            found.applied.update({entry_id: record.raw for entry_id, record in matched.items()})
    return found


def _specific(entry: OutboxEntry) -> tuple[int, float]:
    """Creates that sent more fields are matched first: a record carrying all of them is
    more likely theirs than a sibling's that sent fewer."""
    return -len(entry.changes), entry.sent_at or entry.created_at


def _components(candidates: Mapping[int, list[Record]]) -> list[tuple[set[int], set[str]]]:
    """Entries and records linked through "may be the result of", in connected groups."""
    groups: list[tuple[set[int], set[str]]] = []
    for entry_id, records in candidates.items():
        ids = {record.id for record in records}
        joined = [g for g in groups if g[1] & ids]
        merged: tuple[set[int], set[str]] = ({entry_id}, ids)
        for group in joined:
            merged[0].update(group[0])
            merged[1].update(group[1])
            groups.remove(group)
        groups.append(merged)
    return groups


def _match(entries: Sequence[int], candidates: Mapping[int, list[Record]]) -> dict[int, Record]:
    """A largest one-to-one matching of entries to records (augmenting paths; the groups are
    a handful of writes), trying each entry's records oldest first."""
    owner: dict[str, int] = {}
    chosen: dict[str, Record] = {}

    def place(entry_id: int, tried: set[str]) -> bool:
        for record in candidates[entry_id]:
            if record.id in tried:
                continue
            tried.add(record.id)
            holder = owner.get(record.id)
            if holder is None or place(holder, tried):
                owner[record.id], chosen[record.id] = entry_id, record
                return True
        return False

    for entry_id in entries:
        place(entry_id, set())
    return {entry_id: chosen[record_id] for record_id, entry_id in owner.items()}
