"""The projects screen: list (with each project's open and total issues), create, edit,
archive; enter shows a project's issues.

Writes go through the outbox like issue writes. Enter dismisses with the project's id and the
app filters the issue list by it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from cache import IssueFilter, JsonObject, ProjectRow, Resource
from cache.reads import Reads
from issuefields import STATUS, Tone
from tracker_tui.formatting import fit
from tracker_tui.screens.binding_commands import BindingCommands
from tracker_tui.screens.project_form import ProjectFormDialog
from tracker_tui.screens.read_only import ReadOnlyScreen
from tracker_tui.services import Services
from tracker_tui.widgets.status_bar import StatusBar
from tracker_tui.workers import read_in_thread, write_in_thread

CLOSED = frozenset(choice.value for choice in STATUS.choices if choice.tone is Tone.CLOSED)
"""The statuses an issue is finished in (done, canceled): the rest count as open."""


def issue_counts(reads: Reads, project_id: str) -> tuple[int, int]:
    """A project's open and total issues, as the list would count them (local edits in)."""
    total = reads.count(IssueFilter(project=frozenset({project_id})))
    closed = reads.count(IssueFilter(project=frozenset({project_id}), status=CLOSED))
    return total - closed, total


class ProjectsScreen(ReadOnlyScreen[str | None]):
    """Every project in the workspace; dismisses with the one to show issues of (in read-only
    mode, the write keys are hidden)."""

    COMMANDS = {BindingCommands}
    HELP_GROUP: ClassVar[str] = "Projects"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Back", id="projects.back"),
        Binding("n", "create", "New project", id="projects.create"),
        Binding("e", "edit", "Edit project", id="projects.edit"),
        Binding("a", "archive", "Archive / restore", id="projects.archive"),
    ]
    WRITE_ACTIONS: ClassVar[frozenset[str]] = frozenset({"create", "edit", "archive", "undo_bulk"})

    DEFAULT_CSS: ClassVar[str] = """
    ProjectsScreen {
        & #projects-title { padding: 0 1; background: $panel; text-style: bold; }
        & #projects { height: 1fr; }
    }
    """

    @dataclass
    class Loaded(Message):
        """The projects, and per project id its open and total issue counts."""

        projects: list[ProjectRow]
        counts: dict[str, tuple[int, int]] = field(default_factory=dict)

    def __init__(self, services: Services) -> None:
        super().__init__()
        self._services = services
        self.read_only = services.read_only
        self.projects: list[ProjectRow] = []

    def compose(self) -> ComposeResult:
        yield Static("Projects (enter shows a project's issues)", id="projects-title")
        yield OptionList(id="projects")
        yield StatusBar(self._services.profile, read_only=self._services.read_only)
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.app, "cache_revision", self._load, init=False)
        self._load()

    def _load(self) -> None:
        reads = self._services.cache.reads

        def read() -> ProjectsScreen.Loaded:
            with reads.snapshot():
                projects = reads.projects()
                return self.Loaded(projects, {p.id: issue_counts(reads, p.id) for p in projects})

        read_in_thread(self, "read the projects", read, lambda loaded: loaded)

    @on(Loaded)
    def show_projects(self, message: Loaded) -> None:
        self.projects = message.projects
        option_list = self.query_one(OptionList)
        highlighted = option_list.highlighted
        option_list.clear_options()
        for project in message.projects:
            style = "dim" if project.state == "archived" else ""
            marker = "" if project.sync_state == "synced" else f"  [{project.sync_state.value}]"
            shown, total = message.counts.get(project.id, (0, 0))
            line = Text.assemble(
                (fit(project.key or "—", 8), "bold"),
                fit(project.name, 40),
                (fit(f"{shown:,} open / {total:,}", 20), "" if shown else "dim"),
                (fit(project.state or "", 10), "italic"),
                marker,
                style=style,
            )
            option_list.add_option(Option(line, id=project.id))
        if message.projects:
            option_list.highlighted = min(highlighted or 0, len(message.projects) - 1)

    @property
    def highlighted(self) -> ProjectRow | None:
        index = self.query_one(OptionList).highlighted
        return self.projects[index] if index is not None and index < len(self.projects) else None

    @on(OptionList.OptionSelected)
    def show_issues(self, event: OptionList.OptionSelected) -> None:
        """Back to the list, filtered by this project."""
        self.dismiss(event.option.id)

    def action_create(self) -> None:
        self.app.push_screen(ProjectFormDialog(), self._create)

    def action_edit(self) -> None:
        if (project := self.highlighted) is not None:
            self.app.push_screen(
                ProjectFormDialog(project), lambda fields: self._update(project.id, fields)
            )

    def action_archive(self) -> None:
        """Archive an active project, or bring an archived one back."""
        if (project := self.highlighted) is not None:
            state = "active" if project.state == "archived" else "archived"
            self._update(project.id, {"state": state})

    def _create(self, fields: JsonObject | None) -> None:
        if fields:
            cache = self._services.cache
            write_in_thread(
                self,
                "queue the project",
                lambda: cache.outbox.create(Resource.PROJECTS, fields),
                done="Project queued.",
            )

    def _update(self, project_id: str, fields: JsonObject | None) -> None:
        if fields:
            cache = self._services.cache
            write_in_thread(
                self,
                "queue the project change",
                lambda: cache.outbox.update(Resource.PROJECTS, project_id, fields),
                done="Project change queued.",
            )
