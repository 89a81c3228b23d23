"""Opening the app for a profile (first run: the login screen); the demo opens it in `demo.launch`.

This is where the command line hands over to the app, so it gathers what the app is built from:
the profile, its key (asked for and kept in memory when it is stored nowhere), its cache, its
saved views and theme, and the sync engine's link. The engine itself (and the network layer)
is imported only once the app starts syncing, after its first list is drawn
(`tracker_tui.later_link`, docs/architecture.md#start-up).
"""

from __future__ import annotations

import getpass
import sys

from accounts.credentials import KeySource, ResolvedProfile, parse_key, resolve_profile
from accounts.errors import NoProfileError
from accounts.profiles import AppPaths, ProfileStore
from accounts.secret import Secret
from cache import open_cache
from sync.permissions import key_tag, remembered_permissions
from tracker_tui.app import make_app
from tracker_tui.crash_guard import exit_status
from tracker_tui.data.cache_source import ME_STATE_KEY
from tracker_tui.data.settings import AppTables, ProfileSettings, saved_theme, saved_views
from tracker_tui.data.usage_alert import alert_percent
from tracker_tui.error_log import open_error_log
from tracker_tui.errors import UsageError
from tracker_tui.issue_links import saved_web_url
from tracker_tui.later_link import EngineLinkLike, LaterLink
from tracker_tui.server_clock import ServerClock
from tracker_tui.signals import ending_cleanly


def run_for_profile(name: str | None, *, read_only: bool = False, live: bool = False) -> int:
    """Open the app on a profile's cache; with no profile at all, on the login screen first.

    Live updates are off unless asked for: a webhook only helps when the server can reach
    this machine, which only the user knows; polling within the budget always works. A closed
    terminal (SIGHUP) or `kill` (SIGTERM) quits the app like ctrl+q: drafts are written, the
    engine stops between requests, and the status says which signal ended it."""
    try:
        resolved = resolve_profile(name)
    except NoProfileError:
        from tracker_tui.screens.login import LoginSetup

        login = make_app(login=LoginSetup(), error_log=open_error_log())
        chosen = login.run()
        if not chosen:
            return exit_status(login)
        resolved = resolve_profile(chosen)
    for warning in resolved.warnings:
        print(f"tracker-tui: warning: {warning}", file=sys.stderr)
    if resolved.key is None:
        resolved = _with_key_asked(resolved)
    store = ProfileStore(AppPaths.from_env())
    config = store.load()
    ui = config.get(resolved.name).ui if resolved.name else {}
    tables = AppTables.of(config, store.paths.config_file)
    settings = ProfileSettings(store, resolved.name) if resolved.name else None
    with open_cache(resolved.cache_name) as cache:
        me = cache.state.get(ME_STATE_KEY)
        clock = ServerClock(cache.state.clock_offset())

        def engine() -> EngineLinkLike:
            from tracker_tui.engine_link import EngineLink

            return EngineLink(resolved, cache, live=live, server_clock=clock)

        link = LaterLink(engine)
        tag = key_tag(resolved.key.reveal()) if resolved.key is not None else ""
        app = make_app(
            cache=cache,
            sync=link,
            admin=link,
            permissions=remembered_permissions(cache, resolved.server, tag),
            usage_alert=alert_percent(ui),
            web_url=saved_web_url(ui),
            clock=clock.now,
            me=me if isinstance(me, str) else None,
            profile=resolved.name or "env",
            views=saved_views(ui),
            theme=saved_theme(ui),
            read_only=read_only,
            on_views_changed=settings.save_views if settings else None,
            on_theme_changed=settings.save_theme if settings else None,
            error_log=open_error_log(),
            keymap=tables.keymap,
            columns=tables.columns,
        )
        with ending_cleanly(stop=app.exit) as ending:
            app.run()
    return ending.status or exit_status(app)


def _with_key_asked(resolved: ResolvedProfile) -> ResolvedProfile:
    """A profile whose key is stored nowhere: ask, and keep the answer in memory only."""
    if not sys.stdin.isatty():
        raise UsageError(
            f"no API key for {resolved.server}: run `tracker-tui login`, or set TRACKER_API_KEY"
        )
    typed = Secret(getpass.getpass(f"API key for {resolved.server} (kept in memory only): "))
    key = parse_key(typed, "the prompt")
    return ResolvedProfile(
        name=resolved.name,
        server=resolved.server,
        workspace=resolved.workspace,
        key=key,
        key_source=KeySource.NONE,
        warnings=resolved.warnings,
    )
