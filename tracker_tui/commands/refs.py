"""What a user types for an issue, a user or a value, turned into ids; and ids turned back into
what a user reads (`#42`, a name, a project key), so no message shows an internal id where a
readable one exists.

Issues go through `Cache.reads.resolve_issue`, the one resolver of the cache, so `42`, `#42` and an
id mean the same issue in every command. Users are matched by `tracker_tui.data.people`: `me`,
an id, or a name or the start of one of its words, as in the texts edited in `$EDITOR`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cache import ME_STATE_KEY, AmbiguousIssueError, JsonObject, Operation, OutboxEntry, Resource
from issuefields import FIELDS, Field, Kind
from tracker_tui.data.people import ME_WORD, NONE_WORDS, matching_users
from tracker_tui.errors import UsageError

if TYPE_CHECKING:
    from cache import Cache

TITLE_SHOWN = 40
"""Characters of a title quoted in a message."""


def option(field: Field) -> str:
    """The command line's option for a field: `--project`, `--label`, `--due-date`."""
    return "--" + field.word.replace("_", "-")


def issue_id(cache: Cache, ref: str) -> str:
    """The id of the issue the user named (`42`, `#42`, or an id); refused when none matches
    or when the digits name two issues."""
    try:
        found = cache.reads.resolve_issue(ref)
    except AmbiguousIssueError as error:
        names = Names(cache)
        both = " and ".join(f"{names.issue(one)} (id {one})" for one in error.ids)
        raise UsageError(
            f"{ref!r} could be {both}; write '#{ref.strip()}' for the number"
        ) from None
    if found is None:
        raise UsageError(f"no issue {ref.strip()} in the local cache (run `tracker-tui sync`?)")
    return found


def me(cache: Cache) -> str:
    """The current user's id, as stored by `login`, `sync` or the app."""
    found = cache.state.get(ME_STATE_KEY)
    if not isinstance(found, str):
        raise UsageError(
            "who 'me' is is not known yet: run `tracker-tui sync` once online "
            "(or name the user; `tracker-tui users` lists them)"
        )
    return found


def user_id(cache: Cache, given: str, option: str = "--assignee") -> str | None:
    """`none` (None), `me`, a user id, or a unique name or start of a name's word, any case.
    With no user list in the cache (a server without `/users`), an id is taken on trust."""
    text = given.strip()
    if text.lower() in NONE_WORDS:
        return None
    if text.lower() == ME_WORD:
        return me(cache)
    users = cache.reads.users()
    if any(user.id == text for user in users):
        return text
    if not users:
        return text
    candidates = matching_users(users, text)
    if len(candidates) == 1:
        return candidates[0].id
    if not candidates:
        raise UsageError(
            f"{option}: no user {text!r} in the local cache; `tracker-tui users` lists them"
        )
    listed = ", ".join(f"{user.name} <{user.email or user.id}>" for user in candidates[:8])
    more = f" and {len(candidates) - 8} more" if len(candidates) > 8 else ""
    raise UsageError(f"{option}: {text!r} could be {listed}{more}; say which")


def known_value(value: str, allowed: Sequence[str], option: str) -> str:
    """One of the values the client knows (docs/api.md#known-values): what a user may set."""
    if value not in allowed:
        raise UsageError(f"{option} {value!r} is not one of: {', '.join(allowed)}")
    return value


def listed_value(cache: Cache, value: str, field: Field, option: str) -> str:
    """A value to filter on: a known one, or one the server sent that the client does not
    know (kept and shown, so it can be looked for)."""
    present = [found for found in cache.reads.distinct_values(field) if found is not None]
    if value not in present:
        raise UsageError(f"{option} {value!r} is not one of: {', '.join(present)}")
    return value


class Names:
    """Readable names for ids, looked up once per command: `#42` for an issue (its title
    while it has no number yet), a user's name, a project's key. A plain class: a dataclass
    compiles its methods as its module loads, on every read's start
    (docs/architecture.md#start-up)."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache
        self._users: dict[str, str] | None = None
        self._projects: dict[str, str] | None = None

    def issue(self, issue_id: str, *, title: bool = False) -> str:
        record = self._issue_record(issue_id)
        if record is None:
            return issue_id
        number = record.get("number")
        text = str(record.get("title") or "")
        quoted = text if len(text) <= TITLE_SHOWN else text[: TITLE_SHOWN - 1] + "…"
        if not isinstance(number, int):
            return f"new issue '{quoted}'"
        return f"#{number} {quoted}" if title else f"#{number}"

    def _issue_record(self, issue_id: str) -> JsonObject | None:
        detail = self.cache.reads.issue(issue_id)
        if detail is not None:
            return detail.record
        return self.cache.server.server_record(
            Resource.ISSUES, self.cache.outbox.resolve_id(issue_id)
        )

    def user(self, user_id: str | None) -> str | None:
        if user_id is None:
            return None
        if self._users is None:
            self._users = {user.id: user.name for user in self.cache.reads.users()}
        return self._users.get(user_id, user_id)

    def project(self, project_id: str | None) -> str | None:
        if project_id is None:
            return None
        if self._projects is None:
            self._projects = {
                project.id: project.key or project.name for project in self.cache.reads.projects()
            }
        return self._projects.get(project_id, project_id)

    def value(self, name: str, value: object) -> str:
        """A field's value as a person reads it: users and projects named."""
        field = FIELDS.get(name)
        kind = None if field is None else field.kind
        named_kind = field is not None and kind in (Kind.USER, Kind.PROJECT)
        if field is not None and named_kind and (isinstance(value, str) or value is None):
            named = self.user(value) if kind is Kind.USER else self.project(value)
            return named or field.empty.lower()
        if isinstance(value, list):
            return ", ".join(str(item) for item in value) or "none"
        return "-" if value is None else str(value)

    def entry(self, entry: OutboxEntry) -> str:
        """`edit of #42`, `comment on #42`, `create of new issue 'Title'`, `edit of project WEB`,
        `rename of the workspace to 'Acme'`."""
        target = entry.target_id
        if entry.resource is Resource.ISSUES:
            what = self.issue(target)
            if what == target and isinstance(entry.changes.get("title"), str):
                what = f"new issue '{entry.changes['title']}'"
            return f"{_verb(entry)} of {what}"
        if entry.resource is Resource.COMMENTS:
            parent = entry.parent_id or entry.changes.get("issue_id")
            on = self.issue(str(parent)) if parent else "an issue"
            if entry.operation is Operation.CREATE:
                return f"comment on {on}"
            return f"{_verb(entry)} of a comment on {on}"
        if entry.resource is Resource.WORKSPACES:
            return f"rename of the workspace to {entry.changes.get('name')!r}"
        name = self.project(target) or target
        if name == target and isinstance(entry.changes.get("key"), str):
            name = str(entry.changes["key"])
        return f"{_verb(entry)} of project {name}"


def _verb(entry: OutboxEntry) -> str:
    return "edit" if entry.operation is Operation.UPDATE else entry.operation.value
