"""Bulk edits planned before they are queued: who changes, who cannot, and why.

A plan is computed from the issues' current values (in a worker), shown as a preview, and
only then queued as one outbox batch, so `u` can undo it as one. Status moves are checked
against the workflow here: an issue that cannot make the move is left out and named.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from cache import Cache, IssueRow, JsonObject, JsonValue, Resource
from issuefields import EDITABLE, LABELS, STATUS, Kind, can_move
from tracker_tui.data.changes import field_name, value_text
from tracker_tui.formatting import count_label, issue_reference

BULK_DELETE = "delete"
BULK_CELLS = "cells"
"""Each issue its own changes: the cells changed in the table edited in `$EDITOR`."""
ADD_LABEL, REMOVE_LABEL = "add_label", "remove_label"
LABEL_ACTIONS = (ADD_LABEL, REMOVE_LABEL)
SET_FIELDS = tuple(f for f in EDITABLE if f.kind in (Kind.CHOICE, Kind.USER, Kind.PROJECT))
"""The fields a bulk change sets to one value for every issue (each action is its member)."""
BULK_ACTIONS = (*(f.member for f in SET_FIELDS), *LABEL_ACTIONS)
"""What a bulk change can do besides delete: set one of those fields, or add / remove labels."""


@dataclass(frozen=True)
class BulkChange:
    """One change for every marked issue: a field set, labels added or removed, or delete."""

    action: str
    """One of `BULK_ACTIONS`, or `BULK_DELETE`."""
    value: JsonValue = None
    """The field's new value; for the label actions, the labels to add or remove (a list, or
    one label)."""

    @property
    def labels(self) -> list[str]:
        """The labels a label action adds or removes."""
        if isinstance(self.value, list):
            return [str(label) for label in self.value]
        return [] if self.value is None else [str(self.value)]

    def apply(self, row: IssueRow) -> JsonObject | None:
        """The changes for one issue; None when it already is that way."""
        if self.action == BULK_DELETE:
            return {}
        if self.action in LABEL_ACTIONS:
            labels: list[JsonValue] = list(row.labels)
            given = self.labels
            if self.action == ADD_LABEL:
                new = labels + [label for label in given if label not in labels]
            else:
                new = [label for label in labels if label not in given]
            return None if new == labels else {LABELS.member: new}
        current = row.cells.get(self.action)
        return None if current == self.value else {self.action: self.value}


@dataclass(frozen=True)
class BulkPlan:
    """What queuing `change` over the marked issues would do."""

    change: BulkChange
    updates: tuple[tuple[str, JsonObject], ...]
    unchanged: int = 0
    blocked: tuple[tuple[str, str, str], ...] = ()
    """(issue id, its reference: "#12", reason) of issues left out."""
    moves: tuple[tuple[str, int], ...] = field(default=())
    """(current value, how many) of the issues that change, for the summary; for
    `BULK_CELLS`, (the JSON of [field, before, after], how many)."""

    @property
    def uniform(self) -> bool:
        """Whether every issue gets the same changes (one `update_many`)."""
        return len({repr(sorted(changes.items())) for _id, changes in self.updates}) <= 1

    def summary(self, names: Mapping[str, str]) -> list[str]:
        """ "32 issues: status Todo → In progress", "3 cannot move (#4, #9, #12): …", one line
        each."""
        lines: list[str] = []
        change = self.change
        if change.action == BULK_CELLS:
            return self._cells_summary(names)
        if change.action == BULK_DELETE:
            lines.append(f"{count_label(len(self.updates), 'issue')}: delete")
        elif change.action in LABEL_ACTIONS:
            verb = "add" if change.action == ADD_LABEL else "remove"
            noun = "label" if len(change.labels) == 1 else "labels"
            named = ", ".join(change.labels)
            lines.append(f"{count_label(len(self.updates), 'issue')}: {verb} {noun} {named}")
        else:
            target = value_text(change.action, change.value, names)
            for current, count in self.moves:
                was = value_text(change.action, current or None, names)
                name = field_name(change.action)
                lines.append(f"{count_label(count, 'issue')}: {name} {was} → {target}")
            if not self.moves:
                lines.append("No issue changes.")
        left_out: dict[str, list[str]] = {}
        for _id, ref, reason in self.blocked:
            left_out.setdefault(reason, []).append(ref)
        verb = "cannot move" if change.action == STATUS.member else "left out"
        for reason, which in left_out.items():
            lines.append(f"{len(which)} {verb} ({_some(which)}): {reason}")
        if self.unchanged:
            lines.append(f"{count_label(self.unchanged, 'issue')} already so (left alone)")
        return lines

    def _cells_summary(self, names: Mapping[str, str]) -> list[str]:
        """ "3 issues change" ("1 issue changes"), then a line per change ("2 issues: status
        Todo → In progress"), then each issue left out, named."""
        count = len(self.updates)
        lines = [f"{count_label(count, 'issue')} change{'s' if count == 1 else ''}"]
        for key, count in self.moves:
            member, before, after = json.loads(key)
            was, now = value_text(member, before, names), value_text(member, after, names)
            lines.append(f"{count_label(count, 'issue')}: {field_name(member)} {was} → {now}")
        lines.extend(f"not changed: {ref}: {reason}" for _id, ref, reason in self.blocked)
        return lines


NAMED_LEFT_OUT = 5
"""Issues named on a line of issues left out; past that, how many more."""


def _some(refs: list[str]) -> str:
    """ "#12, #14", or "#1, #2, #3, #4, #5 and 3 more"."""
    shown = ", ".join(refs[:NAMED_LEFT_OUT])
    more = len(refs) - NAMED_LEFT_OUT
    return f"{shown} and {more:,} more" if more > 0 else shown


def plan_cells(
    rows: Iterable[IssueRow], edits: Mapping[str, JsonObject], refs: Mapping[str, str]
) -> BulkPlan:
    """Each issue's own changes (`edits`, by id), a status checked against the workflow: an
    issue that cannot make its move is left out whole, and named (by `refs`, "#12")."""
    updates: list[tuple[str, JsonObject]] = []
    blocked: list[tuple[str, str, str]] = []
    moves: Counter[str] = Counter()
    for row in rows:
        changes = edits.get(row.id)
        if not changes:
            continue
        target = changes.get(STATUS.member)
        if isinstance(target, str) and not can_move(row.status or "", target):
            was, now = STATUS.label_of(row.status or "—"), STATUS.label_of(target)
            blocked.append((row.id, refs.get(row.id, row.id), f"{was} → {now} not allowed"))
            continue
        updates.append((row.id, changes))
        for member, value in changes.items():
            before = list(row.labels) if member == LABELS.member else row.cells.get(member)
            moves[json.dumps([member, before, value])] += 1
    return BulkPlan(
        BulkChange(BULK_CELLS), tuple(updates), 0, tuple(blocked), tuple(moves.most_common())
    )


def plan(rows: Iterable[IssueRow], change: BulkChange) -> BulkPlan:
    """Sort the marked issues into changing, unchanged and blocked."""
    updates: list[tuple[str, JsonObject]] = []
    blocked: list[tuple[str, str, str]] = []
    moves: Counter[str] = Counter()
    unchanged = 0
    for row in rows:
        if change.action == STATUS.member and not can_move(row.status or "", str(change.value)):
            reason = (
                f"{STATUS.label_of(row.status or '—')} → {STATUS.label_of(str(change.value))} "
                "not allowed"
            )
            blocked.append((row.id, issue_reference(row.number, row.id), reason))
            continue
        changes = change.apply(row)
        if changes is None:
            unchanged += 1
            continue
        labels = changes.get(LABELS.member)
        most = LABELS.check.max_items
        if isinstance(labels, list) and most is not None and len(labels) > most:
            blocked.append(
                (row.id, issue_reference(row.number, row.id), f"already has {most} labels")
            )
            continue
        updates.append((row.id, changes))
        if change.action not in (BULK_DELETE, *LABEL_ACTIONS):
            moves[str(row.cells.get(change.action) or "")] += 1
    return BulkPlan(change, tuple(updates), unchanged, tuple(blocked), tuple(moves.most_common()))


def queue(cache: Cache, plan: BulkPlan) -> str | None:
    """Queue the plan as one outbox batch; returns its id (for undo), None when empty.

    Uniform changes go in one transaction (`update_many`); per-issue ones (labels) and deletes
    share a batch id across one transaction each.
    """
    if not plan.updates:
        return None
    ids = [issue_id for issue_id, _changes in plan.updates]
    if plan.change.action != BULK_DELETE and plan.uniform:
        return cache.outbox.update_many(Resource.ISSUES, ids, plan.updates[0][1])
    batch = cache.outbox.new_batch_id()
    for issue_id, changes in plan.updates:
        if plan.change.action == BULK_DELETE:
            cache.outbox.delete(Resource.ISSUES, issue_id, batch_id=batch)
        else:
            cache.outbox.update(Resource.ISSUES, issue_id, changes, batch_id=batch)
    return batch
