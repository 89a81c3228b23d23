"""A picker: one value out of a short list (a status, a priority, an assignee, a project)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option


class ChoiceDialog(ModalScreen[str | None]):
    """Dismisses with the chosen value, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    DEFAULT_CSS: ClassVar[str] = """
    ChoiceDialog {
        align: center middle;
        & > Vertical {
            width: 50;
            height: auto;
            max-height: 80%;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
        & OptionList { height: auto; max-height: 20; }
        & .dialog-title { text-style: bold; }
        & .dialog-hint { color: $text-muted; }
    }
    """

    def __init__(
        self,
        title: str,
        choices: Sequence[tuple[str, str]],
        *,
        current: str | None = None,
        hint: str = "",
    ) -> None:
        super().__init__()
        self._title = title
        self._choices = list(choices)
        self._current = current
        self._hint = hint

    def compose(self) -> ComposeResult:
        """The question, the options (the current one highlighted), and the keys."""
        with Vertical():
            yield Label(self._title, classes="dialog-title")
            options = [
                Option(f"{label}  (current)" if value == self._current else label, id=value)
                for value, label in self._choices
            ]
            yield OptionList(*options, id="choices")
            yield Label(
                " · ".join(part for part in (self._hint, "enter picks · esc cancels") if part),
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        """Start on the current value, so enter alone keeps it."""
        values = [value for value, _label in self._choices]
        if self._current in values:
            self.query_one(OptionList).highlighted = values.index(self._current)

    @on(OptionList.OptionSelected, "#choices")
    def pick(self, event: OptionList.OptionSelected) -> None:
        """Dismiss with the value behind the chosen line."""
        self.dismiss(event.option.id)
