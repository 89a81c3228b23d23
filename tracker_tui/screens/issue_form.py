"""The create / edit form: every writable field, checked as typed, saved to the outbox.

The form is built once the worker has read what it needs (the issue being edited, users,
projects), so every picker starts with real options. Only changed fields are queued on edit,
so an edit never overwrites a field someone else changed meanwhile. Esc on a dirty form asks
first. The fields changed are kept as a draft while they are typed (`tracker_tui.drafts`,
one for a new issue, one per issue edited), and filled in again when the same form is opened
after the app was closed or killed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Footer, Input, Label, Select, Static, TextArea

from cache import IssueDetail, JsonObject, JsonValue, ProjectRow, Resource, UserRow
from issuefields import EDITABLE, LABELS, STATUS, Field, Kind, problem, status_choices
from tracker_tui import key_order
from tracker_tui.data import issue_text
from tracker_tui.data.cache_source import NO_VALUE
from tracker_tui.data.draft_keys import editor_key, issue_key
from tracker_tui.data.people import Directory
from tracker_tui.drafts import DraftKeeper
from tracker_tui.editor import TemplateError
from tracker_tui.formatting import issue_reference
from tracker_tui.key_names import hint_keys
from tracker_tui.screens.binding_commands import BindingCommands
from tracker_tui.screens.confirm import ConfirmDialog
from tracker_tui.screens.declared_keys import DeclaredKeyOrder
from tracker_tui.screens.editor_flow import EditorFlow
from tracker_tui.services import Services
from tracker_tui.widgets.label_picker import LabelPicker
from tracker_tui.workers import read_in_thread, write_in_thread

PICKED = (Kind.CHOICE, Kind.USER, Kind.PROJECT)
"""Kinds edited with a picker."""
NAMED = frozenset(f.member for f in EDITABLE if f.kind in (Kind.USER, Kind.PROJECT))
"""Fields whose none is `NO_VALUE` in a picker."""


@dataclass(frozen=True)
class FormData:
    """What the form needs before it can be drawn."""

    detail: IssueDetail | None
    users: dict[str, str]
    projects: list[ProjectRow]
    labels: list[str]
    """The labels in use, for the label picker."""
    draft: JsonObject | None = None
    """The fields changed in this form earlier and not saved."""
    refused: JsonObject | None = None
    """The fields of the refused write the form replaces, as the form shows them."""


class IssueFormScreen(DeclaredKeyOrder[None]):
    """Create an issue (no id) or edit one."""

    COMMANDS = {BindingCommands}
    HELP_GROUP: ClassVar[str] = "Issue form"
    CSS_PATH = "issue_form.tcss"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", priority=True, id="form.save"),
        Binding("ctrl+e", "open_editor", "Edit in $EDITOR", priority=True, id="form.editor"),
        Binding("escape", "cancel", "Cancel", id="form.cancel"),
    ]

    @dataclass
    class Loaded(Message):
        data: FormData

    def __init__(
        self, services: Services, issue_id: str | None = None, *, replacing: int | None = None
    ) -> None:
        super().__init__()
        self._services = services
        self.issue_id = issue_id
        self.replacing = replacing
        """A failed write of the issue the form starts from and replaces once saved."""
        self._unchanged: dict[str, JsonValue] = {}
        """What leaving loses nothing from: the issue's values, or the refused write's."""
        self.data: FormData | None = None
        self._initial: dict[str, JsonValue] = {}
        self.draft = DraftKeeper(self, services.cache, issue_key(issue_id))

    def compose(self) -> ComposeResult:
        """A heading; the fields arrive with the data."""
        heading = "New issue" if self.issue_id is None else "Edit issue"
        yield Static(heading, id="form-title")
        yield VerticalScroll(Label("Loading…"), id="form")
        yield Footer()

    def on_mount(self) -> None:
        services, issue_id = self._services, self.issue_id

        key, replacing = self.draft.key, self.replacing

        def read() -> FormData:
            detail = services.cache.reads.issue(issue_id) if issue_id else None
            labels = services.cache.reads.distinct_values(LABELS)
            refused = None
            if replacing is not None:
                refused = as_shown(services.cache.outbox.entry(replacing).changes)
            return FormData(
                detail,
                services.source.user_names(),
                services.cache.reads.projects(),
                [label for label in labels if label],
                services.cache.drafts.get(key),
                refused,
            )

        key_order.loading(self)
        read_in_thread(self, "read the issue", read, self.Loaded)

    @on(Loaded)
    async def build_form(self, message: Loaded) -> None:
        """Mount the fields with their options and the issue's values."""
        self.data = data = message.data
        record = data.detail.record if data.detail else {}
        if self.issue_id is not None and data.detail is None:
            self.notify("This issue is no longer in the cache.", severity="error")
            key_order.loaded(self)
            self.dismiss(None)
            return
        if data.detail is not None:
            issue = data.detail.issue
            self.query_one("#form-title", Static).update(
                f"Edit {issue_reference(issue.number, issue.id)}"
            )
        self._initial = {f.member: _initial(f, record.get(f.member)) for f in EDITABLE}
        options = self._options(data, record)
        offered = {member: {value for _label, value in pairs} for member, pairs in options.items()}
        self._unchanged = self._restored(data.refused, offered) if data.refused else self._initial
        shown = self._restored({**(data.refused or {}), **(data.draft or {})} or None, offered)
        self.draft.holds(data.draft)
        form = self.query_one("#form", VerticalScroll)
        await form.remove_children()
        await form.mount_all(self._editors(shown, options, data.labels))
        self.query_one(f"#{EDITABLE[0].member}").focus()
        key_order.loaded(self)
        self._check()
        if data.refused:
            self.notify("The refused change is filled in: saving replaces it.", timeout=4)
        elif shown != self._initial:
            what = "new issue is" if self.issue_id is None else "changes to this issue are"
            self.notify(f"Your unsaved {what} back.", timeout=4)

    def _options(self, data: FormData, record: JsonObject) -> dict[str, list[tuple[str, str]]]:
        """The `(label, value)` options of each picked field: a status the workflow allows from
        the issue's, every other known choice, the users by name, the projects not archived
        (and the issue's own)."""
        options: dict[str, list[tuple[str, str]]] = {}
        for field in EDITABLE:
            if field.kind is Kind.CHOICE:
                values = field.values
                if field is STATUS and data.detail is not None:
                    values = status_choices(str(self._initial[field.member]))
                options[field.member] = [(field.label_of(value), value) for value in values]
            elif field.kind is Kind.USER:
                users = sorted(data.users.items(), key=lambda pair: pair[1])
                options[field.member] = [(field.empty, NO_VALUE)] + [(n, u) for u, n in users]
            elif field.kind is Kind.PROJECT:
                options[field.member] = [(field.empty, NO_VALUE)] + [
                    (f"{project.key or ''} {project.name}".strip(), project.id)
                    for project in data.projects
                    if project.state != "archived" or project.id == record.get(field.member)
                ]
        return options

    def _editors(
        self,
        shown: dict[str, JsonValue],
        options: dict[str, list[tuple[str, str]]],
        labels: list[str],
    ) -> list[Widget]:
        """Each editable field's editor under its label, in the table's order: pickers side
        by side in one row, every other field with a line saying what is wrong with it."""
        editors: list[Widget] = []
        pickers: list[Widget] = []
        for field in EDITABLE:
            name, value = field.member, shown[field.member]
            if name in options:
                pickers.append(_select(field.label, name, options[name], str(value)))
                continue
            if pickers:
                editors.append(Horizontal(*pickers, id="pickers"))
                pickers = []
            if field.kind is Kind.MARKDOWN:
                editors.append(Label(f"{field.label} (Markdown)"))
                editors.append(TextArea(str(value), id=name, classes="long-text"))
            elif field.kind is Kind.LABELS:
                editors.append(Label(field.label))
                editors.append(LabelPicker(_strings(value), labels, id=name))
            else:
                editors.append(Label(field.label))
                editors.append(Input(str(value), id=name, select_on_focus=False))
            editors.append(Label("", id=f"{name}-problem", classes="problem"))
        if pickers:
            editors.append(Horizontal(*pickers, id="pickers"))
        return editors

    def _restored(
        self, draft: JsonObject | None, offered: dict[str, set[str]]
    ) -> dict[str, JsonValue]:
        """The values to show: the issue's, with the draft's on top where the form can still
        show them (a status the workflow no longer allows from here is left out)."""
        shown = dict(self._initial)
        for name, value in (draft or {}).items():
            if name not in shown or type(value) is not type(shown[name]):
                continue
            if name in offered and value not in offered[name]:
                continue
            shown[name] = value
        return shown

    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(LabelPicker.Changed)
    @on(Select.Changed)
    def check_as_typed(self) -> None:
        """Every keystroke re-checks every limit, so the problems shown are always current, and
        the fields changed are kept as the draft."""
        self._check()
        if self.data is not None:
            self.draft.changed(self._changes(self._values()) or None)

    def _changes(self, values: dict[str, JsonValue]) -> JsonObject:
        """The fields whose value differs from the issue's (a new issue's defaults)."""
        return {name: value for name, value in values.items() if value != self._initial.get(name)}

    def keep_draft(self) -> None:
        """The app is exiting: keep the fields changed as they stand."""
        if self.data is not None:
            self.draft.keep(self._changes(self._values()) or None)

    def on_unmount(self) -> None:
        """Write the draft's last keystrokes now: the app may be closing."""
        self.draft.flush()

    def _check(self) -> bool:
        """Show each field's problem; True when there are none."""
        if self.data is None:
            return False
        values = self._values()
        problems = {
            f"{f.member}-problem": problem(f, values[f.member])
            for f in EDITABLE
            if f.kind not in PICKED
        }
        for widget_id, found in problems.items():
            label = self.query_one(f"#{widget_id}", Label)
            label.update(found or "")
            label.display = found is not None  # no empty rows at 80x24
        return not any(problems.values())

    def _values(self) -> dict[str, JsonValue]:
        """The form's fields as typed, in the same shape as `_initial`."""
        values: dict[str, JsonValue] = {}
        for field in EDITABLE:
            name = field.member
            if field.kind in PICKED:
                values[name] = str(self.query_one(f"#{name}", Select).value)
            elif field.kind is Kind.MARKDOWN:
                values[name] = self.query_one(f"#{name}", TextArea).text
            elif field.kind is Kind.LABELS:
                values[name] = list[JsonValue](self.query_one(f"#{name}", LabelPicker).labels)
            else:
                values[name] = self.query_one(f"#{name}", Input).value
        return values

    @property
    def dirty(self) -> bool:
        """Whether leaving now would lose typing (a refused write filled in is not lost: it
        stays in the outbox)."""
        return self.data is not None and self._values() != self._unchanged

    def action_save(self) -> None:
        """Queue the issue (or the changed fields) in the outbox and close."""
        if self._services.read_only:
            self.notify("Read-only mode: changes are off.", severity="warning")
            return
        if not self._check():
            self.notify("Fix the fields marked in red first.", severity="error")
            return
        values = self._values()
        fields = {f.member: _saved(f, values[f.member]) for f in EDITABLE}
        cache, issue_id = self._services.cache, self.issue_id
        if issue_id is None:
            write_in_thread(
                self,
                "queue the new issue",
                self.draft.then_discard(lambda: cache.outbox.create(Resource.ISSUES, fields)),
                done="Issue queued.",
            )
        else:
            changed = {
                name: value for name, value in fields.items() if self._initial_field(name) != value
            }
            replacing = self.replacing

            def queue() -> None:
                if changed:
                    cache.outbox.update(Resource.ISSUES, issue_id, changed)
                if replacing is not None:
                    cache.outbox.discard(replacing)

            if changed or replacing is not None:
                done = "Changes queued." if changed else "The refused change is dropped."
                write_in_thread(
                    self, "queue the changes", self.draft.then_discard(queue), done=done
                )
            else:
                self.draft.discard()
        self.dismiss(None)

    def action_open_editor(self) -> None:
        """The form as a template in `$EDITOR` (fields on top, description below); what comes
        back fills the form, to check and save with ctrl+s."""
        if self.data is not None:
            self.run_worker(self._edit_in_editor(self.data), group="editor", exclusive=True)

    async def _edit_in_editor(self, data: FormData) -> None:
        users = [UserRow(user_id, name, None) for user_id, name in data.users.items()]
        directory = Directory(users, data.projects, self._services.me)
        current = None
        if data.detail is not None:
            current = {**data.detail.record, "description": data.detail.description}
        form = self._values()
        values = {f.member: _saved(f, form[f.member]) for f in EDITABLE}
        new = self.issue_id is None
        baseline = issue_text.render(values, directory, new=new)
        key = editor_key(self.issue_id)
        kept = await asyncio.to_thread(self._services.cache.drafts.get, key)
        text = kept.get("text") if kept else None
        start = baseline
        if isinstance(text, str) and text.strip():
            start = text
            self.notify("Your unsaved text is back in the editor.", timeout=4)
        options = self._options(data, data.detail.record if data.detail else {})

        def parse(edited: str) -> dict[str, JsonValue]:
            fields = {**values, **issue_text.parse(edited, directory, current)}
            shown = {f.member: _initial(f, fields.get(f.member)) for f in EDITABLE}
            for field in EDITABLE:
                offered = [value for _label, value in options.get(field.member, ())]
                if offered and shown[field.member] not in offered:
                    name = directory.name(str(fields.get(field.member)))
                    raise TemplateError(None, f"{field.label}: {name} cannot be chosen here")
            return shown

        flow = EditorFlow[dict[str, JsonValue]](
            self,
            self._services.cache,
            key,
            parse,
            help=issue_text.help_lines(values, directory, new=new),
            again_hint=f"{hint_keys(self, 'form.editor')} opens it again",
        )
        shown = await flow.run(start, baseline)
        if shown is None:
            return
        editors = self.query_one("#form", VerticalScroll)
        await editors.remove_children()
        await editors.mount_all(self._editors(shown, options, data.labels))
        self.query_one(f"#{EDITABLE[0].member}").focus()
        self.check_as_typed()
        self.app.run_worker(flow.discard_after(lambda: None), thread=True, group="drafts")

    def _initial_field(self, name: str) -> JsonValue:
        """The issue's stored value of a field, for comparing what changed."""
        assert self.data is not None and self.data.detail is not None
        return self.data.detail.record.get(name)

    def action_cancel(self) -> None:
        """Close, asking first when something was typed (and then dropping its draft)."""
        if not self.dirty:
            self.draft.discard()
            self.dismiss(None)
            return

        def answered(discard: bool | None) -> None:
            if discard:
                self.draft.discard()
                self.dismiss(None)

        self.app.push_screen(
            ConfirmDialog("Discard the changes to this issue?", yes="Discard", no="Keep editing"),
            answered,
        )


