"""The issue list's columns and how one row becomes one line of styled cells.

Kept apart from the widget so layout and drawing are plain functions of (row, width, styles):
the widget decides *which* rows to draw, this module decides *how* they look.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from cache import IssueRow, SyncState
from issuefields import SORTS, STATUS, TITLE, Field, Kind, Tone
from issuefields.frozen import Frozen
from tracker_tui.data.cache_source import parse_time
from tracker_tui.data.columns import ColumnSetup, default_setup
from tracker_tui.formatting import fit, issue_reference, relative_time

MARK_GLYPH = "●"
SYNC_GLYPHS = {
    SyncState.SYNCED: " ",
    SyncState.PENDING: "↑",
    SyncState.CONFLICT: "≠",
    SyncState.FAILED: "✗",
}
"""One cell each: unsent edits, a conflict to settle, a write the server rejected."""
SEARCHED_GLYPH = "↓"
"""In the sync cell of an issue the server's search brought in ahead of the backfill
(docs/sync.md#head-first), while nothing of the user's is pending on it."""

MARKERS: tuple[tuple[str, str], ...] = (
    (MARK_GLYPH, "marked"),
    (SYNC_GLYPHS[SyncState.PENDING], "not sent yet"),
    (SYNC_GLYPHS[SyncState.CONFLICT], "conflict to settle (sync panel)"),
    (SYNC_GLYPHS[SyncState.FAILED], "refused by the server (sync panel)"),
    (SEARCHED_GLYPH, "from the server's search, not yet cached"),
)
"""What each marker at the start of a row means, in a few words: the legend line and the help
screen say it."""

GUTTER = 3
"""Mark glyph, sync glyph, one space."""

CELL_KINDS = (*Tone, "marked", SyncState.PENDING, SyncState.CONFLICT, SyncState.FAILED)
"""The styles a cell of a row can have (component classes `issue-list--<kind>`, but "plain"):
the tones of values (`issuefields.Tone`), a mark, and the sync markers."""


class Column(Frozen):
    """One column: the field it shows, how wide it is, and the sort it stands for (if any)."""

    _fields = ("field", "header", "width", "sort")
    __slots__ = _fields
    field: Field
    header: str
    width: int
    sort: str | None

    def __init__(self, field: Field, header: str, width: int, sort: str | None = None) -> None:
        self._init(field, header, width, sort)


def _column(field: Field, width: int) -> Column:
    header = field.column.header if field.column else None
    sort = next((sort.key for sort in SORTS if sort.field is field), None)
    return Column(field, header or field.label, width, sort)


DEFAULT_SETUP = default_setup()


def layout_columns(width: int, setup: ColumnSetup = DEFAULT_SETUP) -> list[Column]:
    """The columns to show in `width` cells, the title taking whatever is left over.

    Columns give way in `setup.drop_order` until the title gets `setup.min_title` cells (or
    none is left to go: then the title takes what there is).
    """
    kept = list(setup.shown)
    for gone in (None, *setup.drop_order):
        kept = [f for f in kept if f is not gone]
        fixed = GUTTER + sum(setup.width(f) + 1 for f in kept if f is not TITLE)
        if width - fixed >= setup.min_title:
            break
    return [_column(f, setup.width(f) or max(width - fixed, 1)) for f in kept]


class RowStyles(Frozen):
    """The rich styles a line is drawn with, resolved from the widget's component classes."""

    _fields = ("base", "header", "cursor", "marked", "marked_row", "muted", "sync", "cells")
    __slots__ = _fields
    base: Style
    header: Style
    cursor: Style
    marked: Style
    marked_row: Style
    """Only the background of `marked`: a marked row keeps its cell colours."""
    muted: Style
    sync: dict[str, Style]
    cells: dict[tuple[str, str], Style]
    """Each cell style (`CELL_KINDS`) on the base, under each overlay (none, cursor, marked):
    combined once here rather than twice per cell of every row drawn."""

    def __init__(
        self,
        base: Style,
        header: Style,
        cursor: Style,
        marked: Style,
        marked_row: Style,
        muted: Style,
        sync: dict[str, Style],
        cells: dict[tuple[str, str], Style],
    ) -> None:
        self._init(base, header, cursor, marked, marked_row, muted, sync, cells)

    @classmethod
    def resolve(cls, base: Style, component: Callable[[str], Style]) -> RowStyles:
        """Styles from the widget's component classes (`component("cursor")` and so on)."""
        marked = component("marked")
        marked_row = Style(bgcolor=marked.bgcolor)
        kinds = {name: component(name) for name in CELL_KINDS if name != Tone.PLAIN}
        kinds[Tone.PLAIN] = Style()
        overlays = {"none": Style(), "cursor": component("cursor"), "marked": marked_row}
        return cls(
            base=base,
            header=component("header"),
            cursor=overlays["cursor"],
            marked=marked,
            marked_row=marked_row,
            muted=kinds[Tone.MUTED],
            sync={state: kinds[state] for state in SyncState if state is not SyncState.SYNCED},
            cells={
                (kind, over): base + style + overlay
                for kind, style in kinds.items()
                for over, overlay in overlays.items()
            },
        )


def sort_at(columns: list[Column], x: int) -> str | None:
    """The sort of the column drawn at cell `x` of the header (columns are separated by one
    space, which belongs to the column on its left), None outside any sortable column."""
    left = GUTTER
    for column in columns:
        if left <= x < left + column.width + 1:
            return column.sort
        left += column.width + 1
    return None


def render_header(
    columns: list[Column], sort: str, descending: bool, styles: RowStyles, *, fill: int = 0
) -> Strip:
    """The header line, the sorted column's title followed by ▼ or ▲, and `fill` blank cells
    after the last column (see `render_row`)."""
    arrow = " ▼" if descending else " ▲"
    cells = [Segment(" " * GUTTER, styles.header)]
    for index, column in enumerate(columns):
        text = column.header + (arrow if column.sort == sort else "")
        separator = " " if index < len(columns) - 1 else ""
        cells.append(Segment(fit(text, column.width) + separator, styles.header))
    if fill > 0:
        cells.append(Segment(" " * fill, styles.header))
    return Strip(cells)


def render_row(
    row: IssueRow,
    columns: list[Column],
    *,
    now: datetime,
    names: Mapping[str, str],
    marked: bool,
    cursor: bool,
    styles: RowStyles,
    fill: int = 0,
) -> Strip:
    """One issue as a line of cells; the cursor and mark styles lie over the cell styles.
    `names` are what ids of users and projects show as. `fill` blank cells follow the last
    column: the list's lines span the cell under its scrollbar too, and a line one cell short
    was copied whole by Textual to pad it, for every row drawn."""
    overlay = "cursor" if cursor else "marked" if marked else "none"
    status = STATUS.choice(row.status)
    closed = status is not None and status.tone is Tone.CLOSED
    sync = row.sync_state if row.sync_state in styles.sync else Tone.MUTED
    glyph = SYNC_GLYPHS.get(row.sync_state, "?")
    if row.searched and row.sync_state is SyncState.SYNCED:
        glyph = SEARCHED_GLYPH
    cells: list[tuple[str, str]] = [
        (MARK_GLYPH if marked else " ", "marked" if marked else Tone.PLAIN),
        (glyph, sync),
        (" ", Tone.PLAIN),
    ]
    last = len(columns) - 1
    for index, column in enumerate(columns):
        text, kind = _cell(row, column.field, now, names)
        if closed and column.field.kind is Kind.TEXT:
            kind = Tone.CLOSED
        cells.append((fit(text, column.width) + (" " if index < last else ""), kind))
    if fill > 0:
        cells.append((" " * fill, Tone.PLAIN))
    style = styles.cells
    return Strip([Segment(text, style[kind, overlay]) for text, kind in cells])


def render_message(text: str, width: int, style: Style) -> Strip:
    """A line that is not a row: "No issues match", "Loading…", an error."""
    return Strip([Segment(fit(" " * GUTTER + text, width), style)])


def render_placeholder(width: int, *, cursor: bool, styles: RowStyles) -> Strip:
    """A row whose page has not arrived yet: drawn at once, filled in a moment later."""
    style = styles.base + styles.muted + (styles.cursor if cursor else Style())
    return Strip([Segment(fit(" " * GUTTER + "…", width), style)])


def time_texts(row: IssueRow, columns: list[Column], now: datetime) -> tuple[str, ...]:
    """What `row`'s time columns read at `now` ("3m ago"): the part of a drawn row that the
    clock alone changes, so the list can tell a line that would read differently from one
    that would not."""
    return tuple(
        _cell(row, column.field, now, {})[0] for column in columns if column.field.kind is Kind.TIME
    )


def _cell(row: IssueRow, field: Field, now: datetime, names: Mapping[str, str]) -> tuple[str, str]:
    """The text and style kind (one of `CELL_KINDS`) of one cell: a known choice in its tone,
    no value as a muted dash."""
    if field.kind is Kind.LABELS:
        return ", ".join(row.labels), Tone.MUTED
    value = row.cells.get(field.member)
    if field.kind is Kind.NUMBER:
        return issue_reference(value if isinstance(value, int) else None, row.id), Tone.MUTED
    if field.kind is Kind.TIME:
        return relative_time(parse_time(None if value is None else str(value)), now), Tone.MUTED
    if value is None or (value == "" and field.kind is not Kind.TEXT):
        return "—", Tone.MUTED
    text = str(value)
    if field.kind is Kind.CHOICE and (choice := field.choice(text)) is not None:
        return choice.short or choice.label, choice.tone
    if field.kind in (Kind.USER, Kind.PROJECT):
        return names.get(text, text), Tone.PLAIN
    return text, Tone.PLAIN
