"""What a person types for a user, a project or a field's value, and what it names.

Shared by the command line (`--assignee grace`) and the texts edited in `$EDITOR` (an issue's
template, the bulk table), so a name means the same user in both: `me`, an id, a whole name,
or the start of one of its words or of the email, any case.
"""

from __future__ import annotations

from collections.abc import Sequence

from cache import ProjectRow, UserRow
from issuefields import Field
from issuefields.frozen import Frozen

NONE_WORDS = frozenset({"none", "null", "-"})
"""What unassigns (`--assignee none`) or clears the project (`--project none`)."""
ME_WORD = "me"


def matching_users(users: Sequence[UserRow], text: str) -> list[UserRow]:
    """The users `text` names: by whole name when one matches exactly, else every user whose
    name (or one of its words) or email starts with it."""
    folded = text.casefold()
    exact = [user for user in users if user.name.casefold() == folded]
    if exact:
        return exact
    return [
        user
        for user in users
        if user.name.casefold().startswith(folded)
        or any(word.startswith(folded) for word in user.name.casefold().split())
        or (user.email or "").casefold().startswith(folded)
    ]


def choice_value(field: Field, text: str) -> str | None:
    """A known choice by its value or its label, any case (`in_progress`, `In progress`);
    None when it is neither."""
    folded = text.strip().casefold()
    for choice in field.choices:
        if folded in (choice.value.casefold(), choice.label.casefold()):
            return choice.value
    return None


class Directory(Frozen):
    """The users and projects a typed name may stand for, read once from the cache."""

    _fields = ("users", "projects", "me")
    __slots__ = (*_fields, "_names")
    users: Sequence[UserRow]
    projects: Sequence[ProjectRow]
    me: str | None
    _names: dict[str, str]

    def __init__(
        self,
        users: Sequence[UserRow] = (),
        projects: Sequence[ProjectRow] = (),
        me: str | None = None,
    ) -> None:
        self._init(users, projects, me)
        names = {user.id: user.name for user in users}
        names |= {project.id: project.key or project.name for project in projects}
        object.__setattr__(self, "_names", names)

    @property
    def names(self) -> dict[str, str]:
        """Users' names and projects' keys by id (what a preview names values by)."""
        return dict(self._names)

    def name(self, record_id: str | None) -> str:
        """A user's name or a project's key; `none` for nobody, the id when unknown."""
        return "none" if record_id is None else self._names.get(record_id, record_id)

    def user(self, text: str) -> str | None:
        """The id of the user `text` names (None for `none`); `ValueError` says why not."""
        given = text.strip()
        if given.casefold() in NONE_WORDS or not given:
            return None
        if given.casefold() == ME_WORD:
            if self.me is None:
                raise ValueError("who 'me' is is not known yet (sync once online)")
            return self.me
        if any(user.id == given for user in self.users) or not self.users:
            return given
        found = matching_users(self.users, given)
        if len(found) == 1:
            return found[0].id
        if not found:
            raise ValueError(f"no user {given!r} in the local cache")
        named = ", ".join(user.name for user in found[:8])
        raise ValueError(f"{given!r} could be {named}; say which")

    def project(self, text: str) -> str | None:
        """The id of the project `text` names by key, name or id, any case (None for
        `none`); `ValueError` says why not."""
        given = text.strip()
        if given.casefold() in NONE_WORDS or not given:
            return None
        folded = given.casefold()
        for project in self.projects:
            spelled = (project.id, project.key or "", project.name)
            if folded in (word.casefold() for word in spelled):
                return project.id
        keys = ", ".join(p.key or p.name for p in self.projects if p.state != "archived")
        raise ValueError(f"no project {given!r} in the local cache (projects: {keys})")
