"""The help screen: every key binding in reach, grouped by where it is defined.

Built from the live bindings (`Screen.active_bindings`) of the screen it is opened over, so it
cannot drift from the keys that actually work, and a binding added anywhere shows up here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static


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


def help_groups(
    bindings: dict[str, ActiveBinding], key_display: Callable[[Binding], str]
) -> list[HelpGroup]:
    """Group active bindings by the node defining them, keys of one description together.

    Bindings without a description are plumbing (Textual's own focus keys and the like) and
    are left out; `key_display` says how a key is written (`App.get_key_display`: "^d").
    """
    groups: dict[str, dict[str, list[str]]] = {}
    for active in bindings.values():
        description = active.binding.description
        if not description:
            continue
        node = active.node
        title = getattr(node, "HELP_GROUP", type(node).__name__)
        keys = groups.setdefault(title, {}).setdefault(description, [])
        keys.append(key_display(active.binding))
    return [
        HelpGroup(title, tuple(HelpEntry(tuple(keys), text) for text, keys in entries.items()))
        for title, entries in groups.items()
    ]


class HelpScreen(ModalScreen[None]):
    """The key bindings of the screen below, one table per group."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close help"),
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

    def compose(self) -> ComposeResult:
        """A title, the groups in two balanced columns, and how to close."""
        with Vertical():
            yield Label("Keys", id="help-title")
            with VerticalScroll(), Horizontal(id="help-columns"):
                for column in _columns(self.groups, 2):
                    with Vertical(classes="help-column"):
                        for group in column:
                            yield Static(_group_table(group), classes="help-group")
            yield Label("esc, q or ? to close", id="help-hint")


def _columns(groups: list[HelpGroup], count: int) -> list[list[HelpGroup]]:
    """Groups dealt into `count` columns of similar height, each to the shortest so far."""
    columns: list[list[HelpGroup]] = [[] for _ in range(count)]
    heights = [0] * count
    for group in sorted(groups, key=lambda group: -len(group.entries)):
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
    table.add_column("keys", style="bold", width=18, no_wrap=True)
    table.add_column("action", ratio=1)
    for entry in group.entries:
        table.add_row(" ".join(entry.keys), entry.description)
    return table
