"""Editing an issue's labels in place: the label picker, checked against the limits on save."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, Static

from issuefields import LABELS, problem
from tracker_tui.key_names import hint_keys
from tracker_tui.screens.declared_keys import DeclaredKeyOrder
from tracker_tui.widgets.label_picker import LabelPicker, picker_keys


class LabelsDialog(DeclaredKeyOrder[list[str] | None], ModalScreen[list[str] | None]):
    """Dismisses with the new labels (they replace the old ones), or None when cancelled."""

    HELP_GROUP: ClassVar[str] = "Labels dialog"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save labels", priority=True, id="labels.save"),
        Binding("escape", "dismiss(None)", "Cancel", id="labels.cancel"),
    ]

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
        self._labels = list(labels)
        self._known = known

    def compose(self) -> ComposeResult:
        """The picker, what is wrong with its choice, and the keys."""
        with Vertical():
            yield Label(LABELS.label, classes="dialog-title")
            yield LabelPicker(self._labels, self._known, id="labels")
            yield Label("", id="labels-problem")
            yield Static(
                f"{picker_keys(self)} · {hint_keys(self, 'labels.save')} saves · "
                f"{hint_keys(self, 'labels.cancel')} cancels",
                classes="dialog-hint",
            )
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(LabelPicker).focus()

    @on(LabelPicker.Changed)
    def check_labels(self, event: LabelPicker.Changed) -> None:
        """Say what is wrong as labels are ticked."""
        self.query_one("#labels-problem", Label).update(problem(LABELS, event.labels) or "")

    def action_save(self) -> None:
        """Dismiss with the labels, unless they break a limit."""
        labels = self.query_one(LabelPicker).labels
        if problem(LABELS, labels) is None:
            self.dismiss(labels)
