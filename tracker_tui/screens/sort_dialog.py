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

from tracker_tui.data.source import SORT_KEYS, IssueQuery

SORT_LABELS = {
    "updated": "Last updated",
    "created": "Created",
    "priority": "Priority",
    "status": "Status (workflow order)",
    "title": "Title",
    "number": "Number",
}


class SortDialog(ModalScreen[IssueQuery | None]):
    """A list of sort columns; dismisses with the re-sorted query, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

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
        arrow = " ▼" if self._query.descending else " ▲"
        options = [
            Option(SORT_LABELS[key] + (arrow if key == self._query.sort else ""), id=key)
            for key in SORT_KEYS
        ]
        with Vertical():
            yield Label("Sort by", classes="dialog-title")
            yield OptionList(*options, id="sort-keys")
            yield Label("enter picks · again flips · esc cancels", classes="dialog-hint")

    def on_mount(self) -> None:
        """Start on the current sort."""
        self.query_one(OptionList).highlighted = SORT_KEYS.index(self._query.sort)

    @on(OptionList.OptionSelected, "#sort-keys")
    def pick_sort(self, event: OptionList.OptionSelected) -> None:
        """Sort by the chosen column, or flip the direction if it is the current one."""
        key = SORT_KEYS[event.option_index]
        self.dismiss(
            self._query.flipped() if key == self._query.sort else self._query.with_sort(key)
        )
