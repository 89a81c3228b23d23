"""Which columns the issue list shows: the field table's defaults, or config.toml's `[columns]`.

    [columns]
    show = ["number", "status", "title", "assignee", "updated"]   # which, in this order
    drop_first = ["assignee"]        # as the terminal narrows, these give way first
    width = { assignee = 20, title = 40 }

A column is named by its field's label in lower case (`number`, `title`, `status`, `priority`,
`assignee`, `project`, `labels`, `updated`, `created`), or by the API's member (`project_id`,
`updated_at`). `width` is in cells; the title's is the least it keeps before other columns give
way (it takes whatever is left). As the terminal narrows, the columns of `drop_first` give way
first, in that order, then the others in the field table's order of `keep`; the number never
gives way unless it is listed. Every problem is named at once, before the app starts.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from cache.models import Frozen
from issuefields import ISSUE_FIELDS, TITLE, Field
from tracker_tui.errors import UsageError

MIN_TITLE = 30
"""Cells the title keeps before the optional columns give way: the title is what a row is
read by, so at 80 columns it gets 35 cells (dropping labels, project and assignee) rather than
19 beside full-width columns of values that repeat from row to row."""

WIDEST = 80
"""The widest a column may be set (a wider one would leave no room for the title)."""


class ColumnsError(UsageError):
    """`[columns]` cannot be applied as written; the message names every problem."""


def column_name(f: Field) -> str:
    """How config.toml names a field's column: its label in lower case."""
    return f.label.lower()


COLUMN_FIELDS: tuple[Field, ...] = tuple(f for f in ISSUE_FIELDS if f.column is not None)
"""The fields that can be a column of the list, in the table's order."""

_BY_NAME: Mapping[str, Field] = {
    name: f for f in COLUMN_FIELDS for name in (column_name(f), f.member, f.word)
}


class ColumnSetup(Frozen):
    """The list's columns: which, in what order, how wide, and which give way first."""

    _fields = ("shown", "widths", "drop_order")
    __slots__ = _fields
    shown: tuple[Field, ...]
    widths: Mapping[Field, int]
    """Cells of each fixed column (the title's entry, if any, is its least width)."""
    drop_order: tuple[Field, ...]
    """First to give way first; a column not listed never gives way."""

    def __init__(
        self,
        shown: tuple[Field, ...],
        widths: Mapping[Field, int] | None = None,
        drop_order: tuple[Field, ...] = (),
    ) -> None:
        self._init(shown, {} if widths is None else widths, drop_order)

    @property
    def min_title(self) -> int:
        return self.widths.get(TITLE, MIN_TITLE)

    def width(self, f: Field) -> int:
        """A fixed column's width in cells; 0 for the title, which takes what is left."""
        if f is TITLE:
            return 0
        column = f.column
        return self.widths.get(f, column.width if column is not None else 10)


def default_setup() -> ColumnSetup:
    """The field table's columns (`issuefields.ListColumn`): those shown by default, their
    widths, and the ones with the lowest `keep` giving way first."""
    shown = tuple(f for f in COLUMN_FIELDS if f.column is not None and f.column.shown)
    return ColumnSetup(shown=shown, drop_order=_default_drop_order(shown))


def _default_drop_order(shown: Sequence[Field]) -> tuple[Field, ...]:
    keeps = [(f, f.column.keep) for f in shown if f.column is not None and f is not TITLE]
    return tuple(f for f, keep in sorted(keeps, key=lambda pair: pair[1] or 0) if keep is not None)


def parse_columns(table: Mapping[str, Any], where: str = "config.toml [columns]") -> ColumnSetup:
    """`[columns]` as a setup; what it leaves out keeps its default. Raises `ColumnsError`
    naming every problem."""
    problems: list[str] = []
    unknown_keys = sorted(set(table) - {"show", "drop_first", "width"})
    problems.extend(
        f"{where}: unknown key {key!r} (keys: show, drop_first, width)" for key in unknown_keys
    )
    default = default_setup()
    shown = default.shown
    if "show" in table:
        named = _fields(table["show"], "show", where, problems)
        if named is not None:
            if TITLE not in named:
                problems.append(f"{where}: show must list the title (a row is read by it)")
            elif len(set(named)) != len(named):
                problems.append(f"{where}: show lists a column twice")
            else:
                shown = tuple(named)
    drop: tuple[Field, ...] = tuple(f for f in default.drop_order if f in shown)
    if "drop_first" in table:
        named = _fields(table["drop_first"], "drop_first", where, problems)
        if named is not None:
            hidden = [column_name(f) for f in named if f not in shown]
            if TITLE in named:
                problems.append(f"{where}: drop_first cannot list the title (it never gives way)")
            elif hidden:
                problems.append(f"{where}: drop_first lists {', '.join(hidden)}, not shown")
            else:
                rest = _default_drop_order(shown)
                drop = (*named, *(f for f in rest if f not in named))
    widths = _widths(table.get("width", {}), where, problems)
    if problems:
        raise ColumnsError(_message(problems))
    return ColumnSetup(shown=shown, widths=widths, drop_order=drop)


def _fields(value: object, key: str, where: str, problems: list[str]) -> list[Field] | None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        problems.append(f"{where}: {key} must be a list of column names")
        return None
    found: list[Field] = []
    for name in value:
        f = _BY_NAME.get(name.strip().lower())
        if f is None:
            problems.append(f"{where}: {key}: {_unknown(name)}")
        else:
            found.append(f)
    return found if len(found) == len(value) else None


def _widths(value: object, where: str, problems: list[str]) -> dict[Field, int]:
    if not isinstance(value, Mapping):
        problems.append(f"{where}: width must be a table of column = cells")
        return {}
    widths: dict[Field, int] = {}
    for name, cells in value.items():
        f = _BY_NAME.get(str(name).strip().lower())
        if f is None:
            problems.append(f"{where}: width: {_unknown(str(name))}")
            continue
        least = 10 if f is TITLE else 1
        if isinstance(cells, bool) or not isinstance(cells, int) or not least <= cells <= WIDEST:
            problems.append(
                f"{where}: width.{name} must be a whole number of cells, {least} to {WIDEST}"
            )
            continue
        widths[f] = cells
    return widths


def _unknown(name: str) -> str:
    names = [column_name(f) for f in COLUMN_FIELDS]
    near = difflib.get_close_matches(name.lower(), names, n=2)
    hint = f"did you mean {' or '.join(near)}?" if near else f"columns: {', '.join(names)}"
    return f"no column {name!r}; {hint}"


def _message(problems: Sequence[str]) -> str:
    if len(problems) == 1:
        return problems[0]
    return f"{len(problems)} problems with the columns:\n  " + "\n  ".join(problems)
