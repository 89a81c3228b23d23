"""The facts about an issue, written down once: its fields, their values and labels, the
workflow, the limits and the orders the list sorts in.

Everything else is built from this table: the cache's columns and ranks (cache.resources), its
row mapping and sort indexes (cache.query, cache.ordering), the list's columns
(tracker_tui.widgets.issue_columns), the form and the detail screen, the filter and sort
pickers, the command line's options, checks and JSON. Adding a field is a row here, a step in
cache.schema for its column, and a widget only when no kind below fits it.

Why a package of its own at the bottom of the client: the cache, the sync engine, the app and
the command line all need these facts, and none of them may import the others upward (the
cache imports neither `sync` nor `tracker_tui`); they are no part of storage either. So this
package imports nothing but the standard library, and every client package may import it.
The reference service (`server/`) keeps its own copy: the client relies on the values written
down in docs/api.md#known-values, not on the service's code. `tests/test_issuefields.py` checks that
the two agree.

Values a server sends that are not listed here (a status another vendor invented) are kept,
shown as sent and sorted last, but never offered for setting.

The table stays data: no field knows how to draw or store itself. Each layer decides what a
`Kind` means to it, in one place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import ClassVar, NoReturn


class Kind(StrEnum):
    """What sort of value a field holds: each layer maps a kind to a column, an editor, a
    cell, an option."""

    NUMBER = "number"
    """An integer the server assigns (`#42`); read-only."""
    TEXT = "text"
    """One line, stored trimmed."""
    MARKDOWN = "markdown"
    """Long text, kept as typed (not carried in list rows)."""
    CHOICE = "choice"
    """One of `Field.choices`, in their order; a value the table does not list ranks last."""
    USER = "user"
    """A user's id, shown by name; None is nobody."""
    PROJECT = "project"
    """A project's id, shown by key; None is no project."""
    LABELS = "labels"
    """A set of short texts, in the order given."""
    TIME = "time"
    """A server timestamp; read-only."""


