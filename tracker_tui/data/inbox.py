"""The inbox as people and scripts read it: the cache's change log (`Cache.inbox`) grouped by
issue, newest first, each change in words (`priority Low → High`, `assignee — → Ana`) with
users named and projects by key, and as JSON for `tracker-tui inbox --json` and `watch --json`.

Shared by the inbox screen and the command line, so both say a change the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cache import Cache, Change, ChangeKind, JsonValue
from issuefields import FIELDS, Kind

EMPTY = "—"
"""How a value that is not set reads (no assignee, no project, no labels)."""
SHOWN_CHARS = 40
"""A value (a title) longer than this is cut, so a change fits on one line."""


@dataclass
class Names:
    """Names for the ids a change mentions, read once per use."""

    cache: Cache
    _users: dict[str, str] | None = field(default=None, init=False)
    _projects: dict[str, str] | None = field(default=None, init=False)
    _issues: dict[str, tuple[int | None, str]] = field(default_factory=dict, init=False)

    def user(self, user_id: str) -> str:
        if self._users is None:
            self._users = {user.id: user.name for user in self.cache.reads.users()}
        return self._users.get(user_id, user_id)

    def project(self, project_id: str) -> str:
        if self._projects is None:
            self._projects = {p.id: p.key or p.name for p in self.cache.reads.projects()}
        return self._projects.get(project_id, project_id)

    def issue(self, issue_id: str) -> tuple[int | None, str]:
        """Its number and title, as the cache shows it now (empty when it is gone)."""
        if issue_id not in self._issues:
            detail = self.cache.reads.issue(issue_id)
            self._issues[issue_id] = (
                (None, "") if detail is None else (detail.issue.number, detail.issue.title)
            )
        return self._issues[issue_id]


def value_text(name: str, value: JsonValue, names: Names) -> str:
    """A field's value as a person reads it, cut to `SHOWN_CHARS`."""
    text = _value_text(name, value, names)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def _value_text(name: str, value: JsonValue, names: Names) -> str:
    known = FIELDS.get(name)
    if value is None or value == [] or value == "":
        return EMPTY
    if known is not None and isinstance(value, str):
        if known.kind is Kind.CHOICE:
            return known.label_of(value)
        if known.kind is Kind.USER:
            return names.user(value)
        if known.kind is Kind.PROJECT:
            return names.project(value)
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return str(value)


def field_word(name: str) -> str:
    known = FIELDS.get(name)
    return known.label.lower() if known is not None else name


def describe(change: Change, names: Names) -> str:
    """One change in words."""
    if change.kind is ChangeKind.COMMENT:
        who = names.user(change.who) if change.who else "someone"
        return f"{who} commented: {change.new}"
    if change.kind is ChangeKind.NEW_ISSUE:
        return "new issue assigned to you"
    word = field_word(change.field)
    if change.elided:
        return f"{word} changed"
    old = value_text(change.field, change.old, names)
    new = value_text(change.field, change.new, names)
    return f"{word} {old} → {new}"


@dataclass(frozen=True)
class IssueChanges:
    """One issue's changes in the inbox, newest first."""

    issue_id: str
    number: int | None
    title: str
    changes: tuple[Change, ...]
    lines: tuple[str, ...]
    """Each change in words, in the order of `changes`."""

    @property
    def unread(self) -> int:
        return sum(not change.read for change in self.changes)

    @property
    def newest(self) -> int:
        return self.changes[0].id


def grouped(changes: Sequence[Change], names: Names) -> list[IssueChanges]:
    """Changes (newest first) grouped by issue, the issue changed last first."""
    by_issue: dict[str, list[Change]] = {}
    for change in changes:
        by_issue.setdefault(change.issue_id, []).append(change)
    found: list[IssueChanges] = []
    for issue_id, its in by_issue.items():
        number, title = names.issue(issue_id)
        lines = tuple(describe(change, names) for change in its)
        found.append(IssueChanges(issue_id, number, title, tuple(its), lines))
    return found


def load(cache: Cache, *, unread_only: bool) -> tuple[list[IssueChanges], int]:
    """The inbox, and the id of its newest entry (what "mark all read" covers)."""
    changes = cache.inbox.changes(unread_only=unread_only)
    names = Names(cache)
    return grouped(changes, names), max((change.id for change in changes), default=0)


def as_json(change: Change, names: Names) -> dict[str, Any]:
    """One change for scripts (docs: README's `watch --json`)."""
    number, title = names.issue(change.issue_id)
    return {
        "id": change.id,
        "issue": {"id": change.issue_id, "number": number, "title": title},
        "kind": change.kind.value,
        "field": change.field,
        "old": change.old,
        "new": change.new,
        "text": describe(change, names),
        "at": change.at,
        "who": None if change.who is None else {"id": change.who, "name": names.user(change.who)},
        "seen_at": datetime.fromtimestamp(change.seen_at, UTC).isoformat(),
        "read": change.read,
    }


def all_json(changes: Iterable[Change], names: Names) -> list[dict[str, Any]]:
    return [as_json(change, names) for change in changes]
