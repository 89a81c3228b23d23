"""An issue as a text to edit in `$EDITOR`, like `git commit`'s: the fields on top, one
`Name: value` a line, then a blank line and the description (Markdown) below, then the help.

`render` writes it from the issue's values (or a new issue's), `parse` reads it back into the
fields as a write sends them, checked as the form checks them (docs/api.md#known-values) and a
status move as the workflow allows it. Every mistake is a `TemplateError` naming its line, so
the editor can be opened again on the same text, or the text kept as a draft.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cache import JsonObject, JsonValue
from issuefields import (
    ASSIGNEE,
    DESCRIPTION,
    EDITABLE,
    LABELS,
    PRIORITY,
    PROJECT,
    STATUS,
    TRANSITIONS,
    Field,
    Kind,
    can_move,
    new_issue_defaults,
    problem,
)
from tracker_tui.data.people import Directory, choice_value
from tracker_tui.editor import TemplateError, with_help, without_help

HEADER_FIELDS: tuple[Field, ...] = tuple(f for f in EDITABLE if f is not DESCRIPTION)
"""The fields written on top, in the form's order."""
LINE = re.compile(r"^\s*([A-Za-z][A-Za-z _-]*?)\s*:\s?(.*)$")


def _field_named(name: str) -> Field | None:
    folded = name.strip().casefold().replace("-", " ").replace("_", " ")
    for field in HEADER_FIELDS:
        spelled = (field.label, field.word, field.member)
        if folded in (word.casefold().replace("_", " ") for word in spelled):
            return field
    return None


def cell_text(field: Field, value: JsonValue, directory: Directory) -> str:
    """A field's value as the template (and the bulk table) writes it."""
    if field.kind is Kind.LABELS:
        return ", ".join(str(label) for label in value) if isinstance(value, list) else ""
    if field.kind in (Kind.USER, Kind.PROJECT):
        return directory.name(value if isinstance(value, str) else None)
    return "" if value is None else str(value)


def help_lines(values: JsonObject, directory: Directory, *, new: bool) -> list[str]:
    """What each field takes, under the scissors line."""
    status = str(values.get(STATUS.member) or STATUS.default)
    moves = ", ".join(TRANSITIONS.get(status, ()))
    keys = ", ".join(p.key or p.name for p in directory.projects if p.state != "archived")
    what = "A new issue" if new else "The issue"
    return [
        f"{what}: the fields on top, one a line; the description (Markdown) after the first",
        "blank line. A field left out keeps its value. Lines starting with '#' in the fields",
        "are dropped; in the description they are Markdown headings.",
        "Status: " + (", ".join(STATUS.values) if new else f"{status}, or {moves or 'no move'}"),
        "Priority: " + ", ".join(PRIORITY.values),
        "Assignee: me, a user's name (or the start of one), or none",
        f"Project: a project's key ({keys or 'none in the cache'}), or none",
        "Labels: separated by commas",
        "An empty file, or one saved unchanged, cancels.",
    ]


def render(values: JsonObject, directory: Directory, *, new: bool) -> str:
    """The text to edit: the fields, a blank line, the description, the help."""
    lines = [
        f"{field.label}: {cell_text(field, values.get(field.member), directory)}".rstrip()
        for field in HEADER_FIELDS
    ]
    body = str(values.get(DESCRIPTION.member) or "")
    return with_help("\n".join(lines) + "\n\n" + body, help_lines(values, directory, new=new))


def parse(
    text: str, directory: Directory, current: JsonObject | None, *, help: Sequence[str] = ()
) -> JsonObject:
    """The fields of an edited template, as the write sends them: every editable field for a
    new issue (`current` None: what the template leaves out gets the defaults), else those the
    template gives (a status checked as a move from `current`'s)."""
    lines = without_help(text, help).split("\n")
    given: dict[str, JsonValue] = {}
    seen: dict[str, int] = {}
    index = 0
    while index < len(lines) and lines[index].strip():
        number, line = index + 1, lines[index]
        index += 1
        if line.lstrip().startswith("#"):
            continue
        match = LINE.match(line)
        field = _field_named(match.group(1)) if match else None
        if match is None:
            raise TemplateError(
                number,
                f"expected 'Field: value' (or a blank line before the description): {line[:40]!r}",
            )
        if field is None:
            known = ", ".join(f.label for f in HEADER_FIELDS)
            raise TemplateError(number, f"unknown field {match.group(1)!r} (fields: {known})")
        if field.member in seen:
            raise TemplateError(number, f"{field.label} is given twice (line {seen[field.member]})")
        seen[field.member] = number
        given[field.member] = _value(field, match.group(2), directory, number, current)
    given[DESCRIPTION.member] = "\n".join(lines[index:]).strip("\n")
    if (found := problem(DESCRIPTION, given[DESCRIPTION.member])) is not None:
        raise TemplateError(index + 1, f"description: {found}")
    if current is None:
        fields = {**new_issue_defaults(), **given}
        if not str(fields.get("title") or "").strip():
            raise TemplateError(seen.get("title", 1), "a new issue needs a title")
        return {f.member: _json(fields.get(f.member)) for f in EDITABLE}
    return given


def changes(fields: JsonObject, current: JsonObject) -> JsonObject:
    """The fields whose value differs from the issue's (a missing description is empty, and
    one differing only by the blanks an editor trims at line ends is the same)."""
    return {
        name: value
        for name, value in fields.items()
        if _same(current.get(name) or _EMPTY.get(name)) != _same(value or _EMPTY.get(name))
    }


def _same(value: JsonValue) -> JsonValue:
    if isinstance(value, str):
        return "\n".join(line.rstrip() for line in value.split("\n")).strip("\n")
    return value


_EMPTY: dict[str, JsonValue] = {DESCRIPTION.member: "", LABELS.member: []}


def _json(value: object) -> JsonValue:
    if isinstance(value, list):
        return [str(item) for item in value]
    return value if value is None or isinstance(value, str | int) else str(value)


def _value(
    field: Field, text: str, directory: Directory, line: int, current: JsonObject | None
) -> JsonValue:
    """One field's typed value, checked; `TemplateError` names the line otherwise."""
    text = text.strip()
    try:
        if field.kind is Kind.CHOICE:
            value = choice_value(field, text)
            if value is None:
                raise ValueError(f"{text!r} is not one of: {', '.join(field.values)}")
            if field is STATUS and current is not None:
                was = str(current.get(STATUS.member) or "")
                if not can_move(was, value):
                    allowed = ", ".join(TRANSITIONS.get(was, ())) or "none"
                    raise ValueError(
                        f"{STATUS.label_of(was)} → {STATUS.label_of(value)} is not a move the "
                        f"workflow allows (from {was}: {allowed})"
                    )
            return value
        if field is ASSIGNEE:
            return directory.user(text)
        if field is PROJECT:
            return directory.project(text)
        if field is LABELS:
            labels = list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
            if (found := problem(field, labels)) is not None:
                raise ValueError(found)
            return list[JsonValue](labels)
    except ValueError as error:
        raise TemplateError(line, f"{field.label}: {error}") from None
    if (found := problem(field, text)) is not None:
        raise TemplateError(line, f"{field.label}: {found}")
    return text
