"""The issue workflow: which status may follow which (docs/api.md#statuses-and-workflow)."""

from __future__ import annotations

from server.errors import InvalidTransition

TRANSITIONS: dict[str, frozenset[str]] = {
    "backlog": frozenset({"todo", "in_progress", "canceled"}),
    "todo": frozenset({"backlog", "in_progress", "canceled"}),
    "in_progress": frozenset({"todo", "in_review", "done", "canceled"}),
    "in_review": frozenset({"in_progress", "done", "canceled"}),
    "done": frozenset({"todo"}),
    "canceled": frozenset({"todo"}),
}


def check_transition(current: str, target: str) -> None:
    """Refuse a move the table does not allow; staying put is not a move (callers skip it)."""
    if target not in TRANSITIONS.get(current, frozenset()):
        message = f"an issue cannot move from `{current}` to `{target}`"
        raise InvalidTransition(
            f"Invalid transition: {message}.", details=[{"field": "status", "message": message}]
        )
