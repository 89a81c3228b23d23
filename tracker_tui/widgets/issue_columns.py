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

CELL_KINDS = (
    "plain",
    "muted",
    "closed",
    "urgent",
    "high",
    "marked",
    "pending",
    "conflict",
    "failed",
)
"""The styles a cell of a row can have (component classes `issue-list--<kind>`, but "plain")."""

MIN_TITLE = 30
"""Cells the title keeps before the optional columns give way: the title is what a row is
read by, so at 80 columns it gets 35 cells (dropping labels, project and assignee) rather than
19 beside full-width columns of values that repeat from row to row."""


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

    Optional columns are dropped in `_DROP_ORDER` until the title gets `MIN_TITLE` cells
    (or none is left: then the title takes what there is).
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
    cells: dict[tuple[str, str], Style]
    """Each cell style (`CELL_KINDS`) on the base, under each overlay (none, cursor, marked):
    combined once here rather than twice per cell of every row drawn."""

    @classmethod
    def resolve(cls, base: Style, component: Callable[[str], Style]) -> RowStyles:
        """Styles from the widget's component classes (`component("cursor")` and so on)."""
        marked = component("marked")
        marked_row = Style(bgcolor=marked.bgcolor)
        kinds = {name: component(name) for name in CELL_KINDS if name != "plain"}
        kinds["plain"] = Style()
        overlays = {"none": Style(), "cursor": component("cursor"), "marked": marked_row}
        return cls(
            base=base,
            header=component("header"),
            cursor=overlays["cursor"],
            marked=marked,
            marked_row=marked_row,
            muted=kinds["muted"],
            closed=kinds["closed"],
            urgent=kinds["urgent"],
            high=kinds["high"],
            sync={state: kinds[state] for state in ("pending", "conflict", "failed")},
            cells={
                (kind, over): base + style + overlay
                for kind, style in kinds.items()
                for over, overlay in overlays.items()
            },
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
    overlay = "cursor" if cursor else "marked" if marked else "none"
    closed = row.status in ("done", "canceled")
    sync = row.sync_state if row.sync_state in styles.sync else "muted"
    cells: list[tuple[str, str]] = [
        (MARK_GLYPH if marked else " ", "marked" if marked else "plain"),
        (SYNC_GLYPHS.get(row.sync_state, "?"), sync),
        (" ", "plain"),
    ]
    last = len(columns) - 1
    for index, column in enumerate(columns):
        text, kind = _cell(row, column.key, now)
        if closed and column.key == "title":
            kind = "closed"
        cells.append((fit(text, column.width) + (" " if index < last else ""), kind))
    style = styles.cells
    return Strip([Segment(text, style[kind, overlay]) for text, kind in cells])


def render_message(text: str, width: int, style: Style) -> Strip:
    """A line that is not a row: "No issues match", "Loading…", an error."""
    return Strip([Segment(fit(" " * GUTTER + text, width), style)])


def render_placeholder(width: int, *, cursor: bool, styles: RowStyles) -> Strip:
    """A row whose page has not arrived yet: drawn at once, filled in a moment later."""
    style = styles.base + styles.muted + (styles.cursor if cursor else Style())
    return Strip([Segment(fit(" " * GUTTER + "…", width), style)])


_PRIORITY_KINDS = {"urgent": "urgent", "high": "high", "none": "muted"}


def _cell(row: IssueRow, key: str, now: datetime) -> tuple[str, str]:
    """The text and style kind (one of `CELL_KINDS`) of one cell."""
    if key == "number":
        return issue_reference(row.number, row.id), "muted"
    if key == "title":
        return row.title, "plain"
    if key == "status":
        closed = row.status in ("done", "canceled")
        return status_label(row.status), "closed" if closed else "plain"
    if key == "priority":
        return priority_label(row.priority), _PRIORITY_KINDS.get(row.priority, "plain")
    if key == "assignee":
        return row.assignee or "—", "plain" if row.assignee else "muted"
    if key == "project":
        return row.project or "—", "plain" if row.project else "muted"
    if key == "labels":
        return ", ".join(row.labels), "muted"
    return relative_time(row.updated_at, now), "muted"
