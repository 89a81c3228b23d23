"""The app's half that opens screens: from the list to an issue, a form, a bulk edit, the sync
panel, the projects, the inbox or the settings; `:` or `#`, which opens an issue by its
number; and `u`, which undoes the last bulk change.

Screens ask by posting requests (`EditIssueRequested`, `IssueList.Opened`, …); this class
answers them, so no screen knows which screen another one opens. Without a cache (a stand-in
source) only the list works, and the rest says why.

Each screen is imported when it is first opened, not with the app: together they (and the
markdown parser, the admin models and the dialogs behind them) cost more at start-up than
drawing the list (docs/architecture.md#start-up). So is the undo, with the cache's outbox,
overlay, records and full-text modules behind it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.binding import Binding, BindingType
from textual.message import Message

from cache import CacheError, IssueFilter, IssueSort
from cache.errors import AmbiguousIssueError
from issuefields import PROJECT
from tracker_tui.copy_open import CopyOpenApp
from tracker_tui.crash_guard import GuardedApp
from tracker_tui.data.source import IssueQuery
from tracker_tui.key_names import hint_keys
from tracker_tui.key_order import KeyOrderApp
from tracker_tui.messages import (
    BulkEditorRequested,
    BulkEditRequested,
    CreateIssueRequested,
    EditIssueRequested,
    EditorEditRequested,
    InboxChanged,
    OpenIssueRequested,
    WriteQueued,
)
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.services import Services
from tracker_tui.widgets.issue_list import IssueList
from tracker_tui.workers import failed, read_in_thread

if TYPE_CHECKING:
    from cache import Cache
    from tracker_tui.data.undo import UndoCheck


class JumpFound(Message):
    """Where a go-to-issue reference led: the issue's id, or why there is none."""

    __slots__ = ("issue_id", "why")

    def __init__(self, issue_id: str | None, why: str = "") -> None:
        self.issue_id = issue_id
        self.why = why
        super().__init__()


def find_issue(cache: Cache, ref: str, sync_key: str = "ctrl+r") -> JumpFound:
    """The issue a user typed (`123`, `#123`, an id), or a sentence saying why not: a number
    past the newest cached one is not cached yet (`sync_key` syncs now), another is not in the
    cache."""
    try:
        issue_id = cache.reads.resolve_issue(ref)
    except AmbiguousIssueError as error:
        return JumpFound(None, f"{error} Type #{ref.lstrip('#')} for the number.")
    if issue_id is not None:
        return JumpFound(issue_id)
    digits = ref.removeprefix("#")
    if not (digits.isdigit() and digits.isascii()):
        return JumpFound(None, f"No issue {ref!r} in the local cache.")
    newest = cache.reads.window(IssueFilter(), IssueSort("number", True), 0, 1)
    top = newest[0].cells.get("number") if newest else None
    if not isinstance(top, int) or int(digits) > top:
        seen = f" (the newest cached is #{top})" if isinstance(top, int) else ""
        return JumpFound(
            None, f"Issue #{digits} is not in the local cache yet{seen}: {sync_key} syncs now."
        )
    return JumpFound(
        None, f"No issue #{digits} in the local cache: it was deleted, or is not pulled yet."
    )


class UndoChecked(Message):
    """What undoing a bulk change would do, checked in a worker before anything is done."""

    __slots__ = ("batch_id", "check")

    def __init__(self, batch_id: str, check: UndoCheck) -> None:
        self.batch_id = batch_id
        self.check = check
        super().__init__()


