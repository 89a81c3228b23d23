"""What the server would refuse of a project (docs/api.md#field-limits), checked before a
write is queued, by the projects screen's form and by `tracker-tui projects create/edit` alike."""

from __future__ import annotations

import re

KEY = re.compile(r"[A-Z]{2,10}")
NAME_MAX = 100


def key_problem(key: str) -> str | None:
    """Why a project key is refused: it is 2 to 10 capital letters."""
    return None if KEY.fullmatch(key) else "The key is 2 to 10 capital letters (WEB, OPS)."


def name_problem(name: str) -> str | None:
    """Why a project name is refused: 1 to 100 characters, not all blank."""
    if not name.strip():
        return "A name is required."
    if len(name.strip()) > NAME_MAX:
        return f"A name has at most {NAME_MAX} characters."
    return None


def project_problem(key: str, name: str) -> str | None:
    """The first problem of a key and a name, None when the server would take both."""
    return key_problem(key) or name_problem(name)