class _Record:
    """A record of fixed fields (`_fields`, in order, its `__slots__`): set once by `__init__`,
    compared, hashed and shown by value. What `@dataclass(frozen=True, slots=True)` made,
    without its cost at import: building a dataclass compiles its methods, about a
    millisecond each, and this module is imported before the app's first frame
    (docs/architecture.md#start-up)."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()

    def _set(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, _Record)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type[_Record], tuple[object, ...]]:
        return type(self), self._values()


class Tone(StrEnum):
    """How a value stands out in the issue list (a style of the list widget)."""

    PLAIN = "plain"
    MUTED = "muted"
    CLOSED = "closed"
    URGENT = "urgent"
    HIGH = "high"


class Choice(_Record):
    """One known value of a choice field."""

    __slots__ = _fields = ("value", "label", "tone", "short")

    value: str
    """As the API spells it."""
    label: str
    """As a person reads it."""
    tone: Tone
    short: str | None
    """What a list cell shows instead of the label, if anything."""

    def __init__(
        self, value: str, label: str, tone: Tone = Tone.PLAIN, short: str | None = None
    ) -> None:
        self._set("value", value)
        self._set("label", label)
        self._set("tone", tone)
        self._set("short", short)


class Check(_Record):
    """What the known limits allow a value of the field (docs/api.md#field-limits); the client
    checks it before anything is queued (so the user hears at once, offline too), and the server
    checks it again."""

    __slots__ = _fields = ("required", "max_chars", "max_items")

    required: bool
    """At least one character that is not blank."""
    max_chars: int | None
    """The longest text; for labels, the longest label."""
    max_items: int | None
    """The most items of a list."""

    def __init__(
        self, required: bool = False, max_chars: int | None = None, max_items: int | None = None
    ) -> None:
        self._set("required", required)
        self._set("max_chars", max_chars)
        self._set("max_items", max_items)


class ListColumn(_Record):
    """How a field shows as a column of the issue list."""

    __slots__ = _fields = ("width", "keep", "header", "shown")

    width: int
    """Cells; 0 for the column that takes what the others leave (the title)."""
    keep: int | None
    """As the terminal narrows, the columns with the lowest `keep` give way first; None
    never gives way."""
    header: str | None
    """The column's heading when not the field's label."""
    shown: bool
    """Shown unless config.toml's `[columns]` says otherwise; False: only when it asks."""

    def __init__(
        self, width: int, keep: int | None = 0, header: str | None = None, shown: bool = True
    ) -> None:
        self._set("width", width)
        self._set("keep", keep)
        self._set("header", header)
        self._set("shown", shown)


_NO_CHECK = Check()
_FIELD_FIELDS: tuple[str, ...] = (
    *("member", "label", "kind", "choices", "editable", "filterable", "check"),
    *("default", "empty", "word", "column"),
)


class Field(_Record):
    """One member of an issue as the client knows it. Each is one of the table's rows, so a
    field is equal only to itself (and hashes as fast)."""

    __slots__ = (*_FIELD_FIELDS, "_labels")
    _fields = _FIELD_FIELDS
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    member: str
    """The API's member name, which is also the cache's column."""
    label: str
    """How a person reads the field's name: form and detail, list heading, footer key."""
    kind: Kind
    choices: tuple[Choice, ...]
    editable: bool
    """Set by the form, the detail screen's pickers and the command line."""
    filterable: bool
    """Offered by the filter picker and `issues list`."""
    check: Check
    default: str | None
    """What a new issue holds when the create does not say (choices; other kinds go empty)."""
    empty: str
    """How "no value" reads where a picker offers it."""
    word: str
    """What a person types for the field (`--project`, a filter chip `project: WEB`); the
    member when not given."""
    column: ListColumn | None
    """None: not a column of the list."""
    _labels: Mapping[str, Choice]

    def __init__(
        self,
        member: str,
        label: str,
        kind: Kind,
        choices: tuple[Choice, ...] = (),
        editable: bool = False,
        filterable: bool = False,
        check: Check = _NO_CHECK,
        default: str | None = None,
        empty: str = "—",
        word: str = "",
        column: ListColumn | None = None,
    ) -> None:
        self._set("member", member)
        self._set("label", label)
        self._set("kind", kind)
        self._set("choices", choices)
        self._set("editable", editable)
        self._set("filterable", filterable)
        self._set("check", check)
        self._set("default", default)
        self._set("empty", empty)
        self._set("word", word or member)
        self._set("column", column)
        self._set("_labels", {c.value: c for c in choices})

    @property
    def values(self) -> tuple[str, ...]:
        """The known values, in the field's order."""
        return tuple(choice.value for choice in self.choices)

    def choice(self, value: object) -> Choice | None:
        """The known choice `value` is, None for a value the table does not list."""
        return self._labels.get(value) if isinstance(value, str) else None

    def label_of(self, value: str) -> str:
        """A value's label; one the table does not know is shown as sent."""
        found = self._labels.get(value)
        return value if found is None else found.label


STATUS_CHOICES = (
    Choice("backlog", "Backlog"),
    Choice("todo", "Todo"),
    Choice("in_progress", "In progress"),
    Choice("in_review", "In review"),
    Choice("done", "Done", Tone.CLOSED),
    Choice("canceled", "Canceled", Tone.CLOSED),
)
"""The statuses the client knows, in workflow order (docs/api.md#statuses-and-workflow)."""

PRIORITY_CHOICES = (
    Choice("urgent", "Urgent", Tone.URGENT),
    Choice("high", "High", Tone.HIGH),
    Choice("medium", "Medium"),
    Choice("low", "Low"),
    Choice("none", "No priority", Tone.MUTED, short="—"),
)
"""The priorities the client knows, most pressing first (docs/api.md#priorities)."""

TEXT_MAX = 65_535
"""The longest description or comment the client lets through (docs/api.md#field-limits)."""

NUMBER = Field("number", "Number", Kind.NUMBER, column=ListColumn(7, keep=None, header="#"))
TITLE = Field(
    "title",
    "Title",
    Kind.TEXT,
    editable=True,
    check=Check(required=True, max_chars=255),
    column=ListColumn(0),
)
DESCRIPTION = Field(
    "description", "Description", Kind.MARKDOWN, editable=True, check=Check(max_chars=TEXT_MAX)
)
STATUS = Field(
    "status",
    "Status",
    Kind.CHOICE,
    STATUS_CHOICES,
    editable=True,
    filterable=True,
    default="todo",
    column=ListColumn(11, keep=5),
)
PRIORITY = Field(
    "priority",
    "Priority",
    Kind.CHOICE,
    PRIORITY_CHOICES,
    editable=True,
    filterable=True,
    default="none",
    column=ListColumn(10, keep=3),
)
ASSIGNEE = Field(
    "assignee",
    "Assignee",
    Kind.USER,
    editable=True,
    filterable=True,
    empty="Unassigned",
    column=ListColumn(14, keep=2),
)
PROJECT = Field(
    "project_id",
    "Project",
    Kind.PROJECT,
    editable=True,
    filterable=True,
    empty="No project",
    word="project",
    column=ListColumn(7, keep=1),
)
LABELS = Field(
    "labels",
    "Labels",
    Kind.LABELS,
    editable=True,
    filterable=True,
    check=Check(max_chars=50, max_items=20),
    word="label",
    column=ListColumn(16),
)
UPDATED_AT = Field("updated_at", "Updated", Kind.TIME, column=ListColumn(9, keep=4))
CREATED_AT = Field("created_at", "Created", Kind.TIME, column=ListColumn(9, keep=0, shown=False))

ISSUE_FIELDS: tuple[Field, ...] = (
    NUMBER,
    TITLE,
    DESCRIPTION,
    STATUS,
    PRIORITY,
    ASSIGNEE,
    PROJECT,
    LABELS,
    UPDATED_AT,
    CREATED_AT,
)
"""Every field of an issue but its `id`, in the order a person reads them."""

FIELDS: Mapping[str, Field] = {f.member: f for f in ISSUE_FIELDS}
"""Fields by member."""

EDITABLE: tuple[Field, ...] = tuple(f for f in ISSUE_FIELDS if f.editable)
FILTERS: tuple[Field, ...] = tuple(f for f in ISSUE_FIELDS if f.filterable)
"""The fields one can filter on, in the filter picker's order."""

LISTED: tuple[Field, ...] = tuple(f for f in ISSUE_FIELDS if f not in (NUMBER, TITLE, DESCRIPTION))
"""The fields a view of one issue lists under its heading (the number and title) and above its
body (the description): the detail screen, `issues show`."""

COMMENT_BODY = Field(
    "body", "Comment", Kind.MARKDOWN, check=Check(required=True, max_chars=TEXT_MAX)
)


class Sort(_Record):
    """An order of the issue list (the cache keeps an index for each)."""

    __slots__ = _fields = ("key", "field", "descending", "label")

    key: str
    """What a person types (`--sort -priority`) and a saved view stores."""
    field: Field
    descending: bool
    """The direction it sorts in when first picked: newest first, urgent first, A to Z. A
    choice field's first direction lists its choices in the table's order."""
    label: str
    """In the sort picker; the field's label when not given."""

    def __init__(self, key: str, field: Field, descending: bool, label: str = "") -> None:
        self._set("key", key)
        self._set("field", field)
        self._set("descending", descending)
        self._set("label", label or field.label)


SORTS: tuple[Sort, ...] = (
    Sort("updated", UPDATED_AT, descending=True, label="Last updated"),
    Sort("created", CREATED_AT, descending=True),
    Sort("priority", PRIORITY, descending=True),
    Sort("status", STATUS, descending=False, label="Status (workflow order)"),
    Sort("title", TITLE, descending=False),
    Sort("number", NUMBER, descending=True),
)
"""In the order the sort picker lists them (and `next_sort` steps through them)."""

SORT_KEYS: tuple[str, ...] = tuple(sort.key for sort in SORTS)
SORTS_BY_KEY: Mapping[str, Sort] = {sort.key: sort for sort in SORTS}
DEFAULT_SORT = SORTS[0]


TRANSITIONS: Mapping[str, tuple[str, ...]] = {
    "backlog": ("todo", "in_progress", "canceled"),
    "todo": ("backlog", "in_progress", "canceled"),
    "in_progress": ("todo", "in_review", "done", "canceled"),
    "in_review": ("in_progress", "done", "canceled"),
    "done": ("todo",),
    "canceled": ("todo",),
}
"""The workflow (docs/api.md#statuses-and-workflow): from a status, the statuses it may move to
(setting the same status again is no move). The server has the last word; the client offers only
moves that can succeed and names the ones that would when one is refused."""


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


def new_issue_defaults() -> dict[str, object]:
    """What a new issue holds in every editable field the create leaves out (the
    defaults of docs/api.md#priorities); required fields have none."""
    empty: dict[Kind, object] = {Kind.TEXT: "", Kind.MARKDOWN: ""}
    return {
        f.member: [] if f.kind is Kind.LABELS else empty.get(f.kind, f.default)
        for f in EDITABLE
        if not f.check.required
    }


def problem(f: Field, value: object) -> str | None:
    """Why `value` breaks the field's check, in a sentence; None when it does not. Text of a
    `TEXT` field is checked as it is stored: trimmed."""
    check = f.check
    if isinstance(value, str):
        text = value.strip() if f.kind is Kind.TEXT else value
        if check.required and not text.strip():
            return f"A {f.label.lower()} is required."
        if check.max_chars is not None and len(text) > check.max_chars:
            return f"At most {check.max_chars:,} characters ({len(text):,} now)."
        return None
    if isinstance(value, Sequence):
        items = [str(item) for item in value]
        if check.max_items is not None and len(items) > check.max_items:
            return f"At most {check.max_items} {f.label.lower()} ({len(items)} now)."
        long = [item for item in items if check.max_chars and len(item) > check.max_chars]
        if long:
            return f"{f.label} have at most {check.max_chars} characters: {long[0][:20]}…"
    return None
