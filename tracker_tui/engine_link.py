"""The real sync engine behind the app's `SyncLink`: a session, the background loop, live updates.

The app must draw at once and stay usable offline, so the engine runs on a thread of its own
with its own asyncio loop: its SQLite writes (a pulled page, an outbox entry marked done) then
never hold up a keystroke. From there it opens the session (which may probe the server), runs
the loop that pushes after each local write and pulls when polled or poked by a webhook, and
posts `SyncStatusChanged` and `CacheChanged` (`App.post_message` is thread-safe).

The connection state in each report comes from the outcome of every request (a
`ConnectionWatch` the client and the limiter report to), so a request that fails anywhere
(push, pull, opening the session) shows on every screen at once. A server that cannot be
reached is a state ("offline"), retried with a jittered backoff, never an error dialog; "sync
now" cuts any wait short.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TypeVar, assert_never

import httpx

from accounts.credentials import ResolvedProfile
from cache import Cache, CacheError
from sync.admin import AdminApi
from sync.backfill_progress import BackfillProgress, pending
from sync.backfill_progress import progress as backfill_progress
from sync.connection import RATE_WAIT_SHOWN, Connection, ConnectionState, ConnectionWatch
from sync.engine import RETRY_BASE, RETRY_CAP, LoopEvent, PassFailed, RetryPlanned, SyncLoop
from sync.errors import Forbidden, NetworkError, RateLimited, ServerError, SyncError, Unauthorized
from sync.foreground import Foreground
from sync.live import LiveUpdates
from sync.permissions import KeyPermissions, learn_from_me, session_permissions
from sync.pull import PullProgress, PullReport, on_demand
from sync.pull.backfill import StepReport
from sync.push import Backoff, PushReport, StopReason
from sync.ratelimit import ResponseMeta
from sync.server_search import ServerHits, ServerSearch
from sync.session import SyncSession, open_session
from tracker_tui.admin_link import OFFLINE_NOTICE, AdminUnavailable
from tracker_tui.data.cache_source import ME_STATE_KEY
from tracker_tui.data.outbox_counts import OutboxCounts, count_outbox
from tracker_tui.errors import describe
from tracker_tui.messages import (
    CacheChanged,
    PermissionsChanged,
    ServerHitsArrived,
    SyncFailed,
    SyncStatusChanged,
)
from tracker_tui.server_clock import ServerClock
from tracker_tui.sync_link import Poster

T = TypeVar("T")

PROGRESS_REFRESH = 0.5
"""Seconds between status reports (the pull's progress) while a pull lands page after page."""
RELOAD_INTERVAL = 2.0
"""Seconds between re-reads (`CacheChanged`) the app is asked for while a pull lands page
after page or a backfill goes on step after step; the last is sent when the interval ends.
Each re-read costs the app's event loop 25 ms of CPU at 100,000 issues (every open screen
reads and redraws), and a key pressed meanwhile waits for it: a cold pull of 100,000 asked
for 1.5 a second before, 0.5 now (docs/architecture.md#keys-during-a-pull)."""
STOP_TIMEOUT = 5.0
IDLE_REPORT = 15.0
"""Seconds between reports while nothing happens, so the budget shown follows the windows."""
SHOWN_BY_STATE = (NetworkError, Unauthorized, ServerError, RateLimited)
"""Failures the connection state already shows: no notification repeats them."""


def changed_anything(pulled: PullReport) -> bool:
    """Whether a pull stored, changed or removed a record: a poll that found nothing new (most
    are) asks the app to re-read nothing."""
    if pulled.backfill is not None and pulled.backfill.received:
        return True
    return any(
        report.inserted or report.updated or report.deleted for report in pulled.resources.values()
    )


class EngineLink:
    """`SyncLink` over `sync.engine.SyncLoop`, with webhooks when `live` and the server has them.

    `window_seconds` is the length of the server's rate-limit "minute"; every wait of the
    engine (retries, backoff, the shortest rate-limit wait worth showing) scales with it, so
    tests against a fast service wait in proportion.
    """

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
        timeout: float = 10.0,
        reload_interval: float = RELOAD_INTERVAL,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._resolved = resolved
        self._cache = cache
        self._live = live
        self._transport = transport
        self._window_seconds = window_seconds
        self._clock = clock
        self._server_clock = server_clock
        self._timeout = timeout
        scale = window_seconds / 60.0
        self._retry = Backoff(base=RETRY_BASE * scale, cap=RETRY_CAP * scale)
        self._push_backoff = Backoff(base=0.5 * scale, cap=30.0 * scale)
        self._pull_retry = Backoff(base=0.5 * scale, cap=30.0 * scale)
        self._idle_report = max(1.0, IDLE_REPORT * scale)
        self._watch = ConnectionWatch(
            on_change=self._connection_changed, shown_wait=RATE_WAIT_SHOWN * scale
        )
        self._post: Poster | None = None
        self._thread: threading.Thread | None = None
        self._engine_loop: asyncio.AbstractEventLoop | None = None
        self._stopped: asyncio.Event | None = None
        self._wakeup: asyncio.Event | None = None
        self._sync_loop: SyncLoop | None = None
        self._session: SyncSession | None = None
        self.foreground = Foreground()
        """The user's keys, which this engine's pulls wait for a pause in."""
        self._reconnect_at: float | None = None
        self._outbox: OutboxCounts | None = None
        self._backfill: BackfillProgress | None = None
        self._last_sync: datetime | None = None
        self._progress: PullProgress | None = None
        self._last_refresh = float("-inf")
        self._reload_interval = reload_interval
        self._monotonic = monotonic
        self._last_reload = float("-inf")
        self._reload_later: asyncio.TimerHandle | None = None
        self._key_refusal_told: str | None = None
        self._permissions_told: KeyPermissions | None = None
        self._fetches: set[asyncio.Future[None]] = set()
        self._search: ServerSearch | None = None
        self._searched = 0

    async def start(self, post: Poster) -> None:
        self._post = post
        self._thread = threading.Thread(target=self._thread_main, name="sync-engine", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        self._call(self._poked)

    def sync_now(self) -> None:
        self._call(self._sync_now)

    def issue_opened(self, issue_id: str) -> None:
        self._call(lambda: self._fetch_now(issue_id))

    def search_typed(self, text: str) -> None:
        self._call(lambda: self._search_typed(text))

    def user_typed(self) -> None:
        """Not through the engine's loop: the pull reads the time of the last key when it is
        about to ask for a page (sync.foreground)."""
        self.foreground.typed()

    def _search_typed(self, text: str) -> None:
        """On the engine's loop: hand the text to the debounced server search."""
        if self._session is None:
            return
        if self._search is None:
            self._search = ServerSearch(self._session, self._hits)
        self._search.typed(text)

    def _hits(self, hits: ServerHits) -> None:
        if self._post is not None:
            self._post(ServerHitsArrived(hits.text, len(hits.ids), hits.new))
            self._report()  # the legend names the new marker

    def _fetch_now(self, issue_id: str) -> None:
        """On the engine's loop: the opened issue's comments, as a task of their own beside
        the loop, so they go out before the backfill's next request."""
        session = self._session
        if session is None or not on_demand.wanted(session):
            return
        task = asyncio.ensure_future(self._comments_now(session, issue_id))
        self._fetches.add(task)
        task.add_done_callback(self._fetches.discard)

    async def _comments_now(self, session: SyncSession, issue_id: str) -> None:
        try:
            await on_demand.issue_comments(session, issue_id)
        except (SyncError, CacheError):
            return  # the connection state shows a failure; the bulk pull brings them later
        if self._post is not None:
            self._post(CacheChanged())

    async def admin(self, work: Callable[[AdminApi], Awaitable[T]]) -> T:
        """Run `work` on the engine's session, on the engine's thread (`AdminLink`)."""
        loop = self._engine_loop
        if loop is None or loop.is_closed() or self._session is None:
            raise AdminUnavailable(OFFLINE_NOTICE)
        done = asyncio.run_coroutine_threadsafe(self._admin(work), loop)
        return await asyncio.wrap_future(done)

    async def _admin(self, work: Callable[[AdminApi], Awaitable[T]]) -> T:
        session = self._session
        if session is None:
            raise AdminUnavailable(OFFLINE_NOTICE)
        return await work(AdminApi(session.client))

    def _poked(self) -> None:
        """On the engine's loop: send soon, and show the new pending count (a SQLite read,
        kept off the app's loop)."""
        if self._sync_loop is not None:
            self._sync_loop.poke()
        self._report()

    def _sync_now(self) -> None:
        """On the engine's loop: push and pull now, or reconnect now when the session is
        down."""
        if self._sync_loop is not None:
            self._sync_loop.sync_now()
        elif self._wakeup is not None:
            self._wakeup.set()
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
        if self._wakeup is not None:
            self._wakeup.set()
        if self._sync_loop is not None:
            self._sync_loop.stop()

    def _thread_main(self) -> None:
        asyncio.run(self._run())

    async def _run(self) -> None:
        """Open a session and run it; when it cannot open or ends on an error, try again after
        a backoff (sooner when the user asks to sync now)."""
        self._engine_loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        self._wakeup = asyncio.Event()
        self._report()
        ticker = asyncio.create_task(self._report_now_and_then())
        try:
            await self._sessions()
        finally:
            ticker.cancel()

    async def _report_now_and_then(self) -> None:
        """A report every `IDLE_REPORT` seconds besides those events cause: the budget left
        grows back as the windows pass, with no request to tell it."""
        while True:
            await asyncio.sleep(self._idle_report)
            self._report()

    async def _sessions(self) -> None:
        assert self._stopped is not None and self._wakeup is not None
        failures = 0
        while not self._stopped.is_set():
            try:
                await self._session_lifetime()
            except (SyncError, CacheError, OSError) as error:
                self._watch.failed(error)
                self._tell_failure(error)
            if self._session is not None:
                failures = 0  # it did open: back off from the start again
            if self._search is not None:
                self._search.cancel()
            self._sync_loop = self._session = self._search = None
            if self._stopped.is_set():
                break
            failures += 1
            self._reconnect_at = time.monotonic() + self._retry.delay(failures)
            self._report()
            self._wakeup.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._wakeup.wait(), max(0.0, self._reconnect_at - time.monotonic())
                )
            self._reconnect_at = None

    async def _session_lifetime(self) -> None:
        async with open_session(
            self._resolved,
            cache=self._cache,
            transport=self._transport,
            window_seconds=self._window_seconds,
            clock=self._clock,
            timeout=self._timeout,
            observer=self._observe,
            sleep=self._watch.sleep,
        ) as session:
            session.foreground = self.foreground
            self._session = session
            unknown = session.cache.state.get(ME_STATE_KEY) is None
            me = await learn_from_me(session, who=unknown)
            if unknown and me is not None and me.user is not None:
                session.cache.state.set(ME_STATE_KEY, me.user.id)
            self._tell_permissions()
            loop = SyncLoop(
                session,
                listener=self._heard,
                retry=self._retry,
                push_backoff=self._push_backoff,
                pull_retry=self._pull_retry,
                offline=lambda: self._watch.state.kind is Connection.OFFLINE,
            )
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

    def _heard(self, event: LoopEvent) -> None:
        """A report from the loop: pull progress, a push or pull finished, or a pass failed."""
        reread: Callable[[], None] | None = self._reload_now
        match event:
            case PullProgress():
                self._progress = event
                self._reload_soon()
                now = self._monotonic()
                if now - self._last_refresh >= PROGRESS_REFRESH:
                    self._last_refresh = now
                    self._report()
                return
            case RetryPlanned():
                self._report()  # the countdown to the next attempt
                return
            case PassFailed(error=error):
                self._tell_failure(error)
            case PullReport():
                self._last_sync = self._server_now(event)
                if not changed_anything(event):
                    reread = None  # the last sync moved; nothing to re-read
            case PushReport():
                self._tell_key_refusal(event)
            case StepReport():
                # a stretch of the backfill ended: re-read (paced, as its pages are), and
                # report where it stands
                reread = self._reload_soon
            case _:
                assert_never(event)
        self._tell_permissions()
        self._progress = None
        if reread is not None:
            reread()
        self._report()

    def _reload_soon(self) -> None:
        """Ask the app to re-read now if it has not been asked for `reload_interval`, or else
        once that interval is over (on the engine's loop): pages landing back to back cost
        the app one re-read an interval, and the last of them is never left unread."""
        if self._reload_later is not None:
            return
        wait = self._last_reload + self._reload_interval - self._monotonic()
        loop = self._engine_loop
        if wait <= 0 or loop is None or loop.is_closed():
            self._reload_now()
            return
        self._reload_later = loop.call_later(wait, self._reload_now)

    def _reload_now(self) -> None:
        """Ask the app to re-read now (a pull or a push finished, or a paced re-read is due)."""
        if self._reload_later is not None:
            self._reload_later.cancel()
            self._reload_later = None
        self._last_reload = self._monotonic()
        if self._post is not None:
            self._post(CacheChanged())

    def _observe(self, outcome: ResponseMeta | SyncError) -> None:
        """Every request's outcome: the connection's state, and a 403 that named a permission
        (the session has stored it by now) is told to the app at once."""
        self._watch.observe(outcome)
        if isinstance(outcome, Forbidden) and outcome.permission:
            loop = self._engine_loop
            if loop is not None and not loop.is_closed():
                loop.call_soon(self._tell_permissions)

    def _tell_permissions(self) -> None:
        """Tell the app what the key may do when that changed since it was last told (a
        state read of the cache, on the engine's thread)."""
        session = self._session
        if session is None or self._post is None:
            return
        try:
            known = session_permissions(session)
        except CacheError:
            return
        if known != self._permissions_told:
            self._permissions_told = known
            self._post(PermissionsChanged(known))

    def _connection_changed(self, state: ConnectionState) -> None:
        """Called by the watch in the middle of a request: report soon, not from in there."""
        loop = self._engine_loop
        if loop is not None and not loop.is_closed():
            loop.call_soon(self._report)

    def _server_now(self, report: PullReport) -> datetime:
        """Now in the server's time, as the pull just measured it: "last sync 2m ago" is
        read against the same clock as the server's own stamps."""
        if self._server_clock is None:
            return datetime.now(UTC)
        if report.clock_offset is not None:
            self._server_clock.offset = report.clock_offset
        return self._server_clock.now()

    def _tell_key_refusal(self, pushed: PushReport) -> None:
        """Writes the key may not make wait in the outbox as pending, retried at the loop's
        pace; the counts alone would not say they never go. Told once per reason (a refused
        key, 401, is the connection's state and told there)."""
        stop = pushed.stopped
        if stop is None or stop.reason is not StopReason.KEY_REFUSED:
            return
        reason = stop.message
        if reason == self._key_refusal_told:
            return
        self._key_refusal_told = reason
        if self._post is not None and self._watch.state.kind is not Connection.KEY_REFUSED:
            self._post(SyncFailed(f"{reason}. Your writes wait in the outbox."))

    def _tell_failure(self, error: Exception) -> None:
        """A failure the connection state does not already show becomes a notification."""
        if isinstance(error, SHOWN_BY_STATE) or self._post is None:
            return
        if isinstance(error, Forbidden) and self._watch.state.kind is Connection.KEY_REFUSED:
            return
        self._post(SyncFailed(describe(error)))

    def _connection(self) -> ConnectionState:
        """The watch's state, with when the engine tries again if it waits to."""
        retry_at = self._reconnect_at
        if retry_at is None and self._sync_loop is not None:
            retry_at = self._sync_loop.retry_at
        state = self._watch.state
        if state.kind is Connection.ONLINE or retry_at is None:
            return state
        return state.replace(retry_at=retry_at)

    def _report(self) -> None:
        if self._post is None:
            return
        minute: int | None = None
        day: int | None = None
        day_limit: int | None = None
        if self._session is not None:
            minute, day = self._session.limiter.budget()
            day_limit = self._session.limiter.learned().per_day
        with contextlib.suppress(CacheError):  # the last counts stand; the next report retries
            self._outbox = count_outbox(self._cache)
            self._backfill = backfill_progress(self._cache) if pending(self._cache) else None
            self._searched = self._cache.server.searched_count() if self._backfill else 0
        self._post(
            SyncStatusChanged(
                profile=self._resolved.name or "env",
                connection=self._connection(),
                outbox=self._outbox,
                budget_minute=minute,
                budget_day=day,
                day_limit=day_limit,
                progress=self._progress,
                last_sync=self._last_sync,
                backfill=self._backfill,
                searched=self._searched,
            )
        )
