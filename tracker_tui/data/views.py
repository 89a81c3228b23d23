"""Saved views: a named filter and sort, recalled with a number key.

The app receives its views from the caller and hands every change back through a callback; the
caller persists them (in the profile config), so these plain-data conversions are the format.
Reading is forgiving: a hand-edited config with unknown keys or bad values yields the defaults
for those parts rather than an error at start-up.
"""

from __future__ import annotations

from typing import Any

from cache import IssueSort
from issuefields import ASSIGNEE, LABELS, PRIORITY, PROJECT, SORT_KEYS, STATUS, Field
from issuefields.frozen import Frozen
from tracker_tui.data.cache_source import NO_VALUE
from tracker_tui.data.source import FilterValue, IssueQuery

MAX_VIEWS = 9
"""Views live on the keys 1 to 9."""

_SET_FIELDS: tuple[tuple[str, Field], ...] = (
    ("statuses", STATUS),
    ("priorities", PRIORITY),
    ("assignees", ASSIGNEE),
    ("projects", PROJECT),
    ("labels", LABELS),
)
"""The format's name of each filter field's values (a config file written by an earlier
version names them so); "none" (unassigned, no project) is written `NO_VALUE`."""


def _stored(value: FilterValue) -> str:
    return NO_VALUE if value is None else value


def _read(field: Field, value: str) -> FilterValue:
    return None if value == NO_VALUE and field in (ASSIGNEE, PROJECT) else value


class SavedView(Frozen):
    """A filter and sort the user named; its position in the list is its number key."""

    _fields = ("name", "query")
    __slots__ = _fields
    name: str
    query: IssueQuery

    def __init__(self, name: str, query: IssueQuery) -> None:
        self._init(name, query)


def _plain(query: IssueQuery) -> dict[str, Any]:
    """Every part of `query` as plain data, sets as sorted lists."""
    data: dict[str, Any] = {
        name: sorted(_stored(value) for value in query.values(field)) for name, field in _SET_FIELDS
    }
    data.update(
        text=query.filter.text,
        mine=query.mine,
        sort=query.sort.key,
        descending=query.sort.descending,
    )
    return data


def query_to_dict(query: IssueQuery) -> dict[str, Any]:
    """A JSON/TOML-ready form of `query`, leaving out what equals the default."""
    default = _plain(IssueQuery())
    return {key: value for key, value in _plain(query).items() if value != default[key]}


def query_from_dict(data: dict[str, Any]) -> IssueQuery:
    """The query `data` describes; anything missing or malformed keeps its default."""
    query = IssueQuery()
    for name, field in _SET_FIELDS:
        values = data.get(name)
        if isinstance(values, list) and all(isinstance(value, str) for value in values):
            query = query.with_values(field, frozenset(_read(field, value) for value in values))
    if isinstance(text := data.get("text"), str):
        query = query.with_filter(text=text)
    if isinstance(mine := data.get("mine"), bool):
        query = query.replace(mine=mine)
    sort = data.get("sort")
    key = sort if isinstance(sort, str) and sort in SORT_KEYS else query.sort.key
    descending = data.get("descending")
    if not isinstance(descending, bool):
        descending = query.sort.descending
    return query.replace(sort=IssueSort(key, descending))


def view_to_dict(view: SavedView) -> dict[str, Any]:
    """A JSON/TOML-ready form of `view`."""
    return {"name": view.name, "query": query_to_dict(view.query)}


def view_from_dict(data: dict[str, Any]) -> SavedView | None:
    """The view `data` describes, or None when it has no usable name."""
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    query = data.get("query")
    return SavedView(name.strip(), query_from_dict(query if isinstance(query, dict) else {}))


def with_view(views: list[SavedView], view: SavedView) -> list[SavedView] | None:
    """`views` with `view` saved: replacing one of the same name in place, else appended.

    None when all nine slots are taken by other names (the caller says so to the user).
    """
    for index, existing in enumerate(views):
        if existing.name == view.name:
            return [*views[:index], view, *views[index + 1 :]]
    if len(views) >= MAX_VIEWS:
        return None
    return [*views, view]


def renamed(views: list[SavedView], index: int, name: str) -> list[SavedView] | str:
    """`views` with view `index` renamed, or why not (a blank name, one another view has)."""
    name = name.strip()
    if not name:
        return "A view needs a name."
    if any(view.name == name for i, view in enumerate(views) if i != index):
        return f"Another view is already called “{name}”."
    return [view.replace(name=name) if i == index else view for i, view in enumerate(views)]


def without(views: list[SavedView], index: int) -> list[SavedView]:
    """`views` with view `index` deleted: the ones after it move down a number key."""
    return [view for i, view in enumerate(views) if i != index]


def moved(views: list[SavedView], index: int, step: int) -> list[SavedView]:
    """`views` with view `index` moved `step` places (its number key changes with it);
    unchanged past either end."""
    target = index + step
    if not (0 <= index < len(views) and 0 <= target < len(views)):
        return list(views)
    order = list(views)
    order.insert(target, order.pop(index))
    return order
