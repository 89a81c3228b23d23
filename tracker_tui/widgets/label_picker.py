"""Choosing labels: tick the ones in use, or create a new one, all from the keyboard.

Labels are free text on the server, so a plain list would never let a new label in, and a plain
text field lets typos ("bgu", or "reg" for "regression") spread into the filters. The picker is
both: a field that narrows the list of known labels as you type, and that list. Enter in the
field takes the highlighted row, which is the best match (an exact match, then labels starting
with the text, then labels containing it); a new label is a row of its own, "+ new label 'reg'",
listed after the matches and highlighted only when nothing matches, so a label is created only
when the user chose that row. Commas separate several labels, each resolved the same way. In the
list, space or enter ticks and unticks. A line under them names what is ticked, since the field
may hide ticked labels from the list.

The list is an `OptionList` rebuilt on every keystroke. Its messages carry the option itself
(whose id names the label), never an index to look up later: a `SelectionList` looked its
highlight up by index when the message was handled, and keys arriving in one burst shrank the
list under it (issue 14, defect 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.dom import DOMNode
from textual.message import Message
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from issuefields import LABELS
from tracker_tui.key_names import hint_keys

_KNOWN = "label:"
_NEW = "new:"


@dataclass(frozen=True)
class Row:
    """A line of the list: a known label, or the offer to create `label`."""

    label: str
    new: bool = False

    @property
    def option_id(self) -> str:
        return (_NEW if self.new else _KNOWN) + self.label

    @classmethod
    def from_option_id(cls, option_id: str) -> Row:
        if option_id.startswith(_NEW):
            return cls(option_id.removeprefix(_NEW), new=True)
        return cls(option_id.removeprefix(_KNOWN))


def rows_for(typed: str, known: Sequence[str]) -> list[Row]:
    """The list for what is typed: the known labels containing it, best match first, then the
    offer to create it when no known label is exactly that (letter case aside)."""
    piece = typed.strip()
    needle = piece.casefold()
    matches = [label for label in known if needle in label.casefold()]
    matches.sort(
        key=lambda label: (
            label.casefold() != needle,
            not label.casefold().startswith(needle),
        )
    )
    rows = [Row(label) for label in matches]
    if needle and not any(label.casefold() == needle for label in known):
        rows.append(Row(piece, new=True))
    return rows


def parse_labels(text: str) -> list[str]:
    """Comma-separated labels, trimmed, empty pieces and repeats dropped."""
    return list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))


class LabelInput(Input):
    """The picker's field: narrows the list; enter takes the highlighted row."""

    HELP_GROUP: ClassVar[str] = LABELS.label
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Tick the highlighted label", id="picker.tick"),
        Binding("down", "app.focus_next", "To the label list", show=False, id="picker.to_list"),
    ]


def picker_keys(dialog: DOMNode) -> str:
    """The picker's keys in a few words, for the hint line of the dialogs that hold one (the
    bulk edit dialog has 52 columns for it and its own keys), as the keymap has them."""
    tick = hint_keys(dialog, "picker.tick", LabelInput)
    to_list = hint_keys(dialog, "picker.to_list", LabelInput)
    return f"{tick} ticks · {to_list} list"


class LabelList(OptionList):
    """The picker's list of labels; space or enter ticks and unticks, up from the top goes
    back to the field."""

    HELP_GROUP: ClassVar[str] = LABELS.label
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "select", "Tick / untick label", id="picker.toggle")
    ]

    def action_cursor_up(self) -> None:
        if self.highlighted in (None, 0):
            self.screen.focus_previous()
            return
        super().action_cursor_up()


