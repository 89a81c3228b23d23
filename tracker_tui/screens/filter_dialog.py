"""The filter picker: several values per field, across status, priority, assignee, project and
label, plus "only mine".

The values come from the source (`distinct_values`), loaded by the screen and handed in, so the
dialog opens at once and never touches SQLite itself. A value selected in the query but absent
from the source (a saved view naming a label nobody uses any more) is still listed, so it can be
unselected.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Label, OptionList, SelectionList
from textual.widgets.option_list import Option

from issuefields import FILTERS, Field
from tracker_tui.data.source import FilterValue, IssueQuery
from tracker_tui.key_names import hint_keys

Choices = dict[Field, list[tuple[FilterValue, str]]]
"""The `(value, label)` pairs the source offers, per field."""


class FilterDialog(ModalScreen[IssueQuery | None]):
    """Fields on the left, their values on the right; dismisses with the filtered query."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="filter.cancel"),
        Binding("ctrl+s", "apply", "Apply", id="filter.apply"),
    ]

    DEFAULT_CSS: ClassVar[str] = """
    FilterDialog {
        align: center middle;
        & > Vertical {
            width: 72;
            height: auto;
            max-height: 100%;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
        & #filter-panes { height: 1fr; max-height: 14; min-height: 5; }
        & #filter-fields { width: 20; height: 1fr; }
        & #filter-values { width: 1fr; height: 1fr; }
        & #filter-buttons { height: auto; align-horizontal: right; }
        & #filter-buttons Button { margin-left: 1; }
        & .dialog-title { text-style: bold; }
        & .dialog-hint { color: $text-muted; }
    }
    """

    def __init__(
        self,
        query: IssueQuery,
        choices: Choices,
        *,
        on_apply: Callable[[IssueQuery], None] | None = None,
    ) -> None:
        super().__init__()
        self._query = query
        self._choices = choices
        self._on_apply = on_apply
        self._selected: dict[Field, set[FilterValue]] = {
            field: set(query.values(field)) for field in FILTERS
        }
        self._field = FILTERS[0]

    def compose(self) -> ComposeResult:
        """The field list, the value list, "only mine", and the buttons."""
        with Vertical():
            yield Label("Filter issues", classes="dialog-title")
            with Horizontal(id="filter-panes"):
                yield OptionList(
                    *(Option(field.label, id=field.word) for field in FILTERS),
                    id="filter-fields",
                )
                yield SelectionList[FilterValue](id="filter-values")
            yield Checkbox("Only issues assigned to me", self._query.mine, id="filter-mine")
            with Horizontal(id="filter-buttons"):
                yield Button("Clear all", id="filter-clear")
                yield Button("Cancel", id="filter-cancel")
                yield Button("Apply", variant="primary", id="filter-apply")
            yield Label(
                f"space toggles · tab moves · {hint_keys(self, 'filter.apply')} applies · "
                f"{hint_keys(self, 'filter.cancel')} cancels",
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        """Start on the first field, its values shown."""
        self.query_one("#filter-fields", OptionList).highlighted = 0
        self._show_field(self._field)

    def reopen(self, query: IssueQuery, choices: Choices) -> None:
        """Start over on `query`, as a new dialog would: the list screen keeps one dialog
        (`IssueListScreen.action_filter`) instead of building one per use and dropping it,
        some 7,000 objects left to the cyclic garbage collector each time, and its removal
        laid out the list screen again in the key that applied it (issue 18)."""
        self._query = query
        self._choices = choices
        self._selected = {field: set(query.values(field)) for field in FILTERS}
        self._field = FILTERS[0]
        if not self.is_mounted:
            return
        self.query_one("#filter-mine", Checkbox).value = query.mine
        fields = self.query_one("#filter-fields", OptionList)
        with fields.prevent(OptionList.OptionHighlighted):
            fields.highlighted = 0
        self._show_field(self._field)
        self.set_focus(fields, scroll_visible=False)

    @property
    def result(self) -> IssueQuery:
        """The query as the dialog's selections stand."""
        query = self._query
        for field in FILTERS:
            query = query.with_values(field, frozenset(self._selected[field]))
        return query.replace(mine=self.query_one("#filter-mine", Checkbox).value)

    @on(OptionList.OptionHighlighted, "#filter-fields")
    def switch_field(self, event: OptionList.OptionHighlighted) -> None:
        """Show the values of the highlighted field."""
        self._show_field(FILTERS[event.option_index])

    @on(SelectionList.SelectedChanged, "#filter-values")
    def keep_selection(self, event: SelectionList.SelectedChanged[FilterValue]) -> None:
        """Remember the shown field's selection (the list is refilled per field)."""
        self._selected[self._field] = set(event.selection_list.selected)

    @on(Button.Pressed, "#filter-apply")
    def action_apply(self) -> None:
        """Dismiss with the filtered query (the Apply button and ctrl+s).

        `on_apply` hears of it first, while the dialog is still up: the screen below starts
        reading the new rows during the dialog's removal instead of after it (the dismiss
        callback only runs once the screen below has resumed).
        """
        result = self.result
        if self._on_apply is not None:
            self._on_apply(result)
        self.dismiss(result)

    @on(Button.Pressed, "#filter-cancel")
    def cancel(self) -> None:
        """Dismiss without changing anything."""
        self.dismiss(None)

    @on(Button.Pressed, "#filter-clear")
    def clear_all(self) -> None:
        """Unselect every value of every field, and "only mine"."""
        for values in self._selected.values():
            values.clear()
        self.query_one("#filter-mine", Checkbox).value = False
        self._show_field(self._field)

    def _show_field(self, field: Field) -> None:
        """Fill the value list with `field`'s values, the selected ones ticked."""
        self._field = field
        values = self.query_one("#filter-values", SelectionList)
        offered = list(self._choices.get(field, []))
        known = {value for value, _label in offered}
        missing = sorted(
            self._selected[field] - known, key=lambda value: (value is None, value or "")
        )
        offered += [(value, field.empty if value is None else value) for value in missing]
        selected = self._selected[field]
        with values.prevent(SelectionList.SelectedChanged):
            values.clear_options()
            values.add_options([(label, value, value in selected) for value, label in offered])
            values.highlighted = 0 if offered else None
