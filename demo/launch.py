"""`tracker-tui demo`: the whole product with no account, against a seeded embedded service."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from accounts.credentials import KeySource, ResolvedProfile
from cache import Cache
from demo.activity import AnotherUser
from demo.service import DEMO_WORKSPACE, DemoService
from tracker_tui.app import make_app
from tracker_tui.crash_guard import exit_status
from tracker_tui.data.settings import AppTables
from tracker_tui.engine_link import EngineLink
from tracker_tui.error_log import open_error_log
from tracker_tui.server_clock import ServerClock
from tracker_tui.signals import ending_cleanly


def run_demo(*, issues: int, another_user: bool, read_only: bool = False) -> int:
    """The whole product with no account: a seeded service, a throw-away cache, live updates.

    Nothing may outlive it: a closed terminal (SIGHUP) or `kill` (SIGTERM) asks the app to
    quit like ctrl+q, so every `with` below removes what it made; the status then says which
    signal ended it. The user's `[keymap]` and `[columns]` apply, so the demo is where to try
    them."""
    tables = AppTables.load()
    print(f"Starting the demo service with {issues} issues...", file=sys.stderr)
    with (
        DemoService(issues=issues) as service,
        tempfile.TemporaryDirectory(prefix="tracker-demo-cache-") as folder,
        Cache.open(Path(folder) / "demo.db") as cache,
    ):
        resolved = ResolvedProfile(
            name="demo",
            server=service.base_url,
            workspace=DEMO_WORKSPACE,
            key=service.key,
            key_source=KeySource.NONE,
        )
        colleague = None
        if another_user:
            colleague = AnotherUser(
                str(service.db_path),
                DEMO_WORKSPACE,
                service.base_url,
                notify=service.key.reveal(),
            )
            colleague.start()
        try:
            clock = ServerClock()
            app = make_app(
                cache=cache,
                sync=EngineLink(resolved, cache, live=True, server_clock=clock),
                clock=clock.now,
                profile="demo",
                read_only=read_only,
                error_log=open_error_log(),
                keymap=tables.keymap,
                columns=tables.columns,
            )
            with ending_cleanly(stop=app.exit) as ending:
                app.run()
        finally:
            if colleague is not None:
                colleague.stop()
    return ending.status or exit_status(app)
