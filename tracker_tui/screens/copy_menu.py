"""The copy menu (`Y`): one more key picks what to copy of the issue on screen, so `Yy`
copies its number, `Yi` its id, `Yu` its web address."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label

from issuefields import NUMBER
from tracker_tui.key_names import hint_keys


class CopyMenu(ModalScreen[str | None]):
    """Dismisses with "number", "id" or "url", or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,n", "dismiss('number')", NUMBER.label, id="copy.number"),
        Binding("i", "dismiss('id')", "Id", id="copy.id"),
        Binding("u", "dismiss('url')", "Web address", id="copy.url"),
        Binding("escape", "dismiss(None)", "Cancel", id="copy.cancel"),
    ]

    DEFAULT_CSS: ClassVar[str] = """
    CopyMenu {
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

    def __init__(self, reference: str, issue_id: str, url: str) -> None:
        super().__init__()
        self._lines = (
            f"y  number   {reference}",
            f"i  id       {issue_id}",
            f"u  address  {url}",
        )

    def compose(self) -> ComposeResult:
        """What each key copies."""
        with Vertical():
            yield Label("Copy", classes="dialog-title")
            for line in self._lines:
                yield Label(line)
            yield Label(f"{hint_keys(self, 'copy.cancel')} cancels", classes="dialog-hint")
