"""A yes/no question before something that cannot be taken back (discarding a form)."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label


class ConfirmDialog(ModalScreen[bool]):
    """Dismisses True for yes, False for no or esc."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "dismiss(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "dismiss(False)", "No", id="confirm.no"),
    ]

    DEFAULT_CSS: ClassVar[str] = """
    ConfirmDialog {
        align: center middle;
        & > Vertical {
            width: 56;
            height: auto;
            border: round $warning;
            background: $surface;
            padding: 0 1;
        }
        & Horizontal { height: auto; align-horizontal: right; }
        & Button { margin-left: 1; }
    }
    """

    def __init__(self, question: str, *, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self._question = question
        self._yes = yes
        self._no = no

    def compose(self) -> ComposeResult:
        """The question and two buttons (y and n work too)."""
        with Vertical():
            yield Label(self._question)
            with Horizontal():
                yield Button(self._no, id="no")
                yield Button(self._yes, id="yes", variant="warning")

    @on(Button.Pressed)
    def answer(self, event: Button.Pressed) -> None:
        """A button is an answer."""
        self.dismiss(event.button.id == "yes")
