"""The settings screen (`,`): the workspace, API keys, webhooks with their recent deliveries,
and the use of the rate limits; what the service's web settings area does, in the terminal.

The first three tabs work on the server directly, through the sync engine's session
(`tracker_tui.admin_link`), in workers: a new key or webhook shows its secret once, here, and
is never queued or written anywhere; offline they say they are online only. What the key may
not do (`Services.permissions`, from `/me` or earlier 403s) is disabled and says why, rather
than failing after the user tried. The usage tab reads the profile's cache (offline).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import DataTable, Footer, Input, Label, Static, TabbedContent, TabPane

from sync.admin import ABSENT
from sync.permissions import ADMIN, KNOWN, WEBHOOKS
from tracker_tui.admin_link import OFFLINE_NOTICE, AdminUnavailable
from tracker_tui.data.usage import Usage, measure_usage
from tracker_tui.errors import EXPECTED, describe
from tracker_tui.screens.binding_commands import BindingCommands
from tracker_tui.screens.confirm import ConfirmDialog
from tracker_tui.screens.read_only import ReadOnlyScreen
from tracker_tui.services import Services
from tracker_tui.widgets.status_bar import StatusBar
from tracker_tui.widgets.usage_bars import UsageBars
from tracker_tui.workers import read_in_thread

if TYPE_CHECKING:
    from sync.admin import AdminApi
    from sync.models import ApiKey, DeliveryAttempt, Webhook, Workspace

T = TypeVar("T")

TABS = ("workspace", "keys", "webhooks", "usage")
RECENT_DELIVERIES = 20
NEEDS = {"workspace": ADMIN, "keys": ADMIN, "webhooks": WEBHOOKS}


class SettingsScreen(ReadOnlyScreen[None]):
    """Tabs for the workspace, API keys, webhooks and usage; `tab` opens on that one."""

    CSS_PATH = "settings.tcss"
    COMMANDS = {BindingCommands}
    HELP_GROUP: ClassVar[str] = "Settings"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="settings.back"),
        Binding("ctrl+r", "reload", "Reload", id="settings.reload"),
        Binding("d", "remove", "Revoke / delete", id="settings.remove"),
    ]
    WRITE_ACTIONS: ClassVar[frozenset[str]] = frozenset({"remove"})

    @dataclass
    class UsageRead(Message):
        usage: Usage

    def __init__(self, services: Services, *, tab: str = "workspace") -> None:
        super().__init__()
        self._services = services
        self._tab = tab if tab in TABS else "workspace"
        self.read_only = False
        self.workspace: Workspace | None = None
        self.keys: list[ApiKey] = []
        self.hooks: list[Webhook] = []
        self._granted: list[str] | None = None
        self._told_offline = False

    # --- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("Settings", id="settings-title")
        with TabbedContent(initial=f"tab-{self._tab}"):
            with TabPane("Workspace", id="tab-workspace"):
                yield Static("…", id="workspace-info", classes="info")
                with Horizontal(classes="row"):
                    yield Label("Rename to")
                    yield Input(placeholder="a new name, enter renames", id="workspace-name")
                yield Static("", id="workspace-note", classes="note")
            with TabPane("API keys", id="tab-keys"):
                yield DataTable(id="keys", cursor_type="row", zebra_stripes=True)
                with Horizontal(classes="row"):
                    yield Input(placeholder="new key's name, enter makes it", id="key-name")
                    yield Input(placeholder="permissions, blank: all", id="key-permissions")
                    yield Input(placeholder="days", id="key-days", type="number")
                yield Static("", id="key-secret", classes="secret")
                yield Static("", id="keys-note", classes="note")
            with TabPane("Webhooks", id="tab-webhooks"):
                yield DataTable(id="hooks", cursor_type="row", zebra_stripes=True)
                yield DataTable(id="deliveries", cursor_type="row")
                with Horizontal(classes="row"):
                    yield Input(placeholder="receiver URL, enter registers", id="hook-url")
                    yield Input(placeholder="events, blank: *", id="hook-events")
                yield Static("", id="hook-secret", classes="secret")
                yield Static("", id="webhooks-note", classes="note")
            with TabPane("Usage", id="tab-usage"):
                yield UsageBars("…", id="usage-bars")
        yield StatusBar(self._services.profile, read_only=self._services.read_only)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#keys", DataTable).add_columns("ID", "NAME", "STATE", "PERMISSIONS")
        self.query_one("#hooks", DataTable).add_columns("ID", "URL", "EVENTS")
        self.query_one("#deliveries", DataTable).add_columns(
            "EVENT", "TYPE", "#", "STATUS", "CODE", "ERROR"
        )
        for tab, permission in NEEDS.items():
            if self._services.permissions.lacks(permission):
                self._refuse(tab, permission)
        self.watch(self.app, "sync_status", lambda _status: self._read_usage(), init=False)
        self._read_usage()
        self.action_reload()

    def _refuse(self, tab: str, permission: str) -> None:
        """Disable what this key may not do, and say so where it would be."""
        inputs = {
            "workspace": ("#workspace-name",),
            "keys": ("#key-name", "#key-permissions", "#key-days"),
            "webhooks": ("#hook-url", "#hook-events"),
        }[tab]
        for selector in inputs:
            self.query_one(selector, Input).disabled = True
        note = f"This key lacks `{permission}`: use a profile whose key has it."
        self.query_one(f"#{tab}-note", Static).update(note)

    def _allowed(self, tab: str) -> bool:
        return not self._services.permissions.lacks(NEEDS[tab])

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Revoke / delete only on the keys and webhooks tabs, and only where the key may."""
        if action == "remove":
            tab = self._active()
            return tab in ("keys", "webhooks") and self._allowed(tab)
        return super().check_action(action, parameters)

    def _active(self) -> str:
        return self.query_one(TabbedContent).active.removeprefix("tab-")

    @on(TabbedContent.TabActivated)
    def _tab_changed(self) -> None:
        self.refresh_bindings()

    # --- online work ---------------------------------------------------------------------

    def action_back(self) -> None:
        self.dismiss(None)

    def action_reload(self) -> None:
        """Ask the server again for the workspace, the keys and the webhooks."""
        self._load_workspace()
        if self._allowed("keys"):
            self._load_keys()
        if self._allowed("webhooks"):
            self._load_hooks()

    async def _online(self, what: str, call: Callable[[AdminApi], Awaitable[T]]) -> T | None:
        """One admin call on the engine's session; a failure is a notification, never a
        traceback, and nothing is retried or queued."""
        admin = self._services.admin
        try:
            if admin is None:
                raise AdminUnavailable(OFFLINE_NOTICE)
            return await admin.admin(call)
        except AdminUnavailable:
            self.query_one("#settings-title", Static).update(f"Settings: {OFFLINE_NOTICE}")
            if not self._told_offline:
                self._told_offline = True
                self.notify(OFFLINE_NOTICE, severity="warning", timeout=8)
            return None
        except EXPECTED as error:
            self.notify(f"Could not {what}: {describe(error)}", severity="error", timeout=8)
            return None

    @work(group="workspace", exclusive=True, exit_on_error=False)
    async def _load_workspace(self) -> None:
        async def call(api: AdminApi) -> tuple[Workspace, list[str] | None]:
            workspace = (await api.workspace()).value
            try:
                return workspace, list((await api.me()).value.permissions)
            except ABSENT:  # a server without `/me`
                return workspace, None

        found = await self._online("read the workspace", call)
        if found is not None:
            workspace, self._granted = found
            self._show_workspace(workspace)

    def _show_workspace(self, workspace: Workspace) -> None:
        self.workspace = workspace
        granted = self._granted if self._granted is not None else None
        if granted is None and self._services.permissions.granted is not None:
            granted = list(self._services.permissions.granted)
        allowed = ", ".join(sorted(granted)) if granted is not None else "unknown"
        self.query_one("#workspace-info", Static).update(
            f"[b]{workspace.name or '-'}[/b]  {workspace.id}\n"
            f"plan {workspace.plan or '-'}\nthis key may: {allowed}"
        )

    @on(Input.Submitted, "#workspace-name")
    def _rename(self, event: Input.Submitted) -> None:
        name = event.value.strip()
        if not name or len(name) > 100:
            self.notify("A workspace name is 1 to 100 characters.", severity="warning")
            return
        if self.workspace is None:
            said = OFFLINE_NOTICE if self._told_offline else "The workspace is still being read."
            self.notify(said, severity="warning")
            return
        self._do_rename(self.workspace.id, name)

    @work(group="rename", exclusive=True, exit_on_error=False)
    async def _do_rename(self, workspace_id: str, name: str) -> None:
        async def call(api: AdminApi) -> Workspace:
            return (await api.rename_workspace(workspace_id, name)).value

        renamed = await self._online("rename the workspace", call)
        if renamed is not None:
            self._show_workspace(renamed)
            self.query_one("#workspace-name", Input).value = ""
            self.notify(f"Workspace renamed to {renamed.name}.")

    @work(group="keys", exclusive=True, exit_on_error=False)
    async def _load_keys(self) -> None:
        async def call(api: AdminApi) -> list[ApiKey]:
            return await api.list_keys()

        found = await self._online("list the API keys", call)
        if found is None:
            return
        self.keys = found
        table = self.query_one("#keys", DataTable)
        table.clear()
        for key in found:
            state = "revoked" if key.revoked else "active"
            table.add_row(key.id, key.name or "", state, ",".join(key.permissions), key=key.id)

    @on(Input.Submitted, "#key-name")
    @on(Input.Submitted, "#key-permissions")
    @on(Input.Submitted, "#key-days")
    def _create_key(self) -> None:
        name = self.query_one("#key-name", Input).value.strip()
        given = self.query_one("#key-permissions", Input).value.replace(",", " ").split()
        days_text = self.query_one("#key-days", Input).value.strip()
        unknown = [p for p in given if p not in KNOWN]
        if not name or unknown:
            why = f"unknown permission {unknown[0]!r}" if unknown else "give the key a name"
            self.notify(f"Cannot make the key: {why}.", severity="warning")
            return
        try:
            days = float(days_text) if days_text else None
        except ValueError:
            days = -1.0
        if days is not None and not 0 < days <= 36_500:
            self.notify("Days: a number above 0, or blank for never.", severity="warning")
            return
        self._do_create_key(name, given or None, days)

    @work(group="create-key", exclusive=True, exit_on_error=False)
    async def _do_create_key(
        self, name: str, permissions: list[str] | None, days: float | None
    ) -> None:
        async def call(api: AdminApi) -> ApiKey:
            return (await api.create_key(name, permissions, days)).value

        made = await self._online("make the key", call)
        if made is None:
            return
        for selector in ("#key-name", "#key-permissions", "#key-days"):
            self.query_one(selector, Input).value = ""
        self.query_one("#key-secret", Static).update(
            f"{made.id}: {made.key}\nShown once, now: copy it (it is not kept anywhere)."
        )
        self._load_keys()

    @work(group="hooks", exclusive=True, exit_on_error=False)
    async def _load_hooks(self) -> None:
        async def call(api: AdminApi) -> list[Webhook]:
            return await api.list_webhooks()

        found = await self._online("list the webhooks", call)
        if found is None:
            return
        self.hooks = found
        table = self.query_one("#hooks", DataTable)
        table.clear()
        for hook in found:
            table.add_row(hook.id, hook.url, ",".join(hook.events), key=hook.id)
        if found:
            self._load_deliveries(found[min(table.cursor_row, len(found) - 1)].id)
        else:
            self.query_one("#deliveries", DataTable).clear()

    @on(DataTable.RowHighlighted, "#hooks")
    def _hook_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._load_deliveries(event.row_key.value)

    @work(group="deliveries", exclusive=True, exit_on_error=False)
    async def _load_deliveries(self, hook_id: str) -> None:
        async def call(api: AdminApi) -> list[DeliveryAttempt]:
            return await api.deliveries(hook_id)

        found = await self._online("list the deliveries", call)
        if found is None:
            return
        table = self.query_one("#deliveries", DataTable)
        table.clear()
        for attempt in reversed(found[-RECENT_DELIVERIES:]):
            table.add_row(
                attempt.event_id or "",
                attempt.event_type or "",
                str(attempt.attempt or ""),
                attempt.status or "",
                str(attempt.response_code or "-"),
                attempt.error or "",
            )

    @on(Input.Submitted, "#hook-url")
    @on(Input.Submitted, "#hook-events")
    def _create_hook(self) -> None:
        url = self.query_one("#hook-url", Input).value.strip()
        events = self.query_one("#hook-events", Input).value.replace(",", " ").split() or ["*"]
        if not url.startswith(("http://", "https://")):
            self.notify("A receiver URL starts with http:// or https://.", severity="warning")
            return
        self._do_create_hook(url, events)

    @work(group="create-hook", exclusive=True, exit_on_error=False)
    async def _do_create_hook(self, url: str, events: list[str]) -> None:
        async def call(api: AdminApi) -> Webhook:
            return (await api.create_webhook(url, events)).value

        made = await self._online("register the webhook", call)
        if made is None:
            return
        for selector in ("#hook-url", "#hook-events"):
            self.query_one(selector, Input).value = ""
        self.query_one("#hook-secret", Static).update(
            f"{made.id} signs with: {made.secret}\nShown once, now: copy it to the receiver."
        )
        self._load_hooks()

    def action_remove(self) -> None:
        """Revoke the highlighted key, or delete the highlighted webhook, once confirmed."""
        tab = self._active()
        table = self.query_one("#keys" if tab == "keys" else "#hooks", DataTable)
        if table.row_count == 0:
            return
        record_id = str(table.get_row_at(table.cursor_row)[0])
        question = (
            f"Revoke key {record_id}? Every request with it is refused from then on; if this "
            "profile uses it, the app stops syncing."
            if tab == "keys"
            else f"Delete webhook {record_id}? Its pending deliveries are dropped."
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self._do_remove(tab, record_id)

        self.app.push_screen(ConfirmDialog(question), answered)

    @work(group="remove", exclusive=True, exit_on_error=False)
    async def _do_remove(self, tab: str, record_id: str) -> None:
        async def call(api: AdminApi) -> Any:
            if tab == "keys":
                return (await api.revoke_key(record_id)).meta
            return (await api.delete_webhook(record_id)).meta

        what = "revoke the key" if tab == "keys" else "delete the webhook"
        if await self._online(what, call) is None:
            return
        self.notify(f"{'Revoked key' if tab == 'keys' else 'Deleted webhook'} {record_id}.")
        if tab == "keys":
            self._load_keys()
        else:
            self._load_hooks()

    # --- usage (offline) -----------------------------------------------------------------

    def _read_usage(self) -> None:
        cache, alert = self._services.cache, self._services.usage_alert
        read_in_thread(
            self,
            "read the request log",
            lambda: measure_usage(cache, time.time(), alert_at=alert),
            self.UsageRead,
        )

    @on(UsageRead)
    def _show_usage(self, message: UsageRead) -> None:
        self.query_one(UsageBars).show(message.usage)