class LabelPicker(Vertical):
    """Several labels, from the known ones or new; `labels` is the choice, in ticking order."""

    DEFAULT_CSS: ClassVar[str] = """
    LabelPicker {
        height: auto;
        & > LabelInput { margin-bottom: 1; }
        & > LabelList {
            height: auto;
            max-height: 6;
            border: none;
            padding: 0;
            border-left: outer $border-blurred;
            &:focus { border: none; border-left: outer $border; }
        }
        & > .label-picker--chosen { color: $text-muted; }
    }
    """
    """Compact (a field of one row, a list without a box) so that a dialog holding the picker
    and its own list still fits a terminal of 80 by 24."""

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
        self._rows: list[Row] = []
        self._typed = ""

    @property
    def labels(self) -> list[str]:
        """The ticked labels: those given first, then the others in the order ticked."""
        return list(self._labels)

    @property
    def rows(self) -> list[Row]:
        """What the list shows now, top to bottom."""
        return list(self._rows)

    def compose(self) -> ComposeResult:
        yield LabelInput(placeholder=self._placeholder, compact=True)
        yield LabelList()
        yield Static("", classes="label-picker--chosen")

    def on_mount(self) -> None:
        self._show("")
        self._summarize()

    def focus(self, scroll_visible: bool = True) -> LabelPicker:
        """Focus the field, where typing starts."""
        self.query_one(LabelInput).focus(scroll_visible)
        return self

    @on(Input.Changed)
    def narrow(self, event: Input.Changed) -> None:
        """Show the rows for what is typed (after the last comma)."""
        event.stop()
        self._show(_last_piece(event.value))

    @on(Input.Submitted)
    def take_typed(self, event: Input.Submitted) -> None:
        """Enter in the field: one label typed toggles the highlighted row; several (commas)
        tick each one's best match, or create it when nothing matches."""
        event.stop()
        pieces = parse_labels(event.value)
        if not pieces:
            return
        if len(pieces) == 1:
            self._take(self._highlighted_row(pieces[0]), toggle=True)
        else:
            for piece in pieces:
                self._take(rows_for(piece, self._known)[0], toggle=False)
        with event.input.prevent(Input.Changed):
            event.input.clear()
        self._show("")
        self._changed()

    @on(OptionList.OptionSelected)
    def take_selected(self, event: OptionList.OptionSelected) -> None:
        """Space, enter or a click in the list: tick or untick that label, or create it (and
        go back to the field, emptied, for the next one).

        The option names its label, so a selection made just before the list was rebuilt
        still acts on the row the user chose."""
        event.stop()
        if event.option.id is None:
            return
        row = Row.from_option_id(event.option.id)
        self._take(row, toggle=True)
        if row.new:
            field = self.query_one(LabelInput)
            with field.prevent(Input.Changed):
                field.clear()
            self._show("")
            field.focus()
        else:
            self._show(self._typed, keep_highlight=True)
        self._changed()

    @on(OptionList.OptionHighlighted)
    def keep_highlight_inside(self, event: OptionList.OptionHighlighted) -> None:
        """The list's highlight is the picker's business only."""
        event.stop()

    def _highlighted_row(self, typed: str) -> Row:
        """The row enter takes: the list's highlight when the list shows `typed`'s rows (it is
        rebuilt as the field changes, so it normally does), else `typed`'s best match."""
        items = self.query_one(LabelList)
        rows = rows_for(typed, self._known)
        if rows == self._rows and items.highlighted is not None:
            return rows[min(items.highlighted, len(rows) - 1)]
        return rows[0]

    def _take(self, row: Row, *, toggle: bool) -> None:
        """Tick a row's label (creating it when new); untick it when ticked and `toggle`."""
        if row.label in self._labels:
            if toggle:
                self._labels.remove(row.label)
            return
        self._labels.append(row.label)
        if row.new:
            self._known = sorted({*self._known, row.label}, key=str.casefold)

    def _show(self, typed: str, *, keep_highlight: bool = False) -> None:
        """Fill the list with the rows for `typed`, ticked ones marked, the best highlighted."""
        items = self.query_one(LabelList)
        highlight = items.highlighted if keep_highlight else None
        self._typed = typed
        self._rows = rows_for(typed, self._known)
        items.set_options(Option(self._prompt(row), id=row.option_id) for row in self._rows)
        if self._rows:
            items.highlighted = min(highlight or 0, len(self._rows) - 1)

    def _prompt(self, row: Row) -> Text:
        if row.new:
            return Text.assemble(("+ new label ", "italic"), (f"“{row.label}”", "bold"))
        mark = "[x] " if row.label in self._labels else "[ ] "
        return Text.assemble((mark, "bold" if row.label in self._labels else "dim"), row.label)

    def _summarize(self) -> None:
        chosen = ", ".join(self._labels) or "none"
        self.query_one(".label-picker--chosen", Static).update(f"Ticked: {chosen}")

    def _changed(self) -> None:
        """Say what is ticked, here and to the form."""
        self._summarize()
        self.post_message(self.Changed(self, self.labels))


def _last_piece(value: str) -> str:
    """The label being typed: what follows the last comma."""
    return value.rsplit(",", 1)[-1]
