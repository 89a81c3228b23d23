"""The help screen: every key binding in reach, grouped by where it is defined.

Built from the live bindings (`Screen.active_bindings`) of the screen it is opened over, so it
cannot drift from the keys that actually work, and a binding added anywhere shows up here.
A group is named by the part of the app that owns its keys (`HELP_GROUP`); keys that come with
Textual's own widgets are named by the kind of widget ("Scrolling", "Text field"), and those
that come with every screen (focus keys, copy) join "Everywhere".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from rich.table import Table
from textual import events
from textual.app import App, ComposeResult
from textual.binding import ActiveBinding, Binding, BindingType
from textual.containers import Horizontal, ScrollableContainer, Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import (
    Button,
    Input,
    Label,
    OptionList,
    Select,
    SelectionList,
    Static,
)
from textual.widgets._toggle_button import ToggleButton

from tracker_tui.widgets.issue_columns import MARKERS


@dataclass(frozen=True)
class HelpEntry:
    """One line of help: the keys that do something, and what."""

    keys: tuple[str, ...]
    description: str


@dataclass(frozen=True)
class HelpGroup:
    """The bindings one part of the app (the list, the screen, the app) defines."""

    title: str
    entries: tuple[HelpEntry, ...]
    rank: int = 0
    """Where it goes: the screen's own keys (0), then the widgets' (1), then everywhere's (2)."""


def help_groups(
    bindings: dict[str, ActiveBinding], key_display: Callable[[Binding], str]
) -> list[HelpGroup]:
    """Group active bindings by the node defining them, keys of one description together.

    Bindings without a description are plumbing (Textual's own focus keys and the like) and
    are left out; `key_display` says how a key is written (`App.get_key_display`: "^d").
    """
    groups: dict[str, dict[str, list[str]]] = {}
    places: dict[str, dict[str, tuple[int, int]]] = {}
    owners: dict[str, list[type[DOMNode]]] = {}
    for active in bindings.values():
        description = active.binding.description
        if not description:
            continue
        title = help_title(active.node, active.binding)
        keys = groups.setdefault(title, {}).setdefault(description, [])
        keys.append(key_display(active.binding))
        owner, index = _declared_place(type(active.node), active.binding)
        seen = owners.setdefault(title, [])
        if owner not in seen:
            seen.append(owner)
        place = (seen.index(owner), index)
        places.setdefault(title, {}).setdefault(description, place)
    kinds = {title for _kind, title in TEXTUAL_KINDS}
    return [
        HelpGroup(
            title,
            tuple(
                HelpEntry(tuple(keys), text)
                for text, keys in sorted(entries.items(), key=lambda e: places[title][e[0]])
            ),
            2 if title == EVERYWHERE else 1 if title in kinds else 0,
        )
        for title, entries in groups.items()
    ]


def _declared_place(cls: type[DOMNode], binding: Binding) -> tuple[type[DOMNode], int]:
    """The class declaring `binding` and its place in that class's BINDINGS: a key moved by
    the keymap is listed where its binding is declared, not last (where Textual puts it)."""
    owner = _defining_class(cls, binding)
    declared = list(Binding.make_bindings(owner.__dict__.get("BINDINGS", ())))
    for index, candidate in enumerate(declared):
        same_id = binding.id is not None and candidate.id == binding.id
        if same_id or (candidate.action, candidate.description) == (
            binding.action,
            binding.description,
        ):
            return owner, index
    return owner, len(declared)


def marker_group() -> HelpGroup:
    """What the markers at the start of a row mean (the list's legend line names those shown)."""
    return HelpGroup(
        "Row markers", tuple(HelpEntry((glyph,), meaning) for glyph, meaning in MARKERS), 1
    )


EVERYWHERE = "Everywhere"

TEXTUAL_KINDS: tuple[tuple[type[DOMNode] | str, str], ...] = (
    (App, EVERYWHERE),
    (Screen, EVERYWHERE),
    ("textual.widgets._text_area.TextArea", "Text editor"),
    (Input, "Text field"),
    (SelectionList, "List"),
    (OptionList, "List"),
    ("textual.widgets._data_table.DataTable", "Table"),
    (Select, "Picker"),
    (ToggleButton, "Checkbox"),
    (Button, "Button"),
    ("textual.widgets._markdown.Markdown", "Document"),
    (ScrollableContainer, "Scrolling"),
)
"""What the keys Textual gives a kind of widget are about, most specific kind first. A kind
named by its path is not imported for this (the help screen is imported with the app): the
text editor, the table and Markdown (with the markdown parser) load only when a screen first
shows one (docs/architecture.md#start-up)."""


