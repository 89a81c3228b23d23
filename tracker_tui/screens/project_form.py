"""Create or edit a project: key, name, description, checked as typed."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from cache import JsonObject, ProjectRow
from issuefields import DESCRIPTION
from tracker_tui.data.project_checks import project_problem
from tracker_tui.key_names import hint_keys


class ProjectFormDialog(ModalScreen[JsonObject | None]):
    """Dismisses with the fields to write (only changed ones on edit), or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="project_form.cancel"),
        Binding("ctrl+s", "save", "Save", priority=True, id="project_form.save"),
    ]

    DEFAULT_CSS: ClassVar[str] = """
    ProjectFormDialog {
        align: center middle;
        & > Vertical {
            width: 64;
            height: auto;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
        & .dialog-title { text-style: bold; }
        & .dialog-hint { color: $text-muted; }
        & #project-problem { color: $text-error; }
    }
    """

    def __init__(self, project: ProjectRow | None = None) -> None:
        super().__init__()
        self._project = project

    def compose(self) -> ComposeResult:
        project = self._project
        with Vertical():
            yield Label("Edit project" if project else "New project", classes="dialog-title")
            yield Input(project.key or "" if project else "", placeholder="KEY", id="project-key")
            yield Input(project.name if project else "", placeholder="Name", id="project-name")
            yield Input(
                project.description if project else "",
                placeholder=DESCRIPTION.label,
                id="project-description",
            )
            yield Label("", id="project-problem")
            yield Label(
                f"{hint_keys(self, 'project_form.save')} or enter saves · "
                f"{hint_keys(self, 'project_form.cancel')} cancels",
                classes="dialog-hint",
            )

    def _fields(self) -> JsonObject:
        return {
            "key": self.query_one("#project-key", Input).value.strip(),
            "name": self.query_one("#project-name", Input).value.strip(),
            "description": self.query_one("#project-description", Input).value,
        }

    @on(Input.Changed)
    def check_as_typed(self) -> None:
        fields = self._fields()
        problem = project_problem(str(fields["key"]), str(fields["name"]))
        self.query_one("#project-problem", Label).update(problem or "")

    @on(Input.Submitted)
    def action_save(self) -> None:
        """Dismiss with the fields, unless one is wrong."""
        fields = self._fields()
        problem = project_problem(str(fields["key"]), str(fields["name"]))
        if problem:
            self.query_one("#project-problem", Label).update(problem)
            return
        if self._project is not None:
            record = self._project.record
            fields = {name: value for name, value in fields.items() if record.get(name) != value}
        self.dismiss(fields)
