"""`IssueSource` over the SQLite cache: the app's real data.

The list speaks in display terms (assignee names, project keys, `datetime`s); the cache speaks in
ids and ISO text. This adapter translates both ways. Names of users and projects are read with
each page: both tables are small, and reading them fresh means a renamed project shows at once.
Every method is called from worker threads; `cache.Cache` opens a connection per thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from datetime import UTC, datetime

from cache import Cache, IssueFilter, IssueSort, PickerField, SortKey
from cache import IssueRow as CacheRow
from tracker_tui.data.marks import MarkedSelection
from tracker_tui.data.source import FilterField, IssueQuery, IssueRow, SyncState
from tracker_tui.formatting import priority_label, status_label

NO_VALUE = "-"
"""The picker value standing for "unassigned" / "no project" (ids never look like this)."""
ME_STATE_KEY = "me_user_id"
"""Where the sync engine keeps the current user's id (from `GET /me`) in the cache."""

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
    """The cache's filter for a list query; "mine" with no known user matches nobody."""

    def ids(values: frozenset[str]) -> frozenset[str | None]:
        return frozenset(None if value == NO_VALUE else value for value in values)

    return IssueFilter(
        status=query.statuses,
        priority=query.priorities,
        assignee=ids(query.assignees),
        project=ids(query.projects),
        label=query.labels,
        text=query.text,
        mine=(me or NO_VALUE) if query.mine else None,
    )


def to_sort(query: IssueQuery) -> IssueSort:
    return IssueSort(SortKey(query.sort), query.descending)


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
            found = self.cache.get_state(ME_STATE_KEY)
            self._me = found if isinstance(found, str) else None
        return self._me

    def count(self, query: IssueQuery) -> int:
        return self.cache.count(to_filter(query, self.me))

    def window(self, query: IssueQuery, offset: int, limit: int) -> list[IssueRow]:
        rows = self.cache.window(to_filter(query, self.me), to_sort(query), offset, limit)
        users = self.user_names()
        projects = self.project_keys()
        return [self._row(row, users, projects) for row in rows]

    def position(self, query: IssueQuery, issue_id: str, near: int | None) -> int | None:
        return self.cache.position(to_filter(query, self.me), to_sort(query), issue_id, near=near)

    def snapshot(self) -> AbstractContextManager[object]:
        return self.cache.snapshot()

    def raw_rows(self, query: IssueQuery, page: int = 500) -> Iterator[CacheRow]:
        """Every matching row in the query's order, a page at a time (bulk edits walk these)."""
        issue_filter, sort = to_filter(query, self.me), to_sort(query)
        offset = 0
        while rows := self.cache.window(issue_filter, sort, offset, page):
            yield from rows
            offset += len(rows)

    def marked_rows(self, selection: MarkedSelection) -> list[CacheRow]:
        """The issues a bulk edit changes, as they are now: "all in the query" is walked
        page by page, single marks are read one by one."""
        marks = selection.marks
        if marks.all_in_query:
            return [row for row in self.raw_rows(selection.query) if marks.is_marked(row.id)]
        details = (self.cache.issue(issue_id) for issue_id in sorted(marks.ids))
        return [detail.issue for detail in details if detail is not None]

    def distinct_values(self, field: FilterField) -> list[tuple[str, str]]:
        values = self.cache.distinct_values(PickerField(field))
        if field == "assignee":
            names = self.user_names()
            return [_named(value, names, "Unassigned") for value in values]
        if field == "project":
            keys = self.project_keys()
            return [_named(value, keys, "No project") for value in values]
        present = [value for value in values if value is not None]
        if field == "status":
            return [(value, status_label(value)) for value in present]
        if field == "priority":
            return [(value, priority_label(value, none="No priority")) for value in present]
        return [(value, value) for value in present]

    def user_names(self) -> dict[str, str]:
        return {user.id: user.name for user in self.cache.users()}

    def project_keys(self) -> dict[str, str]:
        return {project.id: project.key or project.name for project in self.cache.projects()}

    @staticmethod
    def _row(row: CacheRow, users: dict[str, str], projects: dict[str, str]) -> IssueRow:
        state: SyncState = row.sync_state.value
        return IssueRow(
            id=row.id,
            number=row.number,
            title=row.title,
            status=row.status or "",
            priority=row.priority or "none",
            assignee=users.get(row.assignee, row.assignee) if row.assignee else None,
            project=projects.get(row.project_id, row.project_id) if row.project_id else None,
            labels=row.labels,
            updated_at=parse_time(row.updated_at),
            sync_state=state,
        )


def _named(value: str | None, names: dict[str, str], missing: str) -> tuple[str, str]:
    if value is None:
        return NO_VALUE, missing
    return value, names.get(value, value)
