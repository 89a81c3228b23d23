"""The settings screen (`,`): the workspace, API keys, webhooks with their recent deliveries,
and the use of the rate limits; what the service's web settings area does, in the terminal.

The workspace tab (`tracker_tui.widgets.workspace_pane`) shows the cache's workspace and queues
a rename in the outbox like any write. The keys and webhooks tabs work on the server directly,
through the sync engine's session (`tracker_tui.admin_link`), in workers: a new key or webhook
shows its secret once, here, and is never queued or written anywhere; offline they say they
are online only. What the key may not do (`Services.permissions`, from `/me` or 403s, learned
at start or while the app runs) is disabled and says why, rather than failing after the user
tried. The usage tab reads the profile's cache (offline).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import DataTable, Footer, Input, Static, TabbedContent, TabPane

from sync.admin import own_key
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
from tracker_tui.widgets.workspace_pane import WorkspacePane
from tracker_tui.workers import read_in_thread

if TYPE_CHECKING:
    from sync.admin import AdminApi
    from sync.models import ApiKey, DeliveryAttempt, Webhook

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
        self.keys: list[ApiKey] = []
        self._mine: str | None = None
        """The app's own key among them, where the listing tells (`sync.admin.own_key`)."""
        self.hooks: list[Webhook] = []
        self._told_offline = False

    # --- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("Settings", id="settings-title")
        with TabbedContent(initial=f"tab-{self._tab}"):
            with TabPane("Workspace", id="tab-workspace"):
                yield WorkspacePane(self._services, id="workspace")
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
        self._apply_permissions()
        self.watch(self.app, "sync_status", lambda _status: self._read_usage(), init=False)
        self.watch(self.app, "key_permissions", self._permissions_learned, init=False)
        self._read_usage()
        self.action_reload()

    def _apply_permissions(self) -> None:
        """Disable what this key may not do, and say so where it would be."""
        permissions = self._services.permissions
        self.query_one(WorkspacePane).allow(permissions)
        inputs = {
            "keys": ("#key-name", "#key-permissions", "#key-days"),
            "webhooks": ("#hook-url", "#hook-events"),
        }
        for tab, selectors in inputs.items():
            lacks = permissions.lacks(NEEDS[tab])
            for selector in selectors:
                self.query_one(selector, Input).disabled = lacks
            note = f"This key lacks `{NEEDS[tab]}`: use a profile whose key has it."
            self.query_one(f"#{tab}-note", Static).update(note if lacks else "")

    def _permissions_learned(self, _permissions: object) -> None:
        """The app learned what the key may do while this screen was open: follow it."""
        self._apply_permissions()
        self.refresh_bindings()
        if self._allowed("keys"):
            self._load_keys()  # which key is this app's shows once its permissions are known

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
        self.query_one(WorkspacePane).load()
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

    @work(group="keys", exclusive=True, exit_on_error=False)
    async def _load_keys(self) -> None:
        async def call(api: AdminApi) -> list[ApiKey]:
            return await api.list_keys()

        found = await self._online("list the API keys", call)
        if found is None:
            return
        self.keys = found
        granted = self._services.permissions.granted
        self._mine = None if granted is None else own_key(found, granted, datetime.now(UTC)).mine
        table = self.query_one("#keys", DataTable)
        table.clear()
        for key in found:
            state = "revoked" if key.revoked else "this key" if key.id == self._mine else "active"
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
        yours = (
            "It is the key this app uses: syncing stops at once."
            if record_id == self._mine
            else "If this profile uses it, the app stops syncing."
        )
        question = (
            f"Revoke key {record_id}? Every request with it is refused from then on. {yours}"
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
