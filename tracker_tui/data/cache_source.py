"""`IssueSource` over the SQLite cache: the app's real data.

What is left to translate between the list and the cache: who "me" is (the cache's filter
takes a user id), the names ids stand for, and the labels of filter values. Names of users and
projects are read with each page: both tables are small, and reading them fresh means a renamed
project shows at once. Every method is called from worker threads; `cache.Cache` opens a
connection per thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from cache import ME_STATE_KEY as ME_STATE_KEY  # where `GET /me`'s user id is kept
from cache import IssueFilter, IssueRow
from issuefields import Field, Kind
from tracker_tui.data.marks import MarkedSelection
from tracker_tui.data.source import FilterValue, IssueQuery

if TYPE_CHECKING:
    from cache import Cache

NO_VALUE = "-"
"""A picker's value standing for "unassigned" / "no project" (ids never look like this)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_time(text: str | None) -> datetime:
    """An API timestamp as an aware datetime; the epoch when missing or unreadable."""
    if not text:
        return _EPOCH
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return _EPOCH
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def to_filter(query: IssueQuery, me: str | None) -> IssueFilter:
    """The cache's filter for a list query; "mine" (and `assignee:me` in the search) with no
    known user matches nobody."""
    if not query.mine:
        return query.filter.replace(me=me) if me else query.filter
    return query.filter.replace(mine=me or NO_VALUE, me=me)


class CacheIssueSource:
    """The list's rows, counts and filter values, read from a `Cache`."""

    def __init__(self, cache: Cache, *, me: str | None = None) -> None:
        self.cache = cache
        self._me = me

    @property
    def me(self) -> str | None:
        """The current user's id: given at start, or else looked up until the sync engine has
        stored it. A first run (and every demo) starts on an empty cache, before `GET /me`
        has answered, and "mine" must not stay empty for the rest of the session."""
        if self._me is None:
            found = self.cache.state.get(ME_STATE_KEY)
            self._me = found if isinstance(found, str) else None
        return self._me

    def count(self, query: IssueQuery, stop: Callable[[], bool] | None = None) -> int:
        return self.cache.reads.count(to_filter(query, self.me), query.sort, stop=stop)

    def window(self, query: IssueQuery, offset: int, limit: int) -> list[IssueRow]:
        return self.cache.reads.window(to_filter(query, self.me), query.sort, offset, limit)

    def position(self, query: IssueQuery, issue_id: str, near: int | None) -> int | None:
        return self.cache.reads.position(to_filter(query, self.me), query.sort, issue_id, near=near)

    def snapshot(self) -> AbstractContextManager[object]:
        return self.cache.reads.snapshot()

    def names(self) -> dict[str, str]:
        return {**self.user_names(), **self.project_keys()}

    def rows(self, query: IssueQuery, page: int = 500) -> Iterator[IssueRow]:
        """Every matching row in the query's order, a page at a time (bulk edits walk these)."""
        issue_filter = to_filter(query, self.me)
        offset = 0
        while rows := self.cache.reads.window(issue_filter, query.sort, offset, page):
            yield from rows
            offset += len(rows)

    def marked_rows(self, selection: MarkedSelection) -> list[IssueRow]:
        """The issues a bulk edit changes, as they are now: "all in the query" is walked
        page by page, single marks are read one by one."""
        marks = selection.marks
        if marks.all_in_query:
            return [row for row in self.rows(selection.query) if marks.is_marked(row.id)]
        details = (self.cache.reads.issue(issue_id) for issue_id in sorted(marks.ids))
        return [detail.issue for detail in details if detail is not None]

    def distinct_values(self, field: Field) -> list[tuple[FilterValue, str]]:
        values = self.cache.reads.distinct_values(field)
        if field.kind in (Kind.USER, Kind.PROJECT):
            names = self.user_names() if field.kind is Kind.USER else self.project_keys()
            return [
                (value, field.empty if value is None else names.get(value, value))
                for value in values
            ]
        return [(value, field.label_of(value)) for value in values if value is not None]

    def user_names(self) -> dict[str, str]:
        return {user.id: user.name for user in self.cache.reads.users()}

    def project_keys(self) -> dict[str, str]:
        return {project.id: project.key or project.name for project in self.cache.reads.projects()}
