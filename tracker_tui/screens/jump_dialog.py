"""The go-to-issue prompt (`:` or `#`): an issue's number (`123`, `#123`) or id."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from tracker_tui.key_names import hint_keys


class JumpDialog(ModalScreen[str | None]):
    """Asks which issue to open; dismisses with what was typed (trimmed), None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="jump.cancel")
    ]

    DEFAULT_CSS: ClassVar[str] = """
    JumpDialog {
        align: center top;
        & > Vertical {
            width: 44;
            height: auto;
            margin-top: 3;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
        & .dialog-title { text-style: bold; }
        & .dialog-hint { color: $text-muted; }
    }
    """

    def compose(self) -> ComposeResult:
        """A title, the field, and what enter and esc do."""
        with Vertical():
            yield Label("Go to issue", classes="dialog-title")
            yield Input(placeholder="#123, 123 or an id", id="jump-to")
            yield Label(
                f"enter opens it · {hint_keys(self, 'jump.cancel')} cancels", classes="dialog-hint"
            )

    @on(Input.Submitted, "#jump-to")
    def jump(self, event: Input.Submitted) -> None:
        """Dismiss with the reference, unless it is blank."""
        ref = event.value.strip()
        if ref:
            self.dismiss(ref)
        else:
            self.notify("Type an issue's number, e.g. 123.", severity="warning")
