"""The real sync engine behind the app's `SyncLink`: a session, the background loop, live updates.

The app must draw at once and stay usable offline, so the engine runs on a thread of its own
with its own asyncio loop: its SQLite writes (a pulled page, an outbox entry marked done) then
never hold up a keystroke. From there it opens the session (which may probe the server), runs
the loop that pushes after each local write and pulls when polled or poked by a webhook, and
posts `SyncStatusChanged` and `CacheChanged` (`App.post_message` is thread-safe). A server that
cannot be reached is a state ("offline"), retried after a pause, never an error dialog.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

import httpx

from cache import ACTIVE_STATES, Cache, CacheError
from sync.credentials import ResolvedProfile
from sync.engine import SyncLoop
from sync.errors import NetworkError, SyncError
from sync.live import LiveUpdates
from sync.pull import PullProgress, PullReport
from sync.session import SyncSession, open_session
from tracker_tui.data.cache_source import ME_STATE_KEY
from tracker_tui.errors import describe
from tracker_tui.messages import CacheChanged, SourceFailed, SyncStatusChanged
from tracker_tui.server_clock import ServerClock
from tracker_tui.sync_link import Poster

PROGRESS_REFRESH = 0.5
"""Seconds between re-reads the app is asked for while a pull lands page after page."""
RECONNECT_PAUSE = 15.0
"""Seconds between attempts to reach a server that could not be reached."""
STOP_TIMEOUT = 5.0


class EngineLink:
    """`SyncLink` over `sync.engine.SyncLoop`, with webhooks when `live` and the server has them."""

    def __init__(
        self,
        resolved: ResolvedProfile,
        cache: Cache,
        *,
        live: bool = False,
        transport: httpx.AsyncBaseTransport | None = None,
        window_seconds: float = 60.0,
        clock: Callable[[], float] = time.time,
        server_clock: ServerClock | None = None,
    ) -> None:
        self._resolved = resolved
        self._cache = cache
        self._live = live
        self._transport = transport
        self._window_seconds = window_seconds
        self._clock = clock
        self._server_clock = server_clock
        self._post: Poster | None = None
        self._thread: threading.Thread | None = None
        self._engine_loop: asyncio.AbstractEventLoop | None = None
        self._stopped: asyncio.Event | None = None
        self._sync_loop: SyncLoop | None = None
        self._session: SyncSession | None = None
        self._online = False
        self._last_sync: datetime | None = None
        self._progress: PullProgress | None = None
        self._last_refresh = float("-inf")

    async def start(self, post: Poster) -> None:
        self._post = post
        self._thread = threading.Thread(target=self._thread_main, name="sync-engine", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        self._call(self._poked)

    def _poked(self) -> None:
        """On the engine's loop: send soon, and show the new pending count (a SQLite read,
        kept off the app's loop)."""
        if self._sync_loop is not None:
            self._sync_loop.poke()
        self._report()

    async def stop(self) -> None:
        self._call(self._request_stop)
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, STOP_TIMEOUT)

    def _call(self, action: Callable[[], object]) -> None:
        """Run `action` on the engine's loop, if it runs."""
        loop = self._engine_loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(action)

    def _request_stop(self) -> None:
        if self._stopped is not None:
            self._stopped.set()
        if self._sync_loop is not None:
            self._sync_loop.stop()

    def _thread_main(self) -> None:
        asyncio.run(self._run())

    async def _run(self) -> None:
        self._engine_loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        self._report()
        while not self._stopped.is_set():
            try:
                await self._session_lifetime()
            except (SyncError, CacheError, OSError) as error:
                self._online = False
                self._report()
                if not isinstance(error, NetworkError):
                    self._tell_failure(error)
            if self._stopped.is_set():
                break
            try:
                await asyncio.wait_for(self._stopped.wait(), RECONNECT_PAUSE)
            except TimeoutError:
                continue

    async def _session_lifetime(self) -> None:
        async with open_session(
            self._resolved,
            cache=self._cache,
            transport=self._transport,
            window_seconds=self._window_seconds,
            clock=self._clock,
        ) as session:
            self._session = session
            self._online = True
            if session.features.me and session.cache.get_state(ME_STATE_KEY) is None:
                user = (await session.client.me()).value.user
                if user is not None:
                    session.cache.set_state(ME_STATE_KEY, user.id)
            loop = SyncLoop(session, listener=self._heard)
            self._sync_loop = loop
            loop.poke()
            loop.wake()
            assert self._stopped is not None
            if self._stopped.is_set():
                return
            if self._live:
                async with LiveUpdates(session, loop.wake):
                    await loop.run()
            else:
                await loop.run()

    def _heard(self, what: object) -> None:
        """A report from the loop: pull progress, a push or pull finished, or a pass failed."""
        if isinstance(what, PullProgress):
            self._progress = what
            now = time.monotonic()
            if now - self._last_refresh >= PROGRESS_REFRESH:
                self._last_refresh = now
                if self._post is not None:
                    self._post(CacheChanged())
                self._report()
            return
        self._progress = None
        if isinstance(what, Exception):
            self._online = not isinstance(what, NetworkError)
            if self._online:
                self._tell_failure(what)
        else:
            self._online = True
            if isinstance(what, PullReport):
                self._last_sync = self._server_now(what)
        if self._post is not None:
            self._post(CacheChanged())
        self._report()

    def _server_now(self, report: PullReport) -> datetime:
        """Now in the server's time, as the pull just measured it: "last sync 2m ago" is
        read against the same clock as the server's own stamps."""
        if self._server_clock is None:
            return datetime.now(UTC)
        if report.clock_offset is not None:
            self._server_clock.offset = report.clock_offset
        return self._server_clock.now()

    def _tell_failure(self, error: Exception) -> None:
        if self._post is not None:
            self._post(SourceFailed("sync", describe(error)))

    def _report(self) -> None:
        if self._post is None:
            return
        minute: int | None = None
        day: int | None = None
        if self._session is not None:
            minute, day = self._session.limiter.budget()
        self._post(
            SyncStatusChanged(
                profile=self._resolved.name or "env",
                online=self._online,
                pending_writes=len(self._cache.outbox(ACTIVE_STATES)),
                budget_minute=minute,
                budget_day=day,
                sync_done=self._progress.received if self._progress else 0,
                sync_total=self._progress.total if self._progress else None,
                last_sync=self._last_sync,
            )
        )
