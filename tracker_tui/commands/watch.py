"""`tracker-tui watch [--json] [--interval S]`: the inbox as a stream, for scripts and desktop
notifications.

It runs the app's background loop (`sync.engine.SyncLoop`: the push, then a pull at the rate
limiter's background pace or every `--interval` seconds, never past the limits) and, each time
a pull stores a page, prints the change log's new entries (`Cache.inbox.after`), one a line,
flushed at once. What was logged before it started is not printed (`tracker-tui inbox` lists
it). A server that stops answering is said once on stderr and tried again (the loop's
backoff), also when it cannot be reached at start; a refused key ends it with status 1; Ctrl-C
ends it with 130 (the command line's edge).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from typing import TYPE_CHECKING

from accounts.credentials import ResolvedProfile, resolve_profile
from cache import Cache, Change, open_cache
from sync.connection import Connection, ConnectionState, ConnectionWatch
from sync.errors import Forbidden, NetworkError, ServerError, SyncError, Unauthorized
from tracker_tui.data.inbox import Names, as_json, describe
from tracker_tui.errors import UsageError
from tracker_tui.errors import describe as describe_error
from tracker_tui.exit_codes import Exit
from tracker_tui.output import notice

if TYPE_CHECKING:
    from sync.engine import LoopEvent, SyncLoop

FAILING = (Connection.OFFLINE, Connection.SERVER_ERROR)
START_RETRY_CAP = 60.0
"""The longest wait between attempts to open the session while the server cannot be reached."""


def run_watch(args: argparse.Namespace) -> int:
    if args.interval is not None and args.interval <= 0:
        raise UsageError("--interval must be a positive number of seconds")
    resolved = resolve_profile(args.profile)
    for warning in resolved.warnings:
        notice(f"warning: {warning}")
    with open_cache(resolved.cache_name) as cache:
        return asyncio.run(Watcher(cache, json_lines=args.json).run(resolved, args.interval))


class Watcher:
    """Prints the change log's new entries as the loop's pulls store them."""

    def __init__(self, cache: Cache, *, json_lines: bool) -> None:
        self._cache = cache
        self._json = json_lines
        self._printed = cache.inbox.latest()
        self._failing = False
        self._loop: SyncLoop | None = None
        self.refused: SyncError | None = None

    async def run(self, resolved: ResolvedProfile, interval: float | None) -> int:
        from sync.engine import SyncLoop
        from sync.retry import Backoff
        from sync.session import open_session
        from tracker_tui.commands.sync_cmd import learn_me

        if not self._json:
            notice("watching for changes to your issues; Ctrl-C stops")
        backoff, failures = Backoff(cap=START_RETRY_CAP), 0
        watch = ConnectionWatch(on_change=self.connection)
        while True:
            try:
                async with open_session(
                    resolved, cache=self._cache, observer=watch.observe, sleep=watch.sleep
                ) as session:
                    with contextlib.suppress(SyncError):  # a help only: the loop meets it too
                        await learn_me(session)
                    self._loop = SyncLoop(session, listener=self.heard, interval=interval)
                    await self._loop.run()
                break
            except (NetworkError, ServerError) as error:  # opening needs the server once
                failures += 1
                self._say_failing(describe_error(error))
                await asyncio.sleep(backoff.delay(failures))
        if self.refused is not None:
            notice(f"tracker-tui: {describe_error(self.refused)}")
            return Exit.FAILED
        return Exit.OK

    def heard(self, event: LoopEvent) -> None:
        """The loop's events: a page stored prints what it logged; a refused key stops."""
        from sync.engine import PassFailed
        from sync.pull import PullProgress, PullReport

        if isinstance(event, PullProgress | PullReport):
            self.flush()
        elif isinstance(event, PassFailed):
            error = event.error
            if isinstance(error, Unauthorized | Forbidden) and self._loop is not None:
                self.refused = error
                self._loop.stop()
            elif isinstance(error, SyncError) and not isinstance(error, NetworkError | ServerError):
                notice(f"tracker-tui: {describe_error(error)}; trying again")

    def connection(self, state: ConnectionState) -> None:
        """Say when the server stops answering, and when it answers again (once each)."""
        if state.kind in FAILING:
            self._say_failing(state.detail or "the server cannot be reached")
        elif state.kind is Connection.ONLINE and self._failing:
            self._failing = False
            notice("tracker-tui: the server answers again")

    def _say_failing(self, why: str) -> None:
        if not self._failing:
            self._failing = True
            notice(f"tracker-tui: {why}; still watching, trying again")

    def flush(self) -> None:
        """Print the entries logged since the last one printed."""
        fresh = self._cache.inbox.after(self._printed)
        if not fresh:
            return
        names = Names(self._cache)
        for change in fresh:
            print(line(change, names, json_line=self._json), flush=True)
            self._printed = change.id


def line(change: Change, names: Names, *, json_line: bool) -> str:
    """One change as `watch` prints it: `#42 Title: priority Low → High`, or its JSON object
    (`tracker_tui.data.inbox.as_json`) on one line."""
    if json_line:
        return json.dumps(as_json(change, names), ensure_ascii=False)
    number, title = names.issue(change.issue_id)
    shown = f"#{number}" if number is not None else change.issue_id
    return f"{shown} {title}: {describe(change, names)}"
