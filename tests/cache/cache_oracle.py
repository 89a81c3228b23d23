"""A plain-Python model of the effective issue list, written independently of cache.query,
to check windows and counts against.

Records carry the tie-breaking position the cache gives them: server rows their insertion
order, records created offline one after all server rows in creation order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cache import IssueFilter, IssueSort

STATUS = ["backlog", "todo", "in_progress", "in_review", "done", "canceled"]
PRIORITY = ["urgent", "high", "medium", "low", "none"]


@dataclass
class Row:
    id: str
    position: int
    record: dict[str, Any]
    comments: list[str]


def _null_first(value: Any) -> tuple[int, Any]:
    if value is None:
        return (0, 0)
    if isinstance(value, bool | int | float):
        return (1, value)
    return (2, value)


def _rank(value: Any, order: list[str]) -> int:
    return order.index(value) if value in order else len(order)


class _Reversed:
    def __init__(self, value: tuple[int, Any]) -> None:
        self.value = value

    def __lt__(self, other: _Reversed) -> bool:
        return other.value < self.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and self.value == other.value


def sort_key(row: Row, key: str) -> tuple[Any, ...]:
    r = row.record
    number = r.get("number")
    if key == "updated":
        return (_null_first(r.get("updated_at")), row.position)
    if key == "created":
        return (_null_first(r.get("created_at")), row.position)
    if key == "number":
        return (_null_first(number if type(number) is int else None), row.position)
    if key == "title":
        title = r.get("title") or ""
        return ("".join(c.lower() if "A" <= c <= "Z" else c for c in title), row.position)
    if key == "priority":  # ascending: the least urgent first, oldest first within one
        return (-_rank(r.get("priority"), PRIORITY), _null_first(r.get("updated_at")), row.position)
    rank = _rank(r.get("status"), STATUS)
    return (rank, _Reversed(_null_first(r.get("updated_at"))), -row.position)


def ordered(rows: list[Row], sort: IssueSort) -> list[str]:
    return [
        row.id
        for row in sorted(rows, key=lambda row: sort_key(row, sort.key), reverse=sort.descending)
    ]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def text_matches(query: str, row: Row) -> bool:
    """Every word of the query in the issue's text or in one comment; the last word is a
    prefix from 3 characters on, unless the query ends in a space."""
    words = _words(query)
    if not words:
        return True
    last = words[-1]
    prefix: str | None = None
    exact = words
    if len(last) >= 3 and not query[-1:].isspace():
        prefix, exact = last, [w for w in words[:-1] if w != last]

    def hit(text: str) -> bool:
        tokens = set(_words(text))
        if not all(w in tokens for w in exact):
            return False
        return prefix is None or any(t.startswith(prefix) for t in tokens)

    r = row.record
    return hit(f"{r.get('title', '')} {r.get('description', '')}") or any(
        hit(body) for body in row.comments
    )


def accepts(flt: IssueFilter, row: Row) -> bool:
    r = row.record
    labels = [x for x in r.get("labels") or [] if isinstance(x, str)]
    return (
        (not flt.status or r.get("status") in flt.status)
        and (not flt.priority or r.get("priority") in flt.priority)
        and (not flt.assignee or r.get("assignee") in flt.assignee)
        and (not flt.project or r.get("project_id") in flt.project)
        and (flt.mine is None or r.get("assignee") == flt.mine)
        and (not flt.label or bool(flt.label.intersection(labels)))
        and (not flt.text or text_matches(flt.text, row))
    )


def expected(rows: list[Row], flt: IssueFilter, sort: IssueSort) -> list[str]:
    return ordered([row for row in rows if accepts(flt, row)], sort)
