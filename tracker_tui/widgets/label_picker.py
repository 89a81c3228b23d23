"""Choosing labels: tick the ones in use, or type a new one, all from the keyboard.

Labels are free text on the server, so a plain list would never let a new label in, and a plain
text field lets typos ("bgu") spread into the filters. The picker is both: a field that narrows
the list of known labels as you type (enter ticks the label typed, adding it when it is new;
commas separate several), and that list, where space ticks and unticks. A line under them names
what is ticked, since the field may hide ticked labels from the list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Label, SelectionList

from tracker_tui.data.workflow import parse_labels


class LabelInput(Input):
    """The picker's field: narrows the list; enter ticks (or adds) what was typed."""

    HELP_GROUP: ClassVar[str] = "Labels"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Tick / add label"),
        Binding("down", "app.focus_next", "To the label list", show=False),
    ]


class LabelList(SelectionList[str]):
    """The picker's list of labels; space ticks and unticks."""

    HELP_GROUP: ClassVar[str] = "Labels"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("space", "select", "Tick / untick label")]


class LabelPicker(Vertical):
    """Several labels, from the known ones or new; `labels` is the choice, in ticking order."""

    DEFAULT_CSS: ClassVar[str] = """
    LabelPicker {
        height: auto;
        & > LabelList { height: auto; max-height: 8; }
        & > .label-picker--chosen { color: $text-muted; }
    }
    """

    @dataclass
    class Changed(Message):
        """Labels were ticked or unticked."""

        picker: LabelPicker
        labels: list[str]

        @property
        def control(self) -> LabelPicker:
            """The picker that changed (for `@on(..., selector)`)."""
            return self.picker

    def __init__(
        self,
        labels: Sequence[str],
        known: Sequence[str],
        *,
        placeholder: str = "Type to find or add a label",
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self._labels = list(dict.fromkeys(labels))
        self._known = sorted({*known, *self._labels}, key=str.casefold)
        self._placeholder = placeholder
        self._shown: list[str] = []

    @property
    def labels(self) -> list[str]:
        """The ticked labels: those given first, then the others in the order ticked."""
        return list(self._labels)

    def compose(self) -> ComposeResult:
        yield LabelInput(placeholder=self._placeholder)
        yield LabelList()
        yield Label("", classes="label-picker--chosen")

    def on_mount(self) -> None:
        self._show("")
        self._summarize()

    def focus(self, scroll_visible: bool = True) -> LabelPicker:
        """Focus the field, where typing starts."""
        self.query_one(LabelInput).focus(scroll_visible)
        return self

    @on(Input.Changed)
    def narrow(self, event: Input.Changed) -> None:
        """Show only the known labels containing what is typed."""
        event.stop()
        self._show(event.value)

    @on(Input.Submitted)
    def tick_typed(self, event: Input.Submitted) -> None:
        """Tick each label typed (untick one typed alone that was ticked), adding new ones."""
        event.stop()
        typed = parse_labels(event.value)
        if not typed:
            return
        if len(typed) == 1 and typed[0] in self._labels:
            self._labels.remove(typed[0])
        else:
            self._labels += [label for label in typed if label not in self._labels]
            self._known = sorted({*self._known, *typed}, key=str.casefold)
        with event.input.prevent(Input.Changed):
            event.input.clear()
        self._show("")
        self._changed()

    @on(SelectionList.SelectedChanged)
    def keep_ticks(self, event: SelectionList.SelectedChanged[str]) -> None:
        """Follow the list's ticks; labels hidden by the field keep their state."""
        event.stop()
        ticked = set(event.selection_list.selected)
        kept = [label for label in self._labels if label not in self._shown or label in ticked]
        self._labels = kept + [label for label in self._shown if label in ticked - set(kept)]
        self._changed()

    def _show(self, typed: str) -> None:
        """Fill the list with the known labels matching `typed`, ticked ones ticked."""
        needle = typed.strip().casefold()
        self._shown = [label for label in self._known if needle in label.casefold()]
        items = self.query_one(LabelList)
        with items.prevent(SelectionList.SelectedChanged):
            items.clear_options()
            items.add_options([(label, label, label in self._labels) for label in self._shown])
            items.highlighted = 0 if self._shown else None

    def _summarize(self) -> None:
        chosen = ", ".join(self._labels) or "none"
        self.query_one(".label-picker--chosen", Label).update(f"Ticked: {chosen}")

    def _changed(self) -> None:
        """Say what is ticked, here and to the form."""
        self._summarize()
        self.post_message(self.Changed(self, self.labels))
