"""The Textual app: a shell around the issue list, built by `make_app` from its collaborators.

The app draws only from an `IssueSource` (the local cache) and never waits on the network. It
keeps the app-wide state that several screens show (the latest sync report, a revision number
bumped whenever the cache changes) in reactives that widgets watch, and hands what should
outlive it (saved views, the theme) back to its caller through callbacks. The screens beyond
the list (detail, forms, bulk edit, sync panel, projects) are opened by its base class
`NavigatingApp` (`navigation.py`) from the requests screens post.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from textual import events, on
from textual._styles_cache import StylesCache
from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.driver import Driver
from textual.reactive import reactive
from textual.screen import Screen
from textual.theme import Theme

from cache import Cache, CacheError
from sync.permissions import ISSUES_WRITE, KeyPermissions
from tracker_tui import closed_watchers
from tracker_tui.access import KeyAccess, lost_notice
from tracker_tui.admin_link import AdminLink
from tracker_tui.collector import collect_again
from tracker_tui.data.cache_source import CacheIssueSource
from tracker_tui.data.columns import ColumnSetup
from tracker_tui.data.keymap import check_keymap
from tracker_tui.data.source import IssueSource
from tracker_tui.data.usage_alert import DEFAULT_ALERT_PERCENT, alert_words, day_used_percent
from tracker_tui.data.views import SavedView
from tracker_tui.drafts import KeepsDraft
from tracker_tui.idle_collector import IdleCollectingApp
from tracker_tui.key_names import hint_keys
from tracker_tui.messages import (
    CacheChanged,
    InboxChanged,
    InboxCounted,
    PermissionsChanged,
    SearchTyped,
    ServerHitsArrived,
    SourceFailed,
    SyncFailed,
    SyncStatusChanged,
    ViewsChanged,
    WriteQueued,
)
from tracker_tui.navigation import NavigatingApp
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.server_clock import utc_now
from tracker_tui.services import Services
from tracker_tui.sync_link import OfflineLink, SyncLink
from tracker_tui.widgets.issue_list import IssueList

if TYPE_CHECKING:
    from tracker_tui.screens.login import LoginSetup

_T = TypeVar("_T")

KEY_READ_ONLY = (
    "This key may not change issues (it lacks issues:write): the app is read-only. Log in "
    "with a key that has it to make changes."
)

SYNC_START_AT_LATEST = 1.0
"""Seconds after mounting when the sync link starts even if no list has counted its rows."""

COLLECT_AT_LATEST = 1.0
"""Seconds after mounting when garbage collection resumes even if no list has been drawn (the
login screen, a list that cannot read its rows)."""

LINUX_DRIVER = "textual.drivers.linux_driver.LinuxDriver"
"""The driver Textual picks on a POSIX terminal, the one `TerminalDriver` extends."""

THEMES: tuple[str, ...] = ("textual-dark", "textual-light", "nord", "gruvbox", "tokyo-night")
"""The built-in themes ctrl+t cycles through."""


def release_collections() -> None:
    """Move what start-up built out of the collector's reach, then let it collect again.

    `tracker_tui.cli.main` holds garbage collection off (`tracker_tui.collector.paused`) from
    its start until the first list is drawn, and this lets it collect again where it did (an
    app started otherwise, as tests do, collects throughout): start-up builds some 100,000
    objects that live as long as the app (modules, classes, styles, widgets) and little
    garbage, and the collections it set off walked them over and over, 190-280 ms of them
    before the first frame at load 7, the one full collection alone 80-190 ms
    (docs/architecture.md#start-up)."""
    gc.freeze()
    collect_again()


class TrackerApp(IdleCollectingApp, NavigatingApp):
    """A keyboard-driven issue tracker client over a local cache.

    Its return value is the profile saved on the login screen, when it was started on it
    without a cache, so the caller can open that profile's cache and start again.
    """

    CSS_PATH: ClassVar[list[str | PurePath]] = ["app.tcss", "screens/issue_list.tcss"]
    """The first screen's CSS too: Textual parses a screen's `CSS_PATH` when the screen is
    first pushed, and then parses every stylesheet read until then once more; read with the
    app's, it is parsed once (the screen still names it, so it has it wherever it is opened)."""
    TITLE = "tracker"
    HELP_GROUP: ClassVar[str] = "Everywhere"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("ctrl+t", "next_theme", "Next theme", show=False, id="app.next_theme"),
        Binding("ctrl+r", "sync_now", "Sync now", show=False, id="app.sync_now"),
        # After help, so a narrow footer cuts it before it cuts help.
        Binding("i", "inbox", "Inbox", id="app.inbox"),
        Binding("ctrl+q", "quit", "Quit", priority=True, id="app.quit"),
    ]

    sync_status: reactive[SyncStatusChanged | None] = reactive(None, init=False, repaint=False)
    """The sync engine's latest report; None until it sends one (the status bar says offline)."""

    cache_revision: reactive[int] = reactive(0, init=False, repaint=False)
    """Bumped on every `CacheChanged` and `WriteQueued`; screens watch it to re-read."""

    key_permissions: reactive[KeyPermissions] = reactive(KeyPermissions, init=False)
    """What the key may do as last learned; screens watch it to hide what it may no longer."""

    inbox_unread: reactive[int] = reactive(0, init=False)
    """Unread changes in the inbox (cache.changelog); status bars show them."""

    inbox_revision: reactive[int] = reactive(0, init=False)
    """Bumped when changes of the inbox are marked read; the inbox screen re-reads."""

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this platform; on Linux and macOS one whose output survives
        the terminal being closed (`terminal_driver`: else a hung-up app never ended)."""
        chosen = super().get_driver_class()
        if f"{chosen.__module__}.{chosen.__qualname__}" != LINUX_DRIVER:
            return chosen
        from tracker_tui.terminal_driver import TerminalDriver  # termios: never on Windows

        return TerminalDriver

    def __init__(
        self,
        source: IssueSource | None,
        *,
        services: Services | None,
        sync: SyncLink,
        login: LoginSetup | None,
        profile: str,
        views: Sequence[SavedView],
        access: KeyAccess,
        theme: str | None,
        clock: Callable[[], datetime],
        on_views_changed: Callable[[list[SavedView]], None] | None,
        on_theme_changed: Callable[[str], None] | None,
        error_log: Path | None = None,
        keymap: Mapping[str, str] | None = None,
        columns: ColumnSetup | None = None,
    ) -> None:
        super().__init__()
        closed_watchers.install()
        self._columns = columns
        self._user_keymap = dict(keymap or {})
        self.source = source
        self.profile = profile
        self.access = access
        self._views = list(views)
        self._initial_theme = theme
        self._reported_theme = theme
        self._clock = clock
        self._on_views_changed = on_views_changed
        self._on_theme_changed = on_theme_changed
        self.services = services
        self.sync = sync
        self._login = login
        self.last_batch: str | None = None
        """The last bulk change queued, which `u` undoes."""
        self._heap_frozen = False
        self._sync_started = False
        self._logged_in_once = False
        self.error_log = error_log
        self.read_only_reason: str | None = None
        self._budget_alerted = False
        """Said once at start when the app is read-only for a reason the user did not choose."""

    async def on_event(self, event: events.Event) -> None:
        """Every key is told to the engine first: its pull waits for a pause in the typing,
        so that the keys do not share the cores with it (sync.foreground)."""
        if isinstance(event, events.Key) and not event.is_forwarded:
            self.sync.user_typed()
        await super().on_event(event)

    async def on_mount(self) -> None:
        """Apply the saved theme, report every later change of it, open the issue list (or
        the login screen on a first run), and have the sync link start once the list is drawn.

        Screens are pushed rather than returned from `get_default_screen` because Textual
        loads a screen's `CSS_PATH` only for pushed screens.
        """
        if self._user_keymap:
            self.set_keymap(self._user_keymap)
        if self._initial_theme in self.available_themes:
            self.theme = self._initial_theme
        self.theme_changed_signal.subscribe(self, self._report_theme)
        self.screen_change_signal.subscribe(self, release_dead_line_caches)
        self.open_first_screen()
        if self.read_only_reason:
            self.notify(self.read_only_reason, severity="warning", timeout=8)
        if self._login is None:
            self.set_timer(SYNC_START_AT_LATEST, self._start_sync)
        self.set_timer(COLLECT_AT_LATEST, collect_again)

    @property
    def read_only(self) -> bool:
        """Changes are off: chosen, or the key turned out not to write issues."""
        return self.access.read_only

    def exit(self, result: Any = None, return_code: int = 0, message: Any = None) -> None:
        """Keep what each open screen holds as its draft first, while its fields are still
        there to read (by the screens' own unmount they are gone), then exit."""
        for screen in self.screen_stack:
            if isinstance(screen, KeepsDraft):
                screen.keep_draft()
        super().exit(result, return_code, message)

    async def on_unmount(self) -> None:
        """Stop the sync engine; unsent writes wait in the outbox for next time."""
        await self.sync.stop()

    def open_first_screen(self) -> None:
        """The login screen until a profile is saved (first run), then the issue list."""
        if self._login is not None and not self._logged_in_once:
            from tracker_tui.screens.login import LoginScreen

            self.push_screen(LoginScreen(self._login), self._logged_in)
            return
        self._open_list()

    def _open_list(self) -> None:
        if self.source is None:
            return
        self.push_screen(
            IssueListScreen(
                self.source,
                views=self._views,
                profile=self.profile,
                read_only=self.read_only,
                clock=self._clock,
                columns=self._columns,
            )
        )

    async def _logged_in(self, profile: str | None) -> None:
        """A profile was saved: go on to the list when there is a cache, else hand it back."""
        if profile is None or self.source is None:
            self.exit(profile)
            return
        self.profile = profile
        self._logged_in_once = True
        self._open_list()
        await self._start_sync()

    @on(IssueList.Counted)
    def _start_sync_once_drawn(self) -> None:
        """Start the sync link right after the frame that shows the first list's rows: its
        thread importing the engine would otherwise share the GIL with that frame."""
        if not self._sync_started:
            self.call_after_refresh(self._start_sync)

    async def _start_sync(self) -> None:
        """Start the sync link once, when the first list has its rows drawn: the engine's
        imports and its first requests would otherwise compete with the first frame for the
        one core Python runs on. At the latest `SYNC_START_AT_LATEST` after mounting (a list
        that cannot read its rows still syncs); never before the login screen has saved a
        profile. The inbox is first counted then too: its count is not in the list's frame,
        and its reading loaded the change log's modules on the event loop before it
        (docs/architecture.md#start-up).
        """
        if self._sync_started or (self._login is not None and not self._logged_in_once):
            return
        self._sync_started = True
        self.count_inbox()
        await self.sync.start(self.post_message)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's own commands (theme picker, quit, …) plus help and the theme cycle."""
        yield from super().get_system_commands(screen)
        keys = self.key_hint
        yield SystemCommand(
            "Help", f"Every key binding of this screen; {keys('app.help')}", self.action_help
        )
        yield SystemCommand(
            "Next theme",
            f"Cycle through the favourite themes; {keys('app.next_theme')}",
            self.action_next_theme,
        )
        yield SystemCommand(
            "Sync now",
            f"Send local edits and fetch changes now; {keys('app.sync_now')}",
            self.action_sync_now,
        )
        yield SystemCommand("Sync panel", keys("app.sync_panel"), self.action_sync_panel)
        yield SystemCommand("Projects", keys("app.projects"), self.action_projects)
        yield SystemCommand(
            "Settings",
            f"Workspace, API keys, webhooks, usage; {keys('app.settings')}",
            self.action_settings,
        )
        if not self.read_only:
            yield SystemCommand("Undo bulk change", keys("app.undo_bulk"), self.action_undo_bulk)
        yield SystemCommand(
            "Go to issue…", f"By its number or id; {keys('app.jump')}", self.action_jump
        )
        yield from self.issue_commands(screen)

    def key_hint(self, binding_id: str) -> str:
        """`key: y` for one of the app's bindings, as the keymap has it (the palette's help)."""
        for bindings in self._bindings.key_to_bindings.values():
            for binding in bindings:
                if binding.id == binding_id:
                    keys = self._keymap.get(binding_id, binding.key).split(",")
                    shown = (self.get_key_display(binding.with_key(key)) for key in keys)
                    return f"key: {' '.join(shown)}"
        return ""

    def action_help(self) -> None:
        """Show the bindings of the screen in front, generated from the bindings themselves
        (the help screen is imported when first shown: docs/architecture.md#start-up)."""
        from tracker_tui.screens.help import HelpScreen, help_groups, marker_group

        if isinstance(self.screen, HelpScreen):
            return
        groups = help_groups(self.screen.active_bindings, self.get_key_display)
        if isinstance(self.screen, IssueListScreen):
            groups.append(marker_group())
        self.push_screen(HelpScreen(groups))

    def action_next_theme(self) -> None:
        """Switch to the next theme of `THEMES`."""
        index = THEMES.index(self.theme) + 1 if self.theme in THEMES else 0
        self.theme = THEMES[index % len(THEMES)]
        self.notify(f"Theme: {self.theme}", timeout=2)

    def action_sync_now(self) -> None:
        """Push and pull at once, whatever wait for a retry the engine was in."""
        self.sync.sync_now()
        self.notify("Syncing now…", timeout=2)

    @on(IssueList.Counted)
    def freeze_startup_heap(self) -> None:
        """Once the first list is drawn, move every object alive (modules, classes, styles,
        widgets: around 100,000) out of the garbage collector's reach: a full collection walks
        every tracked object, and over those it paused the app for up to 140 ms mid-keystroke.
        What start-up left behind lives as long as the app anyway. Collections were held off
        until then (`release_collections`), and resume now, the full ones in the user's pauses
        (`tracker_tui.idle_collector`)."""
        if not self._heap_frozen:
            self._heap_frozen = True
            self.call_after_refresh(release_collections)
            self.call_after_refresh(self.collect_when_idle)

    @on(SyncStatusChanged)
    def keep_sync_status(self, message: SyncStatusChanged) -> None:
        """Remember the latest report; status bars follow `sync_status`. The first report past
        the day's alert also becomes a notification, once per run."""
        self.sync_status = message
        percent = day_used_percent(message.budget_day, message.day_limit)
        alert_at = self.services.usage_alert if self.services else DEFAULT_ALERT_PERCENT
        if percent is not None and percent >= alert_at and not self._budget_alerted:
            self._budget_alerted = True
            self.notify(
                f"{alert_words(percent)}. The settings' usage tab "
                f"({hint_keys(self, 'app.settings')}) shows each limit.",
                title="Rate limits",
                severity="warning",
                timeout=10,
            )

    @on(PermissionsChanged)
    def learn_permissions(self, message: PermissionsChanged) -> None:
        """Take up what the key may do as soon as it is learned: screens hide what it may no
        longer do, and one line says why."""
        if message.permissions == self.access.permissions:
            return
        lost = self.access.learn(message.permissions)
        self.key_permissions = message.permissions
        if not self.screen_stack:
            return  # the app is closing: no screen to redraw or to tell
        self.refresh_bindings()
        if lost:
            self.notify(lost_notice(lost), title="Permissions", severity="warning", timeout=10)

    @on(CacheChanged)
    def bump_cache_revision(self) -> None:
        """Tell every screen watching `cache_revision` to re-read."""
        self.cache_revision += 1
        self.count_inbox()

    @on(InboxChanged)
    def bump_inbox_revision(self) -> None:
        self.inbox_revision += 1
        self.count_inbox()

    @on(InboxCounted)
    def keep_inbox_count(self, message: InboxCounted) -> None:
        self.inbox_unread = message.unread

    def count_inbox(self) -> None:
        """Count the unread changes of the inbox in a worker (`InboxCounted`)."""
        if self.services is None:
            return
        inbox = self.services.cache.inbox

        def job() -> None:
            try:
                unread, _ = inbox.unread()
            except CacheError:
                return  # the next change counts again; the inbox screen says what failed
            self.post_message(InboxCounted(unread))

        self.run_worker(job, thread=True, exclusive=True, exit_on_error=False, group="inbox")

    @on(WriteQueued)
    def announce_write(self, message: WriteQueued) -> None:
        """A write is in the outbox: every screen re-reads, the sync engine sends it soon."""
        self.cache_revision += 1
        self.sync.poke()
        if message.batch_id is not None:
            self.last_batch = message.batch_id
        if message.notice:
            self.notify(message.notice, timeout=3)

    @on(SearchTyped)
    def search_the_server_too(self, message: SearchTyped) -> None:
        """While the cache is still filling, the engine also asks the server's search."""
        self.sync.search_typed(message.text)

    @on(ServerHitsArrived)
    def show_server_hits(self, message: ServerHitsArrived) -> None:
        """The server's hits are stored: every screen re-reads, and the user is told how many
        the cache did not hold yet (the backfill had not reached them)."""
        self.cache_revision += 1
        if message.new:
            noun = "issue" if message.new == 1 else "issues"
            self.notify(
                f"{message.new} more {noun} for “{message.text}” from the server "
                "(not yet in the cache when you searched)",
                title="Search",
                timeout=5,
            )

    @on(SourceFailed)
    def report_source_failure(self, message: SourceFailed) -> None:
        """A failed read becomes a notification, never a traceback."""
        self.notify(
            f"Could not {message.operation}: {message.error}",
            title="Local cache",
            severity="error",
        )

    @on(SyncFailed)
    def report_sync_failure(self, message: SyncFailed) -> None:
        """A sync failure the status bar cannot say becomes a notification."""
        self.notify(f"Sync failed: {message.error}", title="Sync", severity="error")

    @on(ViewsChanged)
    def report_views(self, message: ViewsChanged) -> None:
        """Hand the saved views to the caller, who persists them."""
        if self._on_views_changed is not None:
            self._hand_over("save the views", self._on_views_changed, message.views)

    def _report_theme(self, theme: Theme) -> None:
        """Hand a newly chosen theme to the caller, who persists it.

        Applying the caller's own theme at start-up also publishes a change; it is not news.
        """
        if theme.name != self._reported_theme and self._on_theme_changed is not None:
            self._hand_over("save the theme", self._on_theme_changed, theme.name)
        self._reported_theme = theme.name

    def _hand_over(self, what: str, callback: Callable[[_T], None], value: _T) -> None:
        """Call a caller's callback; if it fails (a config file cannot be written), say so."""
        try:
            callback(value)
        except Exception as error:
            self.notify(f"Could not {what}: {error}", title="Settings", severity="error")


def release_dead_line_caches(_screen: Screen[Any] | None = None) -> None:
    """Let the drawn lines of widgets that are gone be freed (called on every screen change).

    Textual memoises `StylesCache.get_inner_outer` with `lru_cache` on the method, so the key
    holds the widget's `StylesCache`, and with it every line the widget last drew, for the
    next 1,024 widgets drawn: each dialog opened and closed left its lines behind. Over a few
    hundred keystrokes that grew the heap by 100,000 objects and a full garbage collection
    from 2 to 50 ms, paid mid-keystroke. Emptying the memo when screens change frees them (the
    live widgets' entries are cheap to compute again).
    """
    StylesCache.get_inner_outer.cache_clear()


def make_app(
    source: IssueSource | None = None,
    *,
    cache: Cache | None = None,
    sync: SyncLink | None = None,
    me: str | None = None,
    login: LoginSetup | None = None,
    profile: str = "default",
    views: Sequence[SavedView] = (),
    read_only: bool = False,
    theme: str | None = None,
    clock: Callable[[], datetime] = utc_now,
    on_views_changed: Callable[[list[SavedView]], None] | None = None,
    on_theme_changed: Callable[[str], None] | None = None,
    error_log: Path | None = None,
    admin: AdminLink | None = None,
    permissions: KeyPermissions | None = None,
    usage_alert: int = DEFAULT_ALERT_PERCENT,
    keymap: Mapping[str, str] | None = None,
    columns: ColumnSetup | None = None,
    web_url: str | None = None,
) -> TrackerApp:
    """Build the app around its collaborators.

    Args:
        source: Where the list reads issues; by default the adapter over `cache`. Tests pass
            a stand-in that fails or stalls on purpose.
        cache: The profile's local cache; without it only the list (over `source`) works.
        sync: The sync engine's link; offline (writes wait in the outbox) when not given.
        me: The current user's id, for "mine" and for showing "you".
        login: Start on the login screen (first run) with this setup.
        profile: The profile's name, shown in the status bar until the sync engine reports.
        views: Saved views, on the keys 1 to 9 in this order.
        read_only: Refuse every write (edit, create, marks for bulk edits) with a notice.
        theme: A Textual theme name to start with; unknown names are ignored.
        clock: The current time, for relative times ("3h ago"): the server's (see
            tracker_tui.server_clock) when a sync engine measures it; tests pass a fixed one.
        on_views_changed: Called with all views whenever one is saved.
        on_theme_changed: Called with the theme's name whenever the user changes it.
        error_log: Where the caller sends the app's errors (`tracker_tui.error_log`), named
            when one is shown.
        admin: Where the settings screen's online work runs (the engine's session).
        permissions: What the key may do, as far as known; a key known not to write issues
            opens the app read-only, its write keys hidden.
        usage_alert: The day's share of the rate limit, in percent, past which the status bar
            warns.
        keymap: Binding ids to keys (`tracker_tui.data.keymap.parse_keymap` reads config.toml's
            `[keymap]`); checked here against every binding, so an unknown id or a clash is a
            `KeymapError` before anything is drawn.
        columns: The list's columns (`tracker_tui.data.columns.parse_columns` reads
            config.toml's `[columns]`); the field table's when not given.
        web_url: The profile's template of an issue's web address, for `Y` and `O`.
    """
    if keymap:
        from tracker_tui.bindings_table import app_bindings

        check_keymap(keymap, app_bindings())
    link = sync if sync is not None else OfflineLink()
    access = KeyAccess(permissions, chosen_read_only=read_only)
    key_cannot_write = permissions is not None and permissions.lacks(ISSUES_WRITE)
    if source is None and cache is not None:
        source = CacheIssueSource(cache, me=me)
    if source is None and login is None:
        raise ValueError("make_app needs a cache, a source, or a login setup")
    services = None
    if cache is not None:
        adapter = source if isinstance(source, CacheIssueSource) else CacheIssueSource(cache, me=me)
        services = Services(
            cache,
            adapter,
            link,
            clock,
            access,
            me,
            profile,
            admin=admin,
            usage_alert=usage_alert,
            web_url=web_url,
        )
    app = TrackerApp(
        source,
        services=services,
        sync=link,
        login=login,
        profile=profile,
        views=views,
        access=access,
        theme=theme,
        clock=clock,
        on_views_changed=on_views_changed,
        on_theme_changed=on_theme_changed,
        error_log=error_log,
        keymap=keymap,
        columns=columns,
    )
    if key_cannot_write:
        app.read_only_reason = KEY_READ_ONLY
    return app
