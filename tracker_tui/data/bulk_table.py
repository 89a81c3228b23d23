"""Many issues as a text table to edit in `$EDITOR`: one line an issue, its number, status,
priority, assignee, labels and title, cells separated by `|` (the title last, so it may hold
one). What the user changed becomes a bulk plan (`tracker_tui.data.bulk.plan_cells`): the same
preview as a bulk change, workflow checked, queued as one batch that `u` undoes.

A line deleted leaves its issue alone; a line whose number is not one of the issues the table
was written from, a cell that cannot be read, or a line that is not a row is a `TemplateError`
naming the line. Only the cells that differ from the issue's value now are changes, so a name
that two users share is never asked about unless it was typed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from cache import IssueRow, JsonObject, JsonValue
from issuefields import ASSIGNEE, LABELS, PRIORITY, STATUS, TITLE, Field, Kind, problem
from tracker_tui.data.issue_text import cell_text
from tracker_tui.data.people import Directory, choice_value
from tracker_tui.editor import TemplateError, with_help, without_help

COLUMNS: tuple[Field, ...] = (STATUS, PRIORITY, ASSIGNEE, LABELS, TITLE)
"""After the number, in this order; the title last."""
SEPARATOR = " | "
NUMBERS = re.compile(r"^\s*(\d+)\s*\|", re.MULTILINE)


def help_lines(undo_key: str = "u") -> tuple[str, ...]:
    """The table's help; `undo_key` undoes a bulk change (the app's, as its keymap has it)."""
    return (
        "One line an issue: number | status | priority | assignee | labels | title.",
        "Change any cell but the number; the changes are previewed before anything is queued,",
        f"and queued as one bulk change ({undo_key} undoes it). A line deleted leaves its issue "
        "alone.",
        "Status: " + ", ".join(STATUS.values) + " (moves the workflow allows)",
        "Priority: " + ", ".join(PRIORITY.values),
        "Assignee: me, a user's name (or the start of one), or none. Labels: separated by commas.",
        "An empty file, or one saved unchanged, cancels.",
    )


HELP = help_lines()


def _value(row: IssueRow, field: Field) -> JsonValue:
    if field is LABELS:
        return list[JsonValue](row.labels)
    value = row.cells.get(field.member)
    return value if value is None or isinstance(value, str | int) else str(value)


def render(rows: Sequence[IssueRow], directory: Directory, help: Sequence[str] = HELP) -> str:
    """The table of `rows` (those with a number: the table names issues by it), its columns
    aligned, the help below."""
    numbered = [row for row in rows if row.number is not None]
    cells = [
        [str(row.number), *(cell_text(f, _value(row, f), directory) for f in COLUMNS)]
        for row in numbered
    ]
    heading = ["number", *(field.label.lower() for field in COLUMNS)]
    widths = [max(len(line[i]) for line in [heading, *cells]) for i in range(len(heading) - 1)]

    def line(parts: Sequence[str]) -> str:
        padded = [part.ljust(width) for part, width in zip(parts, widths, strict=False)]
        return SEPARATOR.join([*padded, parts[-1]]).rstrip()

    body = "\n".join(["# " + line(heading), *(line(row) for row in cells)])
    return with_help(body, help)


def numbers_in(text: str, help: Sequence[str] = HELP) -> list[int]:
    """The issue numbers a table names (to read those issues before parsing a kept draft)."""
    return [int(found) for found in NUMBERS.findall(without_help(text, help))]


def parse(
    text: str, rows: Mapping[int, IssueRow], directory: Directory, help: Sequence[str] = HELP
) -> dict[str, JsonObject]:
    """The changes the edited table makes, by issue id: only cells that differ from the
    issue's value now; `rows` are the issues it may name, by number."""
    edits: dict[str, JsonObject] = {}
    seen: dict[int, int] = {}
    for index, line in enumerate(without_help(text, help).split("\n"), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [part.strip() for part in line.split("|", len(COLUMNS))]
        if len(parts) != len(COLUMNS) + 1:
            raise TemplateError(
                index, f"expected {len(COLUMNS) + 1} cells separated by '|': {line[:40]!r}"
            )
        number = parts[0].lstrip("#")
        if not number.isdigit() or int(number) not in rows:
            raise TemplateError(index, f"{parts[0]!r} is not one of the issues opened")
        if int(number) in seen:
            raise TemplateError(index, f"#{number} is on line {seen[int(number)]} already")
        seen[int(number)] = index
        row = rows[int(number)]
        changes: JsonObject = {}
        for field, typed in zip(COLUMNS, parts[1:], strict=True):
            if typed == cell_text(field, _value(row, field), directory):
                continue
            value = _cell(field, typed, directory, index)
            if value != _value(row, field):
                changes[field.member] = value
        if changes:
            edits[row.id] = changes
    return edits


def _cell(field: Field, typed: str, directory: Directory, line: int) -> JsonValue:
    """One changed cell's value, checked; `TemplateError` names the line otherwise."""
    name = field.label.lower()
    try:
        if field.kind is Kind.CHOICE:
            value = choice_value(field, typed)
            if value is None:
                raise ValueError(f"{typed!r} is not one of: {', '.join(field.values)}")
            return value
        if field.kind is Kind.USER:
            return directory.user(typed)
        if field.kind is Kind.LABELS:
            labels = list(dict.fromkeys(p.strip() for p in typed.split(",") if p.strip()))
            if (found := problem(field, labels)) is not None:
                raise ValueError(found)
            return list[JsonValue](labels)
    except ValueError as error:
        raise TemplateError(line, f"{name}: {error}") from None
    if (found := problem(field, typed)) is not None:
        raise TemplateError(line, f"{name}: {found}")
    return typed
