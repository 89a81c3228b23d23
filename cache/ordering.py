"""Sort orders of the issue list: the index that serves each, and the same order in Python.

Every order ends in `rid`, so it is total and an index can serve it without a sort step:
each index lists the sort key, then `rid`, then the filter columns (so filters are checked
from the index without touching the wide table rows). Descending is the same index walked
the other way (backwards, except for priority, whose index holds urgent first), hence the
exact reverse of ascending.

The Python keys reproduce SQLite's comparison rules (NULL < numbers < text; NOCASE folds
ASCII only; text compares by code point, which is UTF-8 byte order) so that the few locally
edited rows can be merged into a page of server rows at exactly the place SQL would put them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import total_ordering

from cache.models import Cell
from cache.resources import KEY_COLUMNS, rank_column
from issuefields import SORTS, Kind, Sort
from issuefields.frozen import Frozen

_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

Key = tuple[object, ...]


def value_key(value: Cell) -> Key:
    """SQLite's cross-type order: NULL, then numbers, then text."""
    if value is None:
        return (0, 0)
    if isinstance(value, int | float):
        return (1, value)
    return (2, value)


def nocase_key(value: Cell) -> Key:
    if type(value) is str:
        return (2, value.translate(_ASCII_FOLD))
    return value_key(value)


@total_ordering
class Desc(Frozen):
    """A key component that sorts in reverse (an index column declared DESC)."""

    _fields = ("key",)
    __slots__ = _fields
    key: Key

    def __init__(self, key: Key) -> None:
        self._init(key)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Desc):
            return NotImplemented
        return other.key < self.key


class Ordering(Frozen):
    _fields = ("index", "columns", "ascending_sql", "descending_sql", "key")
    __slots__ = _fields
    index: str
    columns: tuple[str, ...]
    ascending_sql: str
    descending_sql: str
    key: Callable[[Sequence[Cell]], Key]

    def __init__(
        self,
        index: str,
        columns: tuple[str, ...],
        ascending_sql: str,
        descending_sql: str,
        key: Callable[[Sequence[Cell]], Key],
    ) -> None:
        self._init(index, columns, ascending_sql, descending_sql, key)

    def sql(self, descending: bool) -> str:
        return self.descending_sql if descending else self.ascending_sql

    def key_of(self, values: Mapping[str, Cell]) -> Key:
        return self.key([values[name] for name in self.columns])


def _plain(column: str, index: str, *, nocase: bool = False) -> Ordering:
    """By the column's value; `nocase` folds ASCII case (a text a person reads, the title)."""
    term = f"{column} COLLATE NOCASE" if nocase else column
    key = nocase_key if nocase else value_key
    return Ordering(
        index,
        (column, "rid"),
        f"{term}, rid",
        f"{term} DESC, rid DESC",
        lambda v: (key(v[0]), v[1]),
    )


UPDATED = KEY_COLUMNS["updated_at"]
"""Time orders read the key column of a timestamp (`cache.resources.stamp_order`), which
sorts as its text does and is what the indexes hold."""


def _ranked(rank: str, index: str) -> Ordering:
    """Within a rank, the default order (newest first: `updated_key DESC, rid DESC`), so one
    rank of the index is also a range in that order (cache.filtering drives filters with it)."""
    return Ordering(
        index,
        (rank, UPDATED, "rid"),
        f"{rank}, {UPDATED} DESC, rid DESC",
        f"{rank} DESC, {UPDATED}, rid",
        lambda v: (v[0], Desc(value_key(v[1])), Desc((v[2],))),
    )


def _ranked_high_first(rank: str, index: str) -> Ordering:
    """A rank whose lowest value means most (priority: urgent is 0): descending is from the
    most to the least, so it walks the index forwards, in the default order within a rank;
    ascending is its exact reverse (least first, oldest first within a rank)."""
    return Ordering(
        index,
        (rank, UPDATED, "rid"),
        f"{rank} DESC, {UPDATED}, rid",
        f"{rank}, {UPDATED} DESC, rid DESC",
        lambda v: (Desc((v[0],)), value_key(v[1]), v[2]),
    )


def _ordering(sort: Sort) -> Ordering:
    """A sort by a choice field ranks its values (`_ranked_high_first` when it first sorts
    descending, so that direction walks the index forwards too), by one line of text folds
    ASCII case, by a time its key column, by anything else compares values. Its index is
    `issues_by_<key>`."""
    field, index = sort.field, f"issues_by_{sort.key}"
    if field.kind is Kind.CHOICE:
        ranked = _ranked_high_first if sort.descending else _ranked
        return ranked(rank_column(field), index)
    column = KEY_COLUMNS[field.member] if field.kind is Kind.TIME else field.member
    return _plain(column, index, nocase=field.kind is Kind.TEXT)


ORDERINGS: dict[str, Ordering] = {sort.key: _ordering(sort) for sort in SORTS}
"""Every sort key's order (`issuefields.SORTS`)."""


def walk_terms(ordering: Ordering, descending: bool) -> list[tuple[str, bool]]:
    """The `ORDER BY` terms of a walk as `(expression, ascending)`, one per column of
    `ordering.columns`: read from `ascending_sql`, each flipped when `descending` (which is
    the exact reverse), so they cannot drift from the order windows are read in."""
    terms: list[tuple[str, bool]] = []
    for part in ordering.ascending_sql.split(","):
        words = part.split()
        ascending = words[-1].upper() != "DESC"
        if words[-1].upper() in ("ASC", "DESC"):
            words = words[:-1]
        terms.append((" ".join(words), ascending != descending))
    return terms


NOT_NULL = frozenset({"rid", "title", "status_rank", "priority_rank"})
"""Sort columns the issues table declares NOT NULL: no range of their NULLs is asked for
(each would cost a query of its own where the ranges are read one by one)."""


def before_ranges(
    ordering: Ordering, descending: bool, cells: Sequence[Cell]
) -> list[tuple[str, tuple[Cell, ...]]]:
    """Conditions selecting the rows strictly before the row whose `ordering.columns` hold
    `cells`, in the walk's order: disjoint, and each a range of the ordering's index (equal
    on a prefix of its columns, then one comparison), so counting them walks only the index
    entries before that row. NULL sorts first, as in SQLite."""
    terms = walk_terms(ordering, descending)
    if len(terms) != len(cells):
        raise ValueError(f"{ordering.index}: {len(terms)} sort terms for {len(cells)} values")
    ranges: list[tuple[str, tuple[Cell, ...]]] = []
    prefix: list[str] = []
    params: tuple[Cell, ...] = ()
    for (expression, ascending), value, column in zip(terms, cells, ordering.columns, strict=True):
        if ascending and value is not None:
            if column not in NOT_NULL:
                ranges.append((" AND ".join([*prefix, f"{expression} IS NULL"]), params))
            ranges.append((" AND ".join([*prefix, f"{expression} < ?"]), (*params, value)))
        elif not ascending and value is None:
            ranges.append((" AND ".join([*prefix, f"{expression} IS NOT NULL"]), params))
        elif not ascending:
            ranges.append((" AND ".join([*prefix, f"{expression} > ?"]), (*params, value)))
        if value is None:
            prefix.append(f"{expression} IS NULL")
        else:
            prefix.append(f"{expression} = ?")
            params = (*params, value)
    return ranges
