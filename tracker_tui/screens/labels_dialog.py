"""Editing an issue's labels in place: comma-separated, checked as typed."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from tracker_tui.data.workflow import labels_problem, parse_labels


class LabelsDialog(ModalScreen[list[str] | None]):
    """Dismisses with the new labels, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    DEFAULT_CSS: ClassVar[str] = """
    LabelsDialog {
        align: center middle;
        & > Vertical {
            width: 60;
            height: auto;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
        & .dialog-title { text-style: bold; }
        & .dialog-hint { color: $text-muted; }
        & #labels-problem { color: $text-error; }
    }
    """

    def __init__(self, labels: tuple[str, ...] | list[str], known: list[str]) -> None:
        super().__init__()
        self._labels = ", ".join(labels)
        self._known = known

    def compose(self) -> ComposeResult:
        """The labels field, what is wrong with it, and the labels in use."""
        with Vertical():
            yield Label("Labels (comma-separated)", classes="dialog-title")
            yield Input(self._labels, id="labels")
            yield Label("", id="labels-problem")
            known = ", ".join(self._known[:15]) or "none yet"
            yield Label(f"in use: {known}", classes="dialog-hint")
            yield Label("enter saves · esc cancels", classes="dialog-hint")

    @on(Input.Changed, "#labels")
    def check_labels(self, event: Input.Changed) -> None:
        """Say what is wrong while typing."""
        problem = labels_problem(parse_labels(event.value))
        self.query_one("#labels-problem", Label).update(problem or "")

    @on(Input.Submitted, "#labels")
    def save_labels(self, event: Input.Submitted) -> None:
        """Dismiss with the labels, unless they break a limit."""
        labels = parse_labels(event.value)
        if labels_problem(labels) is None:
            self.dismiss(labels)
