"""CONTRACT's status workflow, as the client knows it.

The server has the last word; the client uses the table to offer only moves that can succeed and
to tell the user what would work instead of a refused move. One table serves both the push
engine's messages and the app's pickers and checks.
"""

from __future__ import annotations

TRANSITIONS: dict[str, tuple[str, ...]] = {
    "backlog": ("todo", "in_progress", "canceled"),
    "todo": ("backlog", "in_progress", "canceled"),
    "in_progress": ("todo", "in_review", "done", "canceled"),
    "in_review": ("in_progress", "done", "canceled"),
    "done": ("todo",),
    "canceled": ("todo",),
}
"""From a status, the statuses it may move to (setting the same status again is a no-op)."""
