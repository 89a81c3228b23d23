"""What the contract allows: status moves and field limits, checked before anything is queued.

The server checks all of this again; checking here means the user hears at once, offline too,
instead of minutes later from a failed write in the sync panel.
"""

from __future__ import annotations

from collections.abc import Sequence

from sync.workflow import TRANSITIONS

TITLE_MAX = 255
DESCRIPTION_MAX = 65_535
LABELS_MAX = 20
LABEL_MAX = 50


def status_choices(current: str) -> tuple[str, ...]:
    """The current status first (keeping it is always fine), then the allowed moves."""
    return (current, *TRANSITIONS.get(current, ()))


def can_move(current: str, target: str) -> bool:
    return current == target or target in TRANSITIONS.get(current, ())


def status_path(current: str, target: str) -> tuple[str, ...] | None:
    """The fewest allowed moves from `current` to `target`, as the statuses passed through
    (the last is `target`; none when they are equal), or None when no allowed path exists.
    Among paths as short, the one taking the moves listed first in the workflow table."""
    paths: dict[str, tuple[str, ...]] = {current: ()}
    frontier = [current]
    while frontier and target not in paths:
        following: list[str] = []
        for status in frontier:
            for step in TRANSITIONS.get(status, ()):
                if step not in paths:
                    paths[step] = (*paths[status], step)
                    following.append(step)
        frontier = following
    return paths.get(target)


def title_problem(title: str) -> str | None:
    text = title.strip()
    if not text:
        return "A title is required."
    if len(text) > TITLE_MAX:
        return f"At most {TITLE_MAX} characters ({len(text)} now)."
    return None


def description_problem(description: str) -> str | None:
    if len(description) > DESCRIPTION_MAX:
        return f"At most {DESCRIPTION_MAX:,} characters ({len(description):,} now)."
    return None


def parse_labels(text: str) -> list[str]:
    """Comma-separated labels, trimmed, empty pieces and repeats dropped."""
    return list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))


def labels_problem(labels: Sequence[str]) -> str | None:
    if len(labels) > LABELS_MAX:
        return f"At most {LABELS_MAX} labels ({len(labels)} now)."
    long = [label for label in labels if len(label) > LABEL_MAX]
    if long:
        return f"Labels have at most {LABEL_MAX} characters: {long[0][:20]}…"
    return None
