"""Outbox entries and field values as words, for the detail screen and the sync panel."""

from __future__ import annotations

from collections.abc import Mapping

from cache import JsonValue, Operation, OutboxEntry, Resource
from issuefields import FIELDS, LABELS, Kind

NAMED_KINDS = (Kind.USER, Kind.PROJECT)
PROJECT_LEAD = "lead"
"""A project's member holding a user id."""


def field_name(member: str) -> str:
    """A field as running text names it: its label in lower case ("project" for
    `project_id`); a member the table does not know, as it is."""
    field = FIELDS.get(member)
    return member if field is None else field.label.lower()


def value_text(member: str, value: JsonValue, names: Mapping[str, str]) -> str:
    """One field's value as a person reads it: labels joined, ids named, choices labelled."""
    field = FIELDS.get(member)
    if value is None:
        return "—" if field is None else field.empty.lower()
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) or f"no {LABELS.label.lower()}"
    text = str(value)
    if field is not None and field.kind is Kind.CHOICE:
        return field.label_of(text)
    if (field is not None and field.kind in NAMED_KINDS) or member == PROJECT_LEAD:
        return names.get(text, text)
    return text if len(text) <= 40 else text[:39] + "…"


def entry_summary(entry: OutboxEntry, names: Mapping[str, str]) -> str:
    """ "update issue: status Todo → In progress" and the like."""
    noun = {Resource.ISSUES: "issue", Resource.COMMENTS: "comment"}.get(
        entry.resource, entry.resource.value.rstrip("s")
    )
    if entry.operation is Operation.DELETE:
        return f"delete {noun}"
    if entry.operation is Operation.CREATE:
        title = entry.changes.get("title") or entry.changes.get("name") or ""
        body = entry.changes.get("body") or ""
        what = title or body
        return f"new {noun}: {value_text('title', what, names)}" if what else f"new {noun}"
    parts = [
        f"{member} {value_text(member, entry.base.get(member), names)} → "
        f"{value_text(member, value, names)}"
        for member, value in entry.changes.items()
    ]
    return f"update {noun}: " + "; ".join(parts)
