"""The save-view dialog: a name for the current filter and sort (or a new name for a view)."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from tracker_tui.key_names import hint_keys


class SaveViewDialog(ModalScreen[str | None]):
    """Asks for a view name; dismisses with it (trimmed), or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="save_view.cancel")
    ]

    DEFAULT_CSS: ClassVar[str] = """
    SaveViewDialog {
        align: center middle;
        & > Vertical {
            width: 50;
            height: auto;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
        & .dialog-title { text-style: bold; }
        & .dialog-hint { color: $text-muted; }
    }
    """

    def __init__(
        self, name: str = "", *, slots_hint: str = "", title: str = "Save view as"
    ) -> None:
        super().__init__()
        self._name = name
        self._slots_hint = slots_hint
        self._title = title

    def compose(self) -> ComposeResult:
        """A title, the name field, and what enter and esc do."""
        with Vertical():
            yield Label(self._title, classes="dialog-title")
            yield Input(self._name, placeholder="View name", id="view-name")
            cancel = hint_keys(self, "save_view.cancel")
            hint = f"enter saves · {cancel} cancels {self._slots_hint}"
            yield Label(hint.strip(), classes="dialog-hint")

    @on(Input.Submitted, "#view-name")
    def save_view(self, event: Input.Submitted) -> None:
        """Dismiss with the name, unless it is blank."""
        name = event.value.strip()
        if name:
            self.dismiss(name)
        else:
            self.notify("A view needs a name.", severity="warning")
