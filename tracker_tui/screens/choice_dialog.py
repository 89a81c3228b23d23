"""A picker: one value out of a list (a status, a priority, an assignee, a project), narrowed
by typing.

The field on top has the focus: what is typed narrows the list to the choices containing it
(letter case aside), while the arrows, page keys, home and end move the highlight in the list
and enter picks it, so a long list of people is two or three letters and enter away. The list
is rebuilt as the field changes; its messages carry the option (whose id is the value), and
enter looks the highlight up against the text it was given, so keys arriving in one burst pick
what the user typed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from tracker_tui.key_names import hint_keys


class ChoiceFilter(Input):
    """The field that narrows the choices; the list's moving keys work from here."""

    HELP_GROUP: ClassVar[str] = "Choice"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down", "move('cursor_down')", "Next choice", show=False, id="choice.next"),
        Binding("up", "move('cursor_up')", "Previous choice", show=False, id="choice.previous"),
        Binding("pagedown", "move('page_down')", "Page down", show=False, id="choice.page_down"),
        Binding("pageup", "move('page_up')", "Page up", show=False, id="choice.page_up"),
        Binding("home", "move('first')", "First choice", show=False, id="choice.first"),
        Binding("end", "move('last')", "Last choice", show=False, id="choice.last"),
        Binding("enter", "submit", "Pick", id="choice.pick"),
    ]

    def action_move(self, action: str) -> None:
        """Run one of the list's moves (`cursor_down`, `first`, …) on the dialog's list."""
        choices = self.screen.query_one("#choices", OptionList)
        getattr(choices, f"action_{action}")()


class ChoiceDialog(ModalScreen[str | None]):
    """Dismisses with the chosen value, or None when cancelled."""

    HELP_GROUP: ClassVar[str] = "Choice"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="choice.cancel")
    ]

    DEFAULT_CSS: ClassVar[str] = """
    ChoiceDialog {
        align: center middle;
        & > Vertical {
            width: 50;
            max-width: 100%;
            height: auto;
            max-height: 100%;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
        & ChoiceFilter { margin-bottom: 1; }
        & OptionList { height: auto; max-height: 14; }
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
        self._typed = ""

    def compose(self) -> ComposeResult:
        """The question, the filter, the options (the current one highlighted), the keys."""
        with Vertical():
            yield Label(self._title, classes="dialog-title")
            yield ChoiceFilter(placeholder="Type to narrow", compact=True, select_on_focus=False)
            yield OptionList(*self._options(""), id="choices")
            yield Label(
                " · ".join(part for part in (self._hint, self._keys_hint()) if part),
                classes="dialog-hint",
            )

    def _keys_hint(self) -> str:
        pick = hint_keys(self, "choice.pick", ChoiceFilter)
        return f"{pick} picks · {hint_keys(self, 'choice.cancel')} cancels"

    def on_mount(self) -> None:
        """Start on the current value, so enter alone keeps it."""
        values = [value for value, _label in self._choices]
        if self._current in values:
            self.query_one(OptionList).highlighted = values.index(self._current)
        self.query_one(ChoiceFilter).focus()

    @property
    def shown(self) -> list[str]:
        """The values the list offers now, top to bottom."""
        choices = self.query_one(OptionList)
        return [str(choices.get_option_at_index(index).id) for index in range(choices.option_count)]

    def _options(self, typed: str) -> list[Option]:
        needle = typed.strip().casefold()
        return [
            Option(f"{label}  (current)" if value == self._current else label, id=value)
            for value, label in self._choices
            if needle in label.casefold()
        ]

    @on(Input.Changed)
    def narrow(self, event: Input.Changed) -> None:
        """Show the choices containing what is typed, the first highlighted."""
        self._narrow(event.value)

    def _narrow(self, typed: str) -> None:
        if typed == self._typed:
            return
        self._typed = typed
        choices = self.query_one(OptionList)
        options = self._options(typed)
        choices.set_options(options)
        if options:
            choices.highlighted = 0

    @on(Input.Submitted)
    def pick_highlighted(self, event: Input.Submitted) -> None:
        """Enter in the field picks the highlighted choice (none left: nothing happens)."""
        self._narrow(event.value)
        choices = self.query_one(OptionList)
        if choices.highlighted is not None and choices.option_count:
            index = min(choices.highlighted, choices.option_count - 1)
            self.dismiss(choices.get_option_at_index(index).id)

    @on(OptionList.OptionSelected, "#choices")
    def pick(self, event: OptionList.OptionSelected) -> None:
        """Dismiss with the value behind the chosen line (a click, or enter in the list)."""
        self.dismiss(event.option.id)
