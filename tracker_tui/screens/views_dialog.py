"""Managing saved views (`v` on the list): apply, rename, reorder (which changes their number
keys) and delete them. Every change is handed to `on_change` at once, which saves it, so
closing the dialog, or losing the app, loses nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from tracker_tui.data.views import SavedView, moved, renamed, without
from tracker_tui.key_names import bound_keys, hint_key, hint_keys, key_text
from tracker_tui.screens.confirm import ConfirmDialog
from tracker_tui.screens.save_view_dialog import SaveViewDialog


class ViewsDialog(ModalScreen[int | None]):
    """Dismisses with the index of the view to apply, or None when closed. `current` is the
    view on show, highlighted first."""

    HELP_GROUP: ClassVar[str] = "Saved views"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Close", id="views.close"),
        Binding("enter", "apply", "Show view", id="views.apply"),
        Binding("r", "rename", "Rename", id="views.rename"),
        Binding("d,delete", "delete", "Delete", id="views.delete"),
        Binding("K,shift+up", "move(-1)", "Move up", id="views.move_up"),
        Binding("J,shift+down", "move(1)", "Move down", id="views.move_down"),
    ]

    DEFAULT_CSS: ClassVar[str] = """
    ViewsDialog {
        align: center middle;
        & > Vertical {
            width: 60;
            max-width: 100%;
            height: auto;
            max-height: 100%;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
        & .dialog-title { text-style: bold; }
        & .dialog-hint { color: $text-muted; }
        & OptionList { height: auto; max-height: 12; }
    }
    """

    def __init__(
        self,
        views: list[SavedView],
        on_change: Callable[[list[SavedView]], None],
        *,
        current: str | None = None,
        save_key: str = "ctrl+s",
    ) -> None:
        """`save_key` saves a view on the list (the list's key, as the keymap has it)."""
        super().__init__()
        self._save_key = save_key
        self.views = list(views)
        self._on_change = on_change
        self._current = current

    def compose(self) -> ComposeResult:
        """The views by number key, and the keys that manage them."""
        with Vertical():
            yield Label("Saved views", classes="dialog-title")
            yield OptionList(id="views")
            yield Label(
                f"{hint_keys(self, 'views.apply')} shows · "
                f"{hint_keys(self, 'views.rename')} renames · "
                f"{hint_key(self, 'views.delete')} deletes · "
                f"{hint_keys(self, 'views.close')} closes",
                classes="dialog-hint",
            )
            moves = zip(
                bound_keys(self, "views.move_down"), bound_keys(self, "views.move_up"), strict=False
            )
            pairs = " or ".join(f"{key_text(down)}/{key_text(up)}" for down, up in moves)
            yield Label(f"{pairs} move (its number key moves too)", classes="dialog-hint")

    def on_mount(self) -> None:
        """List the views, the one on show (else the first) highlighted."""
        names = [view.name for view in self.views]
        self._show(names.index(self._current) if self._current in names else 0)

    def _show(self, highlighted: int) -> None:
        """List the views, one per number key, with the highlight on `highlighted`."""
        listing = self.query_one("#views", OptionList)
        listing.clear_options()
        if not self.views:
            listing.add_option(
                Option(
                    f"No saved views yet ({self._save_key} on the list saves one).", disabled=True
                )
            )
            return
        listing.add_options(
            Option(f"{slot}  {view.name}", id=str(slot - 1))
            for slot, view in enumerate(self.views, start=1)
        )
        listing.highlighted = max(0, min(highlighted, len(self.views) - 1))

    @property
    def _index(self) -> int | None:
        index = self.query_one("#views", OptionList).highlighted
        return index if self.views and index is not None else None

    def _changed(self, views: list[SavedView], highlighted: int) -> None:
        self.views = views
        self._on_change(list(views))
        self._show(highlighted)

    @on(OptionList.OptionSelected, "#views")
    def action_apply(self) -> None:
        """Show the highlighted view."""
        if (index := self._index) is not None:
            self.dismiss(index)

    def action_move(self, step: int) -> None:
        """Move the highlighted view up or down: its number key changes with its place."""
        if (index := self._index) is None:
            return
        target = max(0, min(index + step, len(self.views) - 1))
        if target != index:
            self._changed(moved(self.views, index, step), target)

    def action_rename(self) -> None:
        """Ask for a new name for the highlighted view."""
        if (index := self._index) is None:
            return
        view = self.views[index]

        def answered(name: str | None) -> None:
            if name is None or name == view.name:
                return
            found = renamed(self.views, index, name)
            if isinstance(found, str):
                self.notify(found, severity="warning")
                return
            self._changed(found, index)

        self.app.push_screen(SaveViewDialog(view.name, title="Rename view"), answered)

    def action_delete(self) -> None:
        """Delete the highlighted view, once confirmed."""
        if (index := self._index) is None:
            return
        view = self.views[index]

        def answered(yes: bool | None) -> None:
            if yes:
                self._changed(without(self.views, index), index)

        question = f"Delete the view “{view.name}”? The views after it move up a key."
        self.app.push_screen(ConfirmDialog(question, yes="Delete", no="Keep"), answered)