class NavigatingApp(GuardedApp, KeyOrderApp, CopyOpenApp):
    """Opens the screens beyond the list; `TrackerApp` builds on it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "sync_panel", "Sync panel", id="app.sync_panel"),
        Binding("P", "projects", "Projects", id="app.projects"),
        Binding("comma", "settings", "Settings", id="app.settings"),
        Binding("u", "undo_bulk", "Undo bulk change", id="app.undo_bulk"),
        Binding("colon,number_sign", "jump", "Go to issue #", show=False, id="app.jump"),
    ]

    services: Services | None
    last_batch: str | None

    @property
    def read_only(self) -> bool:
        """Changes are off (the app says why and when: `TrackerApp.read_only`)."""
        return False

    @on(IssueList.Opened)
    def open_issue(self, message: IssueList.Opened) -> None:
        self._show_issue(message.issue_id, message.issue_list.issue_query)

    @on(OpenIssueRequested)
    def open_issue_by_id(self, message: OpenIssueRequested) -> None:
        self._show_issue(message.issue_id)

    def _show_issue(self, issue_id: str, order: IssueQuery | None = None) -> None:
        """Show an issue; what the inbox held of it is seen from now on (marked read in a
        worker, which then has the unread count read again)."""
        from tracker_tui.screens.issue_detail import IssueDetailScreen

        if (services := self._services()) is None:
            return
        self.push_screen(IssueDetailScreen(services, issue_id, order=order))
        inbox = services.cache.inbox

        def seen() -> None:
            try:
                marked = inbox.mark_read([issue_id])
            except CacheError as error:
                self.post_message(failed("mark the inbox read", error))
                return
            if marked:
                self.post_message(InboxChanged())

        self.run_worker(seen, thread=True, exit_on_error=False, group="inbox-read")

    @on(EditIssueRequested)
    def open_edit_form(self, message: EditIssueRequested) -> None:
        from tracker_tui.screens.issue_form import IssueFormScreen

        if (services := self._writable()) is not None:
            self.push_screen(
                IssueFormScreen(services, message.issue_id, replacing=message.replacing)
            )

    @on(EditorEditRequested)
    def edit_in_editor(self, message: EditorEditRequested) -> None:
        from tracker_tui.screens.issue_editor import edit_issue

        if (services := self._writable()) is not None:
            work = edit_issue(self.screen, services, message.issue_id)
            self.run_worker(work, group="editor", exclusive=True)

    @on(BulkEditorRequested)
    def bulk_in_editor(self, message: BulkEditorRequested) -> None:
        from tracker_tui.screens.bulk_editor import edit_in_bulk

        if (services := self._writable()) is not None:
            work = edit_in_bulk(self.screen, services, message.selection)
            self.run_worker(work, group="editor", exclusive=True)

    @on(CreateIssueRequested)
    def open_create_form(self) -> None:
        from tracker_tui.screens.issue_form import IssueFormScreen

        if (services := self._writable()) is not None:
            self.push_screen(IssueFormScreen(services))

    @on(BulkEditRequested)
    def open_bulk_edit(self, message: BulkEditRequested) -> None:
        from tracker_tui.screens.bulk_edit import BulkEditScreen

        if (services := self._writable()) is not None:
            self.push_screen(BulkEditScreen(services, message.selection))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Read-only mode hides the undo key (from the footer and the help)."""
        if self.read_only and action == "undo_bulk":
            return False
        return super().check_action(action, parameters)

    def action_sync_panel(self) -> None:
        """Show what the sync engine is doing and what waits in the outbox."""
        from tracker_tui.screens.sync_panel import SyncPanelScreen

        if isinstance(self.screen, SyncPanelScreen):
            return
        if (services := self._services()) is not None:
            self.push_screen(SyncPanelScreen(services))

    def action_inbox(self) -> None:
        """What changed in the user's issues since they last looked."""
        from tracker_tui.screens.inbox import InboxScreen

        if isinstance(self.screen, InboxScreen):
            return
        if (services := self._services()) is not None:
            self.push_screen(InboxScreen(services))

    def action_settings(self) -> None:
        """The workspace, API keys, webhooks and usage (online where it must be)."""
        from tracker_tui.screens.settings import SettingsScreen

        if isinstance(self.screen, SettingsScreen):
            return
        if (services := self._services()) is not None:
            self.push_screen(SettingsScreen(services))

    def action_projects(self) -> None:
        """List the projects (enter shows a project's issues)."""
        from tracker_tui.screens.projects import ProjectsScreen

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

    def action_jump(self) -> None:
        """Ask for an issue's number (or id) and open it."""
        from tracker_tui.screens.jump_dialog import JumpDialog

        if isinstance(self.screen, JumpDialog) or (services := self._services()) is None:
            return
        cache = services.cache
        sync_key = hint_keys(self, "app.sync_now")

        def jump(ref: str | None) -> None:
            if ref:
                read_in_thread(
                    self, "find the issue", lambda: find_issue(cache, ref, sync_key), lambda x: x
                )

        self.push_screen(JumpDialog(), jump)

    @on(JumpFound)
    def open_found_issue(self, message: JumpFound) -> None:
        """Open the issue the prompt named, or say why there is none."""
        from tracker_tui.screens.issue_detail import IssueDetailScreen

        if message.issue_id is None:
            self.notify(message.why, severity="warning", timeout=6)
        elif (services := self._services()) is not None:
            lists = [screen for screen in self.screen_stack if isinstance(screen, IssueListScreen)]
            order = lists[-1].issue_query if lists else None
            self.push_screen(IssueDetailScreen(services, message.issue_id, order=order))

    def action_undo_bulk(self) -> None:
        """Undo the last bulk change: unsent writes are dropped, sent ones inverted by allowed
        moves. What cannot be restored is named first, and the user chooses."""
        if (services := self._writable()) is None:
            return
        batch = self.last_batch
        if batch is None:
            self.notify("No bulk change to undo.", severity="warning")
            return
        from tracker_tui.data import undo

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

        from tracker_tui.screens.confirm import ConfirmDialog

        dialog = ConfirmDialog(found.question(), yes="Undo the rest", no="Keep all")
        self.push_screen(dialog, answered)

    def _undo(self, batch: str) -> None:
        if (services := self._writable()) is None or self.last_batch != batch:
            return
        from tracker_tui.data import undo

        self.last_batch = None
        source = services.source

        def done(found: UndoCheck) -> WriteQueued:
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
