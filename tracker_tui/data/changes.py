"""Outbox entries and field values as words, for the detail screen and the sync panel."""

from __future__ import annotations

from collections.abc import Mapping

from cache import JsonValue, Operation, OutboxEntry, Resource
from tracker_tui.formatting import priority_label, status_label


def value_text(field: str, value: JsonValue, names: Mapping[str, str]) -> str:
    """One field's value as a person reads it: labels joined, ids named, statuses titled."""
    if value is None:
        return {"assignee": "unassigned", "project_id": "no project"}.get(field, "—")
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) or "no labels"
    text = str(value)
    if field == "status":
        return status_label(text)
    if field == "priority":
        return priority_label(text, none="No priority")
    if field in ("assignee", "project_id", "lead"):
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
        f"{field} {value_text(field, entry.base.get(field), names)} → "
        f"{value_text(field, value, names)}"
        for field, value in entry.changes.items()
    ]
    return f"update {noun}: " + "; ".join(parts)
