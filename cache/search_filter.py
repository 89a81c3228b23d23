"""A search's qualifiers (cache.search_syntax) laid over an issue filter, names resolved
against the cache: `assignee:ada` is the user whose id, name or first name is `ada` (any
case), `assignee:me` the filter's `me`, `project:web` the project with that key (or id, or
name), `label:Bug` the label spelled so in any case, `none` the empty value.

A qualifier and the filter picker's selection of the same field both hold: the list shows
the issues both allow (their intersection), nothing when they share no value. A name that
matches nothing matches no issue, as a filter on it would.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from cache.models import IssueFilter, Resource
from cache.overlay import Overlay
from cache.search_syntax import ME, NONE, Search

NOTHING = "\x00"
"""A value no issue holds: what a field is narrowed to when the picker and the search
share no value, or a name matches nobody."""


def _merge(chosen: frozenset[str | None], typed: frozenset[str | None]) -> frozenset[str | None]:
    if not typed:
        return chosen
    if not chosen:
        return typed
    return (chosen & typed) or frozenset({NOTHING})


def _users(conn: sqlite3.Connection, me: str | None, typed: str) -> set[str | None]:
    wanted = typed.lower()
    if wanted == ME:
        return {me or NOTHING}
    if wanted == NONE:
        return {None}
    found: set[str | None] = set()
    for user_id, name in conn.execute("SELECT id, name FROM users"):
        names = str(name).lower()
        if wanted in (str(user_id).lower(), names, names.split(" ")[0]):
            found.add(str(user_id))
    return found or {NOTHING}


def _projects(conn: sqlite3.Connection, view: Overlay, typed: str) -> set[str | None]:
    wanted = typed.lower()
    if wanted == NONE:
        return {None}
    rows = {
        str(row[0]): (row[1], row[2]) for row in conn.execute("SELECT id, key, name FROM projects")
    }
    for effective in view.of(Resource.PROJECTS).values():
        if effective.record is not None:
            rows[effective.id] = (effective.record.get("key"), effective.record.get("name"))
    found: set[str | None] = {
        project_id
        for project_id, (key, name) in rows.items()
        if wanted in (project_id.lower(), str(key or "").lower(), str(name or "").lower())
    }
    return found or {NOTHING}


def _labels(conn: sqlite3.Connection, typed: str) -> set[str]:
    wanted = typed.lower()
    known = [str(row[0]) for row in conn.execute("SELECT label FROM label_bits")]
    return {label for label in known if label.lower() == wanted} or {typed}


def apply(conn: sqlite3.Connection, view: Overlay, f: IssueFilter, search: Search) -> IssueFilter:
    """`f` narrowed by the search's qualifiers (its text is left as typed)."""
    changes: dict[str, Any] = {}
    for word, values in search.qualifiers:
        typed: set[str | None] = set()
        for value in values:
            if word == "assignee":
                typed |= _users(conn, f.me, value)
            elif word == "project":
                typed |= _projects(conn, view, value)
            elif word == "label":
                typed |= _labels(conn, value)
            else:
                typed.add(value)
        changes[word] = _merge(getattr(f, word), frozenset(typed))
    return f.replace(**changes) if changes else f
