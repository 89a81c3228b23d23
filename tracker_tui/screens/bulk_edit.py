"""Bulk edit, step one: what to do to every marked issue, and to what value.

Reads the pickers' options, then, once a change is chosen, works out the plan (in a worker:
"all in the query" may be 100,000 issues) and hands over to the preview, which queues it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, OptionList
from textual.widgets.option_list import Option

from cache import JsonValue
from issuefields import FIELDS, LABELS, Kind, problem
from tracker_tui.data.bulk import (
    ADD_LABEL,
    BULK_DELETE,
    LABEL_ACTIONS,
    REMOVE_LABEL,
    SET_FIELDS,
    BulkChange,
    BulkPlan,
    plan,
)
from tracker_tui.data.cache_source import NO_VALUE
from tracker_tui.data.changes import field_name
from tracker_tui.data.marks import MarkedSelection
from tracker_tui.formatting import count_label
from tracker_tui.key_names import hint_keys
from tracker_tui.screens.bulk_preview import BulkPreviewScreen
from tracker_tui.screens.choice_dialog import ChoiceDialog
from tracker_tui.screens.declared_keys import DeclaredKeyOrder
from tracker_tui.services import Services
from tracker_tui.widgets.label_picker import LabelInput, LabelList, LabelPicker, picker_keys
from tracker_tui.workers import read_in_thread

ACTIONS: tuple[tuple[str, str], ...] = (
    *((f.member, f"Set {field_name(f.member)}") for f in SET_FIELDS),
    (ADD_LABEL, f"Add {field_name(LABELS.member)}"),
    (REMOVE_LABEL, f"Remove {field_name(LABELS.member)}"),
    (BULK_DELETE, "Delete"),
)


@dataclass(frozen=True)
class Names:
    """Display names for ids, and the options of each picker."""

    users: dict[str, str]
    projects: dict[str, str]
    labels: list[str]


class BulkEditScreen(DeclaredKeyOrder[None], ModalScreen[None]):
    """Pick an action and a value for the marked issues."""

    HELP_GROUP: ClassVar[str] = "Bulk edit"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="bulk.cancel"),
        Binding("ctrl+s", "preview_labels", "Preview labels", id="bulk.preview_labels"),
    ]

    DEFAULT_CSS: ClassVar[str] = """
    BulkEditScreen {
        align: center middle;
        & > Vertical {
            width: 56;
            height: auto;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
        & OptionList { height: auto; }
        & .dialog-title { text-style: bold; }
        & .dialog-hint { color: $text-muted; }
    }
    """

    @dataclass
    class NamesLoaded(Message):
        names: Names

    @dataclass
    class Planned(Message):
        plan: BulkPlan

    def __init__(self, services: Services, selection: MarkedSelection) -> None:
        super().__init__()
        self._services = services
        self.selection = selection
        self.names = Names({}, {}, [])
        self._action = ""

    def compose(self) -> ComposeResult:
        with Vertical():
            title = f"Change {count_label(self.selection.count, 'marked issue')}"
            yield Label(title, classes="dialog-title")
            yield OptionList(*(Option(label, id=key) for key, label in ACTIONS), id="actions")
            yield Label(
                f"enter picks · {hint_keys(self, 'bulk.cancel')} cancels",
                classes="dialog-hint",
                id="bulk-hint",
            )
        yield Footer()

    def on_mount(self) -> None:
        services = self._services

        def read() -> Names:
            labels = services.cache.reads.distinct_values(LABELS)
            return Names(
                services.source.user_names(),
                services.source.project_keys(),
                [label for label in labels if label],
            )

        read_in_thread(self, "read the pickers", read, self.NamesLoaded)

    @on(NamesLoaded)
    def keep_names(self, message: NamesLoaded) -> None:
        self.names = message.names

    @on(OptionList.OptionSelected, "#actions")
    async def pick_action(self, event: OptionList.OptionSelected) -> None:
        """Ask for the value the action needs (none for delete)."""
        self._action = action = event.option.id or ""
        if action == BULK_DELETE:
            self._plan(BulkChange("delete"))
            return
        if action in LABEL_ACTIONS:
            await self._pick_labels()
            return
        field = FIELDS[action]
        choices: list[tuple[str, str]]
        if field.kind is Kind.CHOICE:
            choices = [(choice.value, choice.label) for choice in field.choices]
        else:
            named = self.names.users if field.kind is Kind.USER else self.names.projects
            choices = [(NO_VALUE, field.empty), *sorted(named.items())]
        self.app.push_screen(ChoiceDialog(dict(ACTIONS)[action], choices), self._picked)

    async def _pick_labels(self) -> None:
        """Show the label picker (once) under the actions, and type into it."""
        self.refresh_bindings()
        if pickers := self.query(LabelPicker):
            pickers.first().focus()
            return
        picker = LabelPicker([], self.names.labels, id="bulk-labels")
        await self.query_one(Vertical).mount(picker, before="#bulk-hint")
        self.query_one("#bulk-hint", Label).update(
            f"{picker_keys(self)} · {hint_keys(self, 'bulk.preview_labels')} previews · "
            f"{hint_keys(self, 'bulk.cancel')} cancels"
        )
        picker.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Previewing labels is only offered once a label action was chosen."""
        if action == "preview_labels":
            return self._action in LABEL_ACTIONS
        return True

    def action_preview_labels(self) -> None:
        """Plan adding (or removing) the ticked labels."""
        labels = self.query_one(LabelPicker).labels
        refused = problem(LABELS, labels)
        if not labels or refused:
            tick = hint_keys(self, "picker.toggle", LabelList)
            enter = hint_keys(self, "picker.tick", LabelInput)
            self.notify(refused or f"Tick a label first ({tick}, or type and {enter}).")
            return
        self._plan(BulkChange(self._action, list[JsonValue](labels)))

    def _picked(self, value: str | None) -> None:
        if value is not None:
            self._plan(BulkChange(self._action, None if value == NO_VALUE else value))

    def _plan(self, change: BulkChange) -> None:
        """Work out who changes, off the event loop."""
        source, selection = self._services.source, self.selection
        read_in_thread(
            self,
            "read the marked issues",
            lambda: plan(source.marked_rows(selection), change),
            self.Planned,
        )

    @on(Planned)
    def show_preview(self, message: Planned) -> None:
        """Hand over to the preview, which queues the plan when confirmed."""
        names = self.names.users | self.names.projects
        self.dismiss(None)
        self.app.push_screen(BulkPreviewScreen(self._services, message.plan, names))
