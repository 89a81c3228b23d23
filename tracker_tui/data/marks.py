"""Marks for bulk edits, sized by the user's intent rather than by the number of rows.

Marking every one of 100,000 issues in a filter must cost nothing, so "all in the query" is a
flag and the individually unmarked rows are its exceptions. Without the flag, `ids` are the
marked rows. Inverting swaps the meaning of `ids` without touching it.
"""

from __future__ import annotations

from collections.abc import Iterable

from cache.models import Frozen
from tracker_tui.data.source import IssueQuery


class Marks(Frozen):
    """Which rows of one query are marked: immutable, so a change is a new value to compare."""

    _fields = ("all_in_query", "ids")
    __slots__ = _fields
    all_in_query: bool
    ids: frozenset[str]
    """Marked ids, or with `all_in_query` the ids excepted from "all"."""

    def __init__(self, all_in_query: bool = False, ids: frozenset[str] = frozenset()) -> None:
        self._init(all_in_query, ids)

    def is_marked(self, issue_id: str) -> bool:
        """Whether the row with `issue_id` shows the mark glyph."""
        return (issue_id in self.ids) != self.all_in_query

    def count(self, total: int) -> int:
        """How many rows are marked, given how many rows the query matches."""
        return total - len(self.ids) if self.all_in_query else len(self.ids)

    def toggled(self, issue_id: str) -> Marks:
        """The marks with one row flipped."""
        return Marks(self.all_in_query, self.ids ^ {issue_id})

    def marked(self, issue_ids: Iterable[str]) -> Marks:
        """The marks with every one of `issue_ids` marked (a range extension never unmarks)."""
        new = frozenset(issue_ids)
        ids = self.ids - new if self.all_in_query else self.ids | new
        return Marks(self.all_in_query, ids)

    def inverted(self) -> Marks:
        """Every marked row unmarked and every other row of the query marked."""
        return Marks(not self.all_in_query, self.ids)

    @classmethod
    def everything(cls) -> Marks:
        """Every row of the query marked, whatever its size."""
        return cls(all_in_query=True)


class MarkedSelection(Frozen):
    """Marks bound to the query they were made in: what a bulk edit is asked to change.

    The bulk editor resolves it against the cache at the moment it runs, so "all in query"
    never has to be expanded into 100,000 ids in the UI.
    """

    _fields = ("query", "marks", "count")
    __slots__ = _fields
    query: IssueQuery
    marks: Marks
    count: int

    def __init__(self, query: IssueQuery, marks: Marks, count: int) -> None:
        self._init(query, marks, count)