def _select(title: str, widget_id: str, options: list[tuple[str, str]], value: str) -> Vertical:
    """A titled picker that always has a value (the issue's, else the first option)."""
    values = [option for _label, option in options]
    select: Select[str] = Select(
        options,
        value=value if value in values else values[0],
        allow_blank=False,
        id=widget_id,
        prompt=title,
        compact=True,
    )
    return Vertical(Label(title), select, classes="picker")


def _strings(value: JsonValue) -> list[str]:
    """A list field's items as text (labels)."""
    return [str(item) for item in value] if isinstance(value, list) else []


def _initial(field: Field, value: JsonValue) -> JsonValue:
    """A field's stored value as its editor holds it: text, a picker's value (`NO_VALUE` for
    none, the default choice for a choice not set), a list of labels."""
    if field.kind is Kind.LABELS:
        return list[JsonValue](_strings(value))
    if field.kind is Kind.CHOICE:
        return str(value or field.default or "")
    if field.kind in (Kind.USER, Kind.PROJECT):
        return str(value or NO_VALUE)
    return str(value or "")


def _saved(field: Field, value: JsonValue) -> JsonValue:
    """An editor's value as the write sends it: one line trimmed, `NO_VALUE` as null."""
    if field.kind in (Kind.USER, Kind.PROJECT):
        return None if value == NO_VALUE else value
    if field.kind is Kind.TEXT:
        return str(value).strip()
    if field.kind in (Kind.CHOICE, Kind.MARKDOWN, Kind.LABELS):
        return value
    return str(value).strip() or None


def as_shown(changes: JsonObject) -> JsonObject:
    """A write's fields as the form holds them (no assignee or project is `NO_VALUE`)."""
    return {
        name: NO_VALUE if value is None and name in NAMED else value
        for name, value in changes.items()
    }
