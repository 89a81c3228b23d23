"""The create / edit form: every writable field, checked as typed, saved to the outbox.

The form is built once the worker has read what it needs (the issue being edited, users,
projects), so every picker starts with real options. Only changed fields are queued on edit,
so an edit never overwrites a field someone else changed meanwhile. Esc on a dirty form asks
first. The fields changed are kept as a draft while they are typed (`tracker_tui.drafts`,
one for a new issue, one per issue edited), and filled in again when the same form is opened
after the app was closed or killed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, Select, Static, TextArea

from cache import IssueDetail, JsonObject, JsonValue, PickerField, ProjectRow, Resource
from tracker_tui.data.cache_source import NO_VALUE
from tracker_tui.data.source import PRIORITIES, STATUSES
from tracker_tui.data.workflow import (
    description_problem,
    labels_problem,
    status_choices,
    title_problem,
)
from tracker_tui.drafts import DraftKeeper, issue_key
from tracker_tui.formatting import issue_reference, priority_label, status_label
from tracker_tui.screens.binding_commands import BindingCommands
from tracker_tui.screens.confirm import ConfirmDialog
from tracker_tui.services import Services
from tracker_tui.widgets.label_picker import LabelPicker
from tracker_tui.workers import read_in_thread, write_in_thread


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


class IssueFormScreen(Screen[None]):
    """Create an issue (no id) or edit one."""

    COMMANDS = {BindingCommands}
    HELP_GROUP: ClassVar[str] = "Issue form"
    CSS_PATH = "issue_form.tcss"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "cancel", "Cancel"),
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
            detail = services.cache.issue(issue_id) if issue_id else None
            labels = services.cache.distinct_values(PickerField.LABEL)
            refused = None
            if replacing is not None:
                refused = as_shown(services.cache.outbox_entry(replacing).changes)
            return FormData(
                detail,
                services.source.user_names(),
                services.cache.projects(),
                [label for label in labels if label],
                services.cache.draft(key),
                refused,
            )

        read_in_thread(self, "read the issue", read, self.Loaded)

    @on(Loaded)
    async def build_form(self, message: Loaded) -> None:
        """Mount the fields with their options and the issue's values."""
        self.data = data = message.data
        record = data.detail.record if data.detail else {}
        if self.issue_id is not None and data.detail is None:
            self.notify("This issue is no longer in the cache.", severity="error")
            self.dismiss(None)
            return
        if data.detail is not None:
            issue = data.detail.issue
            self.query_one("#form-title", Static).update(
                f"Edit {issue_reference(issue.number, issue.id)}"
            )
        status = str(record.get("status") or "todo")
        statuses = status_choices(status) if data.detail else STATUSES
        labels = record.get("labels")
        self._initial = {
            "title": str(record.get("title") or ""),
            "description": str(record.get("description") or ""),
            "status": status,
            "priority": str(record.get("priority") or "none"),
            "assignee": str(record.get("assignee") or NO_VALUE),
            "project_id": str(record.get("project_id") or NO_VALUE),
            "labels": [str(label) for label in labels] if isinstance(labels, list) else [],
        }
        users = sorted(data.users.items(), key=lambda pair: pair[1])
        projects = [
            (f"{project.key or ''} {project.name}".strip(), project.id)
            for project in data.projects
            if project.state != "archived" or project.id == record.get("project_id")
        ]
        offered: dict[str, set[str]] = {
            "status": set(statuses),
            "priority": set(PRIORITIES),
            "assignee": {NO_VALUE, *data.users},
            "project_id": {NO_VALUE, *(project_id for _name, project_id in projects)},
        }
        self._unchanged = self._restored(data.refused, offered) if data.refused else self._initial
        shown = self._restored({**(data.refused or {}), **(data.draft or {})} or None, offered)
        self.draft.holds(data.draft)
        form = self.query_one("#form", VerticalScroll)
        await form.remove_children()
        await form.mount_all(
            [
                Label("Title"),
                Input(str(shown["title"]), id="title", select_on_focus=False),
                Label("", id="title-problem", classes="problem"),
                Label("Description (Markdown)"),
                TextArea(str(shown["description"]), id="description"),
                Label("", id="description-problem", classes="problem"),
                Horizontal(
                    _select(
                        "Status",
                        "status",
                        [(status_label(s), s) for s in statuses],
                        str(shown["status"]),
                    ),
                    _select(
                        "Priority",
                        "priority",
                        [(priority_label(p, none="No priority"), p) for p in PRIORITIES],
                        str(shown["priority"]),
                    ),
                    _select(
                        "Assignee",
                        "assignee",
                        [("Unassigned", NO_VALUE)] + [(name, uid) for uid, name in users],
                        str(shown["assignee"]),
                    ),
                    _select(
                        "Project",
                        "project_id",
                        [("No project", NO_VALUE), *projects],
                        str(shown["project_id"]),
                    ),
                    id="pickers",
                ),
                Label("Labels"),
                LabelPicker(_strings(shown["labels"]), data.labels, id="labels"),
                Label("", id="labels-problem", classes="problem"),
            ]
        )
        self.query_one("#title", Input).focus()
        self._check()
        if data.refused:
            self.notify("The refused change is filled in: saving replaces it.", timeout=4)
        elif shown != self._initial:
            what = "new issue is" if self.issue_id is None else "changes to this issue are"
            self.notify(f"Your unsaved {what} back.", timeout=4)

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

    def on_unmount(self) -> None:
        """Write the draft's last keystrokes now: the app may be closing."""
        self.draft.flush()

    def _check(self) -> bool:
        """Show each field's problem; True when there are none."""
        if self.data is None:
            return False
        values = self._values()
        problems = {
            "title-problem": title_problem(str(values["title"])),
            "description-problem": description_problem(str(values["description"])),
            "labels-problem": labels_problem(_strings(values["labels"])),
        }
        for widget_id, problem in problems.items():
            label = self.query_one(f"#{widget_id}", Label)
            label.update(problem or "")
            label.display = problem is not None  # no empty rows at 80x24
        return not any(problems.values())

    def _values(self) -> dict[str, JsonValue]:
        """The form's fields as typed, in the same shape as `_initial`."""
        values: dict[str, JsonValue] = {
            "title": self.query_one("#title", Input).value,
            "description": self.query_one("#description", TextArea).text,
            "labels": list[JsonValue](self.query_one("#labels", LabelPicker).labels),
        }
        for field in ("status", "priority", "assignee", "project_id"):
            values[field] = str(self.query_one(f"#{field}", Select).value)
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
        fields: dict[str, JsonValue] = {
            "title": str(values["title"]).strip(),
            "description": values["description"],
            "status": values["status"],
            "priority": values["priority"],
            "assignee": None if values["assignee"] == NO_VALUE else values["assignee"],
            "project_id": None if values["project_id"] == NO_VALUE else values["project_id"],
            "labels": values["labels"],
        }
        cache, issue_id = self._services.cache, self.issue_id
        if issue_id is None:
            write_in_thread(
                self,
                "queue the new issue",
                self.draft.then_discard(lambda: cache.create(Resource.ISSUES, fields)),
                done="Issue queued.",
            )
        else:
            changed = {
                name: value for name, value in fields.items() if self._initial_field(name) != value
            }
            replacing = self.replacing

            def queue() -> None:
                if changed:
                    cache.update(Resource.ISSUES, issue_id, changed)
                if replacing is not None:
                    cache.discard(replacing)

            if changed or replacing is not None:
                done = "Changes queued." if changed else "The refused change is dropped."
                write_in_thread(
                    self, "queue the changes", self.draft.then_discard(queue), done=done
                )
            else:
                self.draft.discard()
        self.dismiss(None)

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


def as_shown(changes: JsonObject) -> JsonObject:
    """A write's fields as the form holds them (no assignee or project is `NO_VALUE`)."""
    return {
        name: NO_VALUE if value is None and name in ("assignee", "project_id") else value
        for name, value in changes.items()
    }
