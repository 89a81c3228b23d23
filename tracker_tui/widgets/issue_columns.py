"""The issue list's columns and how one row becomes one line of styled cells.

Kept apart from the widget so layout and drawing are plain functions of (row, width, styles):
the widget decides *which* rows to draw, this module decides *how* they look.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from tracker_tui.data.source import IssueRow, SortKey
from tracker_tui.formatting import (
    fit,
    issue_reference,
    priority_label,
    relative_time,
    status_label,
)

MARK_GLYPH = "●"
SYNC_GLYPHS = {"synced": " ", "pending": "↑", "conflict": "≠", "failed": "✗"}
"""One cell each: unsent edits, a conflict to settle, a write the server rejected."""

GUTTER = 3
"""Mark glyph, sync glyph, one space."""

MIN_TITLE = 16


@dataclass(frozen=True)
class Column:
    """One column: what it shows, how wide it is, and the sort it stands for (if any)."""

    key: str
    header: str
    width: int
    sort: SortKey | None = None


_OPTIONAL: tuple[Column, ...] = (
    Column("status", "Status", 11, "status"),
    Column("priority", "Priority", 10, "priority"),
    Column("assignee", "Assignee", 14),
    Column("project", "Project", 7),
    Column("labels", "Labels", 16),
    Column("updated", "Updated", 9, "updated"),
)
_DROP_ORDER = ("labels", "project", "assignee", "priority", "updated", "status")
"""Which columns give way first when the terminal is too narrow for a readable title."""


def layout_columns(width: int) -> list[Column]:
    """The columns to show in `width` cells, the title taking whatever is left over.

    Optional columns are dropped in `_DROP_ORDER` until the title gets `MIN_TITLE` cells.
    """
    number = Column("number", "#", 7, "number")
    kept = list(_OPTIONAL)
    for key in (None, *_DROP_ORDER):
        kept = [column for column in kept if column.key != key]
        fixed = GUTTER + number.width + sum(column.width + 1 for column in kept) + 1
        if width - fixed >= MIN_TITLE:
            break
    title = Column("title", "Title", max(width - fixed, 1), "title")
    return [number, title, *kept]


@dataclass(frozen=True)
class RowStyles:
    """The rich styles a line is drawn with, resolved from the widget's component classes."""

    base: Style
    header: Style
    cursor: Style
    marked: Style
    marked_row: Style
    """Only the background of `marked`: a marked row keeps its cell colours."""
    muted: Style
    closed: Style
    urgent: Style
    high: Style
    sync: dict[str, Style]

    @classmethod
    def resolve(cls, base: Style, component: Callable[[str], Style]) -> RowStyles:
        """Styles from the widget's component classes (`component("cursor")` and so on)."""
        marked = component("marked")
        return cls(
            base=base,
            header=component("header"),
            cursor=component("cursor"),
            marked=marked,
            marked_row=Style(bgcolor=marked.bgcolor),
            muted=component("muted"),
            closed=component("closed"),
            urgent=component("urgent"),
            high=component("high"),
            sync={state: component(state) for state in ("pending", "conflict", "failed")},
        )


def render_header(
    columns: list[Column], sort: SortKey, descending: bool, styles: RowStyles
) -> Strip:
    """The header line, the sorted column's title followed by ▼ or ▲."""
    arrow = " ▼" if descending else " ▲"
    cells = [Segment(" " * GUTTER, styles.header)]
    for index, column in enumerate(columns):
        text = column.header + (arrow if column.sort == sort else "")
        separator = " " if index < len(columns) - 1 else ""
        cells.append(Segment(fit(text, column.width) + separator, styles.header))
    return Strip(cells)


def render_row(
    row: IssueRow,
    columns: list[Column],
    *,
    now: datetime,
    marked: bool,
    cursor: bool,
    styles: RowStyles,
) -> Strip:
    """One issue as a line of cells; the cursor and mark styles lie over the cell styles."""
    overlay = styles.cursor if cursor else styles.marked_row if marked else Style()
    closed = row.status in ("done", "canceled")
    cells: list[tuple[str, Style]] = [
        (MARK_GLYPH if marked else " ", styles.marked if marked else Style()),
        (SYNC_GLYPHS.get(row.sync_state, "?"), styles.sync.get(row.sync_state, styles.muted)),
        (" ", Style()),
    ]
    for index, column in enumerate(columns):
        text, style = _cell(row, column.key, now, styles)
        if closed and column.key == "title":
            style = styles.closed
        separator = " " if index < len(columns) - 1 else ""
        cells.append((fit(text, column.width) + separator, style))
    return Strip(
        [Segment(text, styles.base + style + overlay) for text, style in cells],
    )


def render_message(text: str, width: int, style: Style) -> Strip:
    """A line that is not a row: "No issues match", "Loading…", an error."""
    return Strip([Segment(fit(" " * GUTTER + text, width), style)])


def render_placeholder(width: int, *, cursor: bool, styles: RowStyles) -> Strip:
    """A row whose page has not arrived yet: drawn at once, filled in a moment later."""
    style = styles.base + styles.muted + (styles.cursor if cursor else Style())
    return Strip([Segment(fit(" " * GUTTER + "…", width), style)])


def _cell(row: IssueRow, key: str, now: datetime, styles: RowStyles) -> tuple[str, Style]:
    """The text and style of one cell."""
    if key == "number":
        return issue_reference(row.number, row.id), styles.muted
    if key == "title":
        return row.title, Style()
    if key == "status":
        closed = row.status in ("done", "canceled")
        return status_label(row.status), styles.closed if closed else Style()
    if key == "priority":
        style = {"urgent": styles.urgent, "high": styles.high, "none": styles.muted}
        return priority_label(row.priority), style.get(row.priority, Style())
    if key == "assignee":
        return row.assignee or "—", Style() if row.assignee else styles.muted
    if key == "project":
        return row.project or "—", Style() if row.project else styles.muted
    if key == "labels":
        return ", ".join(row.labels), styles.muted
    return relative_time(row.updated_at, now), styles.muted
