"""The app's half that opens screens: from the list to an issue, a form, a bulk edit, the sync
panel, the projects or the settings; and `u`, which undoes the last bulk change.

Screens ask by posting requests (`EditIssueRequested`, `IssueList.Opened`, …); this class
answers them, so no screen knows which screen another one opens. Without a cache (a stand-in
source) only the list works, and the rest says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.binding import Binding, BindingType
from textual.message import Message

from issuefields import PROJECT
from tracker_tui.crash_guard import GuardedApp
from tracker_tui.data import undo
from tracker_tui.data.source import IssueQuery
from tracker_tui.key_order import KeyOrderApp
from tracker_tui.messages import (
    BulkEditorRequested,
    BulkEditRequested,
    CreateIssueRequested,
    EditIssueRequested,
    EditorEditRequested,
    WriteQueued,
)
from tracker_tui.screens.bulk_edit import BulkEditScreen
from tracker_tui.screens.bulk_editor import edit_in_bulk
from tracker_tui.screens.confirm import ConfirmDialog
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.screens.issue_editor import edit_issue
from tracker_tui.screens.issue_form import IssueFormScreen
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.screens.projects import ProjectsScreen
from tracker_tui.screens.settings import SettingsScreen
from tracker_tui.screens.sync_panel import SyncPanelScreen
from tracker_tui.services import Services
from tracker_tui.widgets.issue_list import IssueList
from tracker_tui.workers import read_in_thread


@dataclass
class UndoChecked(Message):
    """What undoing a bulk change would do, checked in a worker before anything is done."""

    batch_id: str
    check: undo.UndoCheck


class NavigatingApp(GuardedApp, KeyOrderApp):
    """Opens the screens beyond the list; `TrackerApp` builds on it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "sync_panel", "Sync panel"),
        Binding("P", "projects", "Projects"),
        Binding("comma", "settings", "Settings"),
        Binding("u", "undo_bulk", "Undo bulk change"),
    ]

    services: Services | None
    read_only: bool
    last_batch: str | None

    @on(IssueList.Opened)
    def open_issue(self, message: IssueList.Opened) -> None:
        if (services := self._services()) is not None:
            self.push_screen(IssueDetailScreen(services, message.issue_id))

    @on(EditIssueRequested)
    def open_edit_form(self, message: EditIssueRequested) -> None:
        if (services := self._writable()) is not None:
            self.push_screen(
                IssueFormScreen(services, message.issue_id, replacing=message.replacing)
            )

    @on(EditorEditRequested)
    def edit_in_editor(self, message: EditorEditRequested) -> None:
        if (services := self._writable()) is not None:
            work = edit_issue(self.screen, services, message.issue_id)
            self.run_worker(work, group="editor", exclusive=True)

    @on(BulkEditorRequested)
    def bulk_in_editor(self, message: BulkEditorRequested) -> None:
        if (services := self._writable()) is not None:
            work = edit_in_bulk(self.screen, services, message.selection)
            self.run_worker(work, group="editor", exclusive=True)

    @on(CreateIssueRequested)
    def open_create_form(self) -> None:
        if (services := self._writable()) is not None:
            self.push_screen(IssueFormScreen(services))

    @on(BulkEditRequested)
    def open_bulk_edit(self, message: BulkEditRequested) -> None:
        if (services := self._writable()) is not None:
            self.push_screen(BulkEditScreen(services, message.selection))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Read-only mode hides the undo key (from the footer and the help)."""
        return not (self.read_only and action == "undo_bulk")

    def action_sync_panel(self) -> None:
        """Show what the sync engine is doing and what waits in the outbox."""
        if isinstance(self.screen, SyncPanelScreen):
            return
        if (services := self._services()) is not None:
            self.push_screen(SyncPanelScreen(services))

    def action_settings(self) -> None:
        """The workspace, API keys, webhooks and usage (online where it must be)."""
        if isinstance(self.screen, SettingsScreen):
            return
        if (services := self._services()) is not None:
            self.push_screen(SettingsScreen(services))

    def action_projects(self) -> None:
        """List the projects (enter shows a project's issues)."""
        if isinstance(self.screen, ProjectsScreen):
            return
        if (services := self._services()) is not None:
            self.push_screen(ProjectsScreen(services), self._show_project)

    async def _show_project(self, project_id: str | None) -> None:
        """Back to the issue list, filtered by the project picked on the projects screen."""
        if project_id is None:
            return
        lists = [screen for screen in self.screen_stack if isinstance(screen, IssueListScreen)]
        if not lists:
            return
        while self.screen is not lists[-1]:
            await self.pop_screen()
        lists[-1].issue_query = IssueQuery().with_values(PROJECT, frozenset({project_id}))

    def action_undo_bulk(self) -> None:
        """Undo the last bulk change: unsent writes are dropped, sent ones inverted by allowed
        moves. What cannot be restored is named first, and the user chooses."""
        if (services := self._writable()) is None:
            return
        batch = self.last_batch
        if batch is None:
            self.notify("No bulk change to undo.", severity="warning")
            return
        source = services.source
        read_in_thread(
            self,
            "check the undo",
            lambda: undo.check(source, batch),
            lambda found: UndoChecked(batch, found),
        )

    @on(UndoChecked)
    def confirm_undo(self, message: UndoChecked) -> None:
        """Undo at once when everything can be restored; else say what cannot, and ask."""
        found = message.check
        if found.result.empty:
            self.last_batch = None
            lines = found.unrestored_lines()
            why = f": {'; '.join(lines)}" if lines else ""
            self.notify(f"Nothing to undo{why}.", severity="warning", timeout=8)
            return
        if not found.result.unrestored:
            self._undo(message.batch_id)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._undo(message.batch_id)

        dialog = ConfirmDialog(found.question(), yes="Undo the rest", no="Keep all")
        self.push_screen(dialog, answered)

    def _undo(self, batch: str) -> None:
        if (services := self._writable()) is None or self.last_batch != batch:
            return
        self.last_batch = None
        source = services.source

        def done(found: undo.UndoCheck) -> WriteQueued:
            return WriteQueued(found.notice(), batch_id=found.result.batch_id)

        read_in_thread(self, "undo the bulk change", lambda: undo.run(source, batch), done)

    def _services(self) -> Services | None:
        if self.services is None:
            self.notify("No local cache is open.", severity="warning")
        return self.services

    def _writable(self) -> Services | None:
        if self.read_only:
            self.notify("Read-only mode: changes are off.", severity="warning")
            return None
        return self._services()
