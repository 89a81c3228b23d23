"""The sort picker: choose the column; choosing the current one again flips the direction."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from issuefields import SORT_KEYS, SORTS
from tracker_tui.data.source import IssueQuery
from tracker_tui.key_names import hint_keys


class SortDialog(ModalScreen[IssueQuery | None]):
    """A list of sort columns; dismisses with the re-sorted query, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="sort.cancel")
    ]

    DEFAULT_CSS: ClassVar[str] = """
    SortDialog {
        align: center middle;
        & > Vertical {
            width: 46;
            height: auto;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
        & OptionList { height: auto; border: none; }
        & .dialog-title { text-style: bold; }
        & .dialog-hint { color: $text-muted; }
    }
    """

    def __init__(self, query: IssueQuery) -> None:
        super().__init__()
        self._query = query

    def compose(self) -> ComposeResult:
        """The columns, the current one with its direction arrow."""
        current = self._query.sort
        arrow = " ▼" if current.descending else " ▲"
        options = [
            Option(sort.label + (arrow if sort.key == current.key else ""), id=sort.key)
            for sort in SORTS
        ]
        with Vertical():
            yield Label("Sort by", classes="dialog-title")
            yield OptionList(*options, id="sort-keys")
            yield Label(
                f"enter picks · again flips · {hint_keys(self, 'sort.cancel')} cancels",
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        """Start on the current sort."""
        self.query_one(OptionList).highlighted = SORT_KEYS.index(self._query.sort.key)

    @on(OptionList.OptionSelected, "#sort-keys")
    def pick_sort(self, event: OptionList.OptionSelected) -> None:
        """Sort by the chosen column, or flip the direction if it is the current one."""
        key = SORTS[event.option_index].key
        query = self._query
        self.dismiss(query.flipped() if key == query.sort.key else query.with_sort(key))