def help_title(node: DOMNode, binding: Binding) -> str:
    """The group a binding of `node` belongs in: the owner's `HELP_GROUP` when the binding is
    the app's own, else what the Textual widget defining it is ("Scrolling", not
    "VerticalScroll"); a class named nowhere gets its name in words."""
    owner = _defining_class(type(node), binding)
    if not owner.__module__.startswith("textual."):
        title = getattr(node, "HELP_GROUP", None)
        return title if isinstance(title, str) else _words(type(node).__name__)
    named = {f"{klass.__module__}.{klass.__qualname__}" for klass in owner.__mro__}
    for kind, title in TEXTUAL_KINDS:
        if kind in named if isinstance(kind, str) else issubclass(owner, kind):
            return title
    return _words(owner.__name__)


def _defining_class(cls: type[DOMNode], binding: Binding) -> type[DOMNode]:
    """The class in `cls`'s hierarchy whose own BINDINGS hold `binding` (the most derived
    one: a subclass may bind the same action again with its own description)."""
    for klass in cls.__mro__:
        declared = klass.__dict__.get("BINDINGS", ())
        for candidate in Binding.make_bindings(declared):
            if (candidate.action, candidate.description) == (binding.action, binding.description):
                return klass
    return cls


def _words(name: str) -> str:
    """`LabelPicker` as "Label picker"."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).capitalize()


TWO_COLUMNS_FROM = 80
"""Terminal width (columns) from which the groups stand in two columns: in a narrower one, a
column's longest keys leave its descriptions no room at all."""


class HelpScreen(ModalScreen[None]):
    """The key bindings of the screen below, one table per group."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close help", id="help.close"),
    ]

    DEFAULT_CSS: ClassVar[str] = """
    HelpScreen {
        align: center middle;
        & > Vertical {
            width: 112;
            max-width: 100%;
            height: 90%;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
        & #help-title { text-style: bold; width: 1fr; content-align: center middle; }
        & VerticalScroll { height: 1fr; }
        & #help-columns { height: auto; }
        & .help-column { width: 1fr; height: auto; padding: 0 1; }
        & .help-group { margin-top: 1; }
        & #help-hint { color: $text-muted; width: 1fr; content-align: center middle; }
    }
    """

    def __init__(self, groups: list[HelpGroup]) -> None:
        super().__init__()
        self.groups = groups
        self.column_count = 0

    def compose(self) -> ComposeResult:
        """A title, the groups in balanced columns (two where they fit), and how to close."""
        self.column_count = _column_count(self.app.size.width)
        with Vertical():
            yield Label("Keys", id="help-title")
            with VerticalScroll(), Horizontal(id="help-columns"):
                for column in _columns(self.groups, self.column_count):
                    with Vertical(classes="help-column"):
                        for group in column:
                            yield Static(_group_table(group), classes="help-group")
            yield Label("esc, q or ? to close", id="help-hint")

    def on_mount(self) -> None:
        self._name_the_closing_keys()

    async def on_resize(self, event: events.Resize) -> None:
        """A terminal made narrower or wider than `TWO_COLUMNS_FROM` while help is open."""
        if _column_count(event.size.width) != self.column_count:
            await self.recompose()
            self._name_the_closing_keys()

    def _name_the_closing_keys(self) -> None:
        """As the keymap has them."""
        keys = [
            self.app.get_key_display(active.binding)
            for active in self.active_bindings.values()
            if active.binding.id == "help.close"
        ]
        if keys:
            listed = ", ".join(keys[:-1]) + f" or {keys[-1]}" if len(keys) > 1 else keys[0]
            self.query_one("#help-hint", Label).update(f"{listed} to close")


def _column_count(width: int) -> int:
    return 2 if width >= TWO_COLUMNS_FROM else 1


def _columns(groups: list[HelpGroup], count: int) -> list[list[HelpGroup]]:
    """Groups dealt into `count` columns of similar height, each to the shortest so far, the
    screen's own first (on top, where a small terminal shows them without scrolling)."""
    columns: list[list[HelpGroup]] = [[] for _ in range(count)]
    heights = [0] * count
    for group in sorted(groups, key=lambda group: (group.rank, -len(group.entries))):
        shortest = heights.index(min(heights))
        columns[shortest].append(group)
        heights[shortest] += len(group.entries) + 2
    return [column for column in columns if column]


def _group_table(group: HelpGroup) -> Table:
    """A two-column table: keys, then what they do."""
    table = Table(
        title=group.title,
        title_justify="left",
        title_style="bold",
        show_header=False,
        box=None,
        expand=True,
    )
    table.add_column("keys", style="bold", no_wrap=True)
    table.add_column("action", ratio=1)
    for entry in group.entries:
        table.add_row(" ".join(entry.keys), entry.description)
    return table
