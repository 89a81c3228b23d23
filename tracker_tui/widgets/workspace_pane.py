"""The settings screen's workspace tab: the key's workspace, and renaming it like any write.

What it shows is the cache's workspace with the outbox laid over it (`Cache.reads.workspace`),
so a rename shows at once, marked pending until the server has it, or failed with the
server's reason (a key without `admin`). The rename is queued in the outbox and sent by the
sync engine, so it works offline and is never lost; the server's copy is read again through
the engine's session when the tab opens (and stored, for a rename queued later offline).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Input, Label, Static

from cache import EntryState, Resource, SyncState, WorkspaceRow
from sync.admin import ABSENT, keep_workspace
from sync.permissions import ADMIN, KeyPermissions
from tracker_tui.admin_link import AdminUnavailable
from tracker_tui.errors import EXPECTED, describe
from tracker_tui.services import Services
from tracker_tui.workers import read_in_thread, write_in_thread

if TYPE_CHECKING:
    from sync.admin import AdminApi

NAME_MAX = 100
NOT_READ_YET = (
    "The workspace is not known here yet: it is read once the server answers, and can be "
    "renamed then (offline too, from then on)."
)


class WorkspacePane(Vertical):
    """The workspace's name, id, plan and the key's permissions, and a rename field."""

    DEFAULT_CSS = "WorkspacePane { height: auto; }"

    @dataclass
    class Read(Message):
        row: WorkspaceRow | None

    def __init__(self, services: Services, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._services = services
        self.row: WorkspaceRow | None = None
        self._granted: list[str] | None = None
        self._offline = False

    def compose(self) -> ComposeResult:
        yield Static("…", id="workspace-info", classes="info")
        with Horizontal(classes="row"):
            yield Label("Rename to")
            yield Input(placeholder="a new name, enter renames", id="workspace-name")
        yield Static("", id="workspace-note", classes="note")

    def on_mount(self) -> None:
        self.watch(self.app, "cache_revision", lambda _revision: self._read_cached(), init=False)
        self._read_cached()

    # --- what the key may do ---------------------------------------------------------------

    def allow(self, permissions: KeyPermissions) -> None:
        """Disable the rename when the key lacks `admin`, and say why where it would be."""
        lacks = permissions.lacks(ADMIN)
        self.query_one("#workspace-name", Input).disabled = lacks
        note = f"This key lacks `{ADMIN}`: use a profile whose key has it." if lacks else ""
        self.query_one("#workspace-note", Static).update(note)

    # --- showing it --------------------------------------------------------------------------

    def _read_cached(self) -> None:
        cache = self._services.cache
        read_in_thread(self, "read the workspace", cache.reads.workspace, self.Read)

    @on(Read)
    def _show(self, message: Read) -> None:
        self.row = message.row
        info = self.query_one("#workspace-info", Static)
        row = message.row
        if row is None:
            said = "offline: not read yet" if self._offline else "reading…"
            info.update(f"workspace {said}")
            return
        granted = self._granted
        if granted is None and self._services.permissions.granted is not None:
            granted = list(self._services.permissions.granted)
        allowed = ", ".join(sorted(granted)) if granted is not None else "unknown"
        info.update(
            f"[b]{_escape(row.name) or '-'}[/b]{_state(row)}  {row.id}\n"
            f"plan {row.plan or '-'}\nthis key may: {allowed}"
        )

    @work(group="workspace", exclusive=True, exit_on_error=False)
    async def load(self) -> None:
        """Read the server's workspace (and `/me`'s permissions) and keep it in the cache."""
        admin = self._services.admin
        cache = self._services.cache

        async def call(api: AdminApi) -> list[str] | None:
            workspace = (await api.workspace()).value
            keep_workspace(cache, workspace)
            try:
                return list((await api.me()).value.permissions)
            except ABSENT:  # a server without `/me`
                return None

        try:
            if admin is None:
                raise AdminUnavailable("no connection")
            self._granted = await admin.admin(call)
        except AdminUnavailable:
            self._offline = True
        except EXPECTED as error:
            self.notify(f"Could not read the workspace: {describe(error)}", severity="error")
        self._read_cached()

    # --- renaming ----------------------------------------------------------------------------

    @on(Input.Submitted, "#workspace-name")
    def _rename(self, event: Input.Submitted) -> None:
        name = event.value.strip()
        if not name or len(name) > NAME_MAX:
            self.notify(f"A workspace name is 1 to {NAME_MAX} characters.", severity="warning")
            return
        if self._services.permissions.lacks(ADMIN):
            self.notify(f"This key lacks `{ADMIN}`: it may not rename the workspace.")
            return
        row = self.row
        if row is None:
            self.notify(NOT_READ_YET, severity="warning")
            return
        cache = self._services.cache
        write_in_thread(
            self,
            "queue the rename",
            lambda: cache.outbox.update(Resource.WORKSPACES, row.id, {"name": name}),
            done=f"Rename to {name!r} queued: sent as soon as the server answers.",
        )
        event.input.value = ""


def _state(row: WorkspaceRow) -> str:
    """The rename's fate beside the name: pending until sent, failed with the server's words."""
    if row.sync_state is SyncState.PENDING:
        return "  [i](rename pending)[/i]"
    if row.sync_state is SyncState.CONFLICT:
        return "\n[b]renamed elsewhere meanwhile:[/b] keep yours or take theirs (sync panel: y)"
    failed = [e for e in row.entries if e.state is EntryState.FAILED]
    if failed:
        wanted = failed[-1].changes.get("name")
        why = failed[-1].last_error or "refused"
        return f"\n[b]rename to {_escape(str(wanted))} failed:[/b] {_escape(why)} (sync panel: y)"
    return ""


def _escape(text: str) -> str:
    return text.replace("[", r"\[")
