"""The seam between the app and its data: the app reads issues only through `IssueSource`.

The app never waits on the network to draw: it reads a local cache. Whatever stands behind this
Protocol (the SQLite cache adapter, an in-memory stand-in in tests) is called from thread
workers, so implementations may block, but must be safe to call from any worker thread.

The list speaks the cache's terms (`cache.IssueFilter`, `IssueSort`, `IssueRow`) and draws
them with the field table (`issuefields`); what a source adds is who "me" is and the names
ids stand for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

from cache import IssueFilter, IssueRow, IssueSort
from issuefields import SORT_KEYS, SORTS_BY_KEY, Field
from issuefields.frozen import Frozen

FilterValue = str | None
"""A value of a filter field; None is "unassigned" / "no project"."""


class IssueQuery(Frozen):
    """A filter and a sort: immutable and hashable, so it keys caches and stale-result checks.

    `mine` is "assigned to me": the source puts its user's id in the filter when it reads
    (who "me" is may be learnt after the query was made), so `filter.mine` stays None here.
    """

    _fields = ("filter", "sort", "mine")
    __slots__ = _fields
    filter: IssueFilter
    sort: IssueSort
    mine: bool

    def __init__(
        self,
        filter: IssueFilter | None = None,
        sort: IssueSort | None = None,
        mine: bool = False,
    ) -> None:
        self._init(
            IssueFilter() if filter is None else filter,
            IssueSort() if sort is None else sort,
            mine,
        )

    def values(self, field: Field) -> frozenset[FilterValue]:
        """The selected values of one filter field (the picker and the chips go by field)."""
        values: frozenset[FilterValue] = getattr(self.filter, field.word)
        return values

    def with_values(self, field: Field, values: frozenset[FilterValue]) -> IssueQuery:
        """A copy with one filter field's selection replaced."""
        return self.with_filter(**{field.word: values})

    def with_filter(self, **changes: Any) -> IssueQuery:
        """A copy with parts of the filter replaced (by `IssueFilter`'s names)."""
        return self.replace(filter=self.filter.replace(**changes))

    def toggled(self, field: Field, value: FilterValue) -> IssueQuery:
        """A copy with `value` added to or removed from one field's selection."""
        return self.with_values(field, self.values(field) ^ {value})

    def with_sort(self, key: str, descending: bool | None = None) -> IssueQuery:
        """A copy sorted by `key`, in its natural direction unless one is given."""
        if descending is None:
            descending = SORTS_BY_KEY[key].descending
        return self.replace(sort=IssueSort(key, descending))

    def next_sort(self) -> IssueQuery:
        """A copy sorted by the next column in `SORT_KEYS` (wrapping), in its natural direction."""
        index = SORT_KEYS.index(self.sort.key)
        return self.with_sort(SORT_KEYS[(index + 1) % len(SORT_KEYS)])

    def flipped(self) -> IssueQuery:
        """A copy with the sort direction reversed."""
        return self.with_sort(self.sort.key, not self.sort.descending)

    def unfiltered(self) -> IssueQuery:
        """A copy with every filter and the search text cleared, keeping the sort."""
        return IssueQuery(sort=self.sort)

    @property
    def filter_key(self) -> IssueQuery:
        """The query with the sort normalised: equal for two queries that match the same rows.

        Marks are kept across a sort change but dropped when this changes.
        """
        return IssueQuery(filter=self.filter, mine=self.mine)

    @property
    def is_filtered(self) -> bool:
        """Whether anything narrows the list (the chip bar shows "all issues" otherwise)."""
        return self.filter_key != IssueQuery()


class IssueSource(Protocol):
    """Read access to the issues, as fast as the cache can answer a page.

    Every method may be called from any worker thread, possibly concurrently, and may raise:
    the app turns an exception into a notification, never a traceback.
    """

    def count(self, query: IssueQuery, stop: Callable[[], bool] | None = None) -> int:
        """How many issues match `query`. `stop` is asked now and then while counting: once
        it says True the answer is no longer wanted, and the source may give up by raising."""
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

    def names(self) -> Mapping[str, str]:
        """What the list shows for an id: users' names and projects' keys, read fresh with
        each page (both are small, and a renamed project shows at once)."""
        ...

    def distinct_values(self, field: Field) -> list[tuple[FilterValue, str]]:
        """The values the filter picker offers for `field`, as `(value, label)` pairs."""
        ...
