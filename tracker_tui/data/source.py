"""The seam between the app and its data: the app reads issues only through `IssueSource`.

The app never waits on the network to draw: it reads a local cache. Whatever stands behind this
Protocol (the SQLite cache adapter, an in-memory stand-in in tests) is called from thread
workers, so implementations may block, but must be safe to call from any worker thread.
"""

from __future__ import annotations

import dataclasses
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol, get_args

SortKey = Literal["updated", "created", "priority", "status", "title", "number"]
"""The orders the list can be sorted in (the cache keeps an index for each)."""

FilterField = Literal["status", "priority", "assignee", "project", "label"]
"""The fields the filter picker offers; `IssueSource.distinct_values` answers for each."""

SyncState = Literal["synced", "pending", "conflict", "failed"]
"""How a row stands against the server: pending rows carry unsent local edits."""

SORT_KEYS: tuple[SortKey, ...] = get_args(SortKey)
FILTER_FIELDS: tuple[FilterField, ...] = get_args(FilterField)

STATUSES: tuple[str, ...] = ("backlog", "todo", "in_progress", "in_review", "done", "canceled")
"""The contract's statuses in workflow order (a server may send others: shown as they are)."""

PRIORITIES: tuple[str, ...] = ("urgent", "high", "medium", "low", "none")
"""The contract's priorities, most pressing first."""

NATURAL_DESCENDING: dict[SortKey, bool] = {
    "updated": True,
    "created": True,
    "priority": True,
    "status": False,
    "title": False,
    "number": True,
}
"""The direction a column sorts in when first picked: newest first, urgent first, A to Z."""


@dataclass(frozen=True)
class IssueQuery:
    """A filter and a sort: immutable and hashable, so it keys caches and stale-result checks.

    Values of `assignees` and `projects` are the ids the source hands out in
    `distinct_values`; `mine` is resolved by the source, which knows who "me" is.
    """

    statuses: frozenset[str] = frozenset()
    priorities: frozenset[str] = frozenset()
    assignees: frozenset[str] = frozenset()
    projects: frozenset[str] = frozenset()
    labels: frozenset[str] = frozenset()
    text: str = ""
    mine: bool = False
    sort: SortKey = "updated"
    descending: bool = True

    def values(self, field: FilterField) -> frozenset[str]:
        """The selected values of one filter field (the picker and the chips go by field)."""
        return {
            "status": self.statuses,
            "priority": self.priorities,
            "assignee": self.assignees,
            "project": self.projects,
            "label": self.labels,
        }[field]

    def with_values(self, field: FilterField, values: frozenset[str]) -> IssueQuery:
        """A copy with one filter field's selection replaced."""
        if field == "status":
            return dataclasses.replace(self, statuses=values)
        if field == "priority":
            return dataclasses.replace(self, priorities=values)
        if field == "assignee":
            return dataclasses.replace(self, assignees=values)
        if field == "project":
            return dataclasses.replace(self, projects=values)
        return dataclasses.replace(self, labels=values)

    def toggled(self, field: FilterField, value: str) -> IssueQuery:
        """A copy with `value` added to or removed from one field's selection."""
        return self.with_values(field, self.values(field) ^ {value})

    def with_sort(self, sort: SortKey, descending: bool | None = None) -> IssueQuery:
        """A copy sorted by `sort`, in its natural direction unless one is given."""
        if descending is None:
            descending = NATURAL_DESCENDING[sort]
        return dataclasses.replace(self, sort=sort, descending=descending)

    def next_sort(self) -> IssueQuery:
        """A copy sorted by the next column in `SORT_KEYS` (wrapping), in its natural direction."""
        index = SORT_KEYS.index(self.sort)
        return self.with_sort(SORT_KEYS[(index + 1) % len(SORT_KEYS)])

    def flipped(self) -> IssueQuery:
        """A copy with the sort direction reversed."""
        return dataclasses.replace(self, descending=not self.descending)

    def unfiltered(self) -> IssueQuery:
        """A copy with every filter and the search text cleared, keeping the sort."""
        return IssueQuery(sort=self.sort, descending=self.descending)

    @property
    def filter_key(self) -> IssueQuery:
        """The query with the sort normalised: equal for two queries that match the same rows.

        Marks are kept across a sort change but dropped when this changes.
        """
        return IssueQuery(
            statuses=self.statuses,
            priorities=self.priorities,
            assignees=self.assignees,
            projects=self.projects,
            labels=self.labels,
            text=self.text,
            mine=self.mine,
        )

    @property
    def is_filtered(self) -> bool:
        """Whether anything narrows the list (the chip bar shows "all issues" otherwise)."""
        return self.filter_key != IssueQuery()


@dataclass(frozen=True)
class IssueRow:
    """What one line of the list shows: display-ready, so drawing never queries again."""

    id: str
    number: int | None
    title: str
    status: str
    priority: str
    assignee: str | None
    """The assignee's display name, not the user id."""
    project: str | None
    """The project's key (e.g. `WEB`), not its id."""
    labels: tuple[str, ...]
    updated_at: datetime
    sync_state: SyncState


class IssueSource(Protocol):
    """Read access to the issues, as fast as the cache can answer a page.

    Every method may be called from any worker thread, possibly concurrently, and may raise:
    the app turns an exception into a notification, never a traceback.
    """

    def count(self, query: IssueQuery) -> int:
        """How many issues match `query`."""
        ...

    def window(self, query: IssueQuery, offset: int, limit: int) -> list[IssueRow]:
        """Up to `limit` matching issues in `query`'s order, starting at `offset`."""
        ...

    def position(self, query: IssueQuery, issue_id: str, near: int | None) -> int | None:
        """The offset at which `window` shows the issue, None when `query` does not match it.
        `near` is where it was last seen: a hint of which end of the list to look from."""
        ...

    def snapshot(self) -> AbstractContextManager[object]:
        """Calls made inside it on the calling thread see one state of the data, so a count,
        a position and a window read together agree."""
        ...

    def distinct_values(self, field: FilterField) -> list[tuple[str, str]]:
        """The values the filter picker offers for `field`, as `(value, label)` pairs."""
        ...
