"""What the engine knows of its link to the server, folded from the outcome of every request.

The app shows one connection state everywhere (status bar, sync panel, `sync` progress), and it
must be the truth as soon as the engine learns it: a request that could not reach the server
makes it offline at once, not when a pass gives up after its retries; a 401 is a refused key
wherever it came from (push, pull, opening the session). `ConnectionWatch` folds outcomes into
that state: the client tells it each request's outcome (`ApiClient(observer=watch.observe)`)
and the rate limiter waits for a slot through it (`RateLimiter(sleep=watch.sleep)`), so a long
wait for the rate limit is a state with a countdown rather than a progress bar that stopped.

Which state wins when several hold: a refused key (nothing will work until the user acts), then
no connection, then a wait for the rate limit, then a server that answers with errors, then
online; "connecting" until any answer at all.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import TYPE_CHECKING

from issuefields.frozen import Frozen
from sync.errors import (
    ApiError,
    Forbidden,
    NetworkError,
    RateLimited,
    ServerError,
    SyncError,
    Unauthorized,
)
from sync.ratelimit.headers import ResponseMeta

if TYPE_CHECKING:
    import asyncio

READ_PERMISSIONS = frozenset({"issues:read"})
"""Permissions without which no pull is worth running: a 403 naming one on a read refuses the
key for syncing. A 403 naming any other (projects, comments, webhooks, admin: the pull leaves
out what the key may not read, `sync.pull.engine`), none (another author's comment), or
refusing a write is about that request (a read-only key is a fine key), not the connection."""
READ_RESOURCES = frozenset({"issues"})
"""Where a 2xx read shows that the permissions above are granted again."""
RATE_WAIT_SHOWN = 1.0
"""Seconds a wait for the rate limit must last to be shown: shorter ones are the limiter's
ordinary pacing, which would only flicker."""


class Connection(StrEnum):
    CONNECTING = "connecting"
    """No answer heard yet."""
    ONLINE = "online"
    OFFLINE = "offline"
    """The last request could not reach the server."""
    SERVER_ERROR = "server_error"
    """The server answers, with 5xx."""
    KEY_REFUSED = "key_refused"
    """401 (revoked, expired, wrong key), or a 403 for a permission every sync needs."""
    RATE_LIMITED = "rate_limited"
    """Waiting for the rate limit (`ConnectionState.until`)."""


class ConnectionState(Frozen):
    """The engine's connection, as every screen shows it."""

    _fields = ("kind", "detail", "until", "retry_at")
    __slots__ = _fields
    kind: Connection
    detail: str | None
    """Why, in the server's or the network's words (the sync panel shows it)."""
    until: float | None
    """`time.monotonic()` when a wait for the rate limit ends (RATE_LIMITED only)."""
    retry_at: float | None
    """`time.monotonic()` when the engine tries again after a failure, when one is planned."""

    def __init__(
        self,
        kind: Connection = Connection.CONNECTING,
        detail: str | None = None,
        until: float | None = None,
        retry_at: float | None = None,
    ) -> None:
        self._init(kind, detail, until, retry_at)


def seconds_until(at: float, now: float) -> int:
    """Whole seconds from `now` until `at` (both monotonic), rounded up, never negative."""
    return max(0, math.ceil(at - now))


def _resource(meta: ResponseMeta) -> str:
    """The first segment of a request's path: "/issues/iss_1" is about "issues"."""
    return meta.path.split("?", 1)[0].strip("/").split("/", 1)[0]


async def _asyncio_sleep(seconds: float) -> None:
    """`asyncio.sleep`, imported when first waited on: the command line imports this module
    for its states, and the read commands never load asyncio (docs/architecture.md#start-up)."""
    import asyncio

    await asyncio.sleep(seconds)


class ConnectionWatch:
    """Folds request outcomes into a `ConnectionState`; `on_change` hears each new state.

    Used on one event loop (the engine's): `observe` is called by the client, `sleep` by the
    limiter, both on that loop.
    """

    def __init__(
        self,
        *,
        on_change: Callable[[ConnectionState], None] | None = None,
        shown_wait: float = RATE_WAIT_SHOWN,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        self._on_change = on_change
        self._shown_wait = shown_wait
        self._clock = clock
        self._sleep = sleep or _asyncio_sleep
        self._heard = False
        self._unreachable: str | None = None
        self._key_refused: str | None = None
        self._reads_refused: str | None = None
        self._server_error: str | None = None
        self._limited_until: float | None = None
        self._waits: dict[int, float] = {}
        self._tokens = itertools.count()
        self._recheck: asyncio.TimerHandle | None = None
        self.state = ConnectionState()

    def observe(self, outcome: ResponseMeta | SyncError) -> None:
        """One request's outcome: a 2xx's meta, or the error the request raised."""
        if isinstance(outcome, NetworkError):
            self._unreachable = f"cannot reach the server ({outcome})"
        elif isinstance(outcome, ResponseMeta | ApiError):
            self._answered(outcome)
        self._update()

    def failed(self, error: BaseException) -> None:
        """An error raised before any request told `observe` (the session could not open):
        only a network failure says anything about the connection."""
        if isinstance(error, NetworkError):
            self.observe(error)

    async def sleep(self, seconds: float) -> None:
        """The limiter's wait for a slot; a long one is shown as RATE_LIMITED meanwhile."""
        if seconds < self._shown_wait:
            await self._sleep(seconds)
            return
        token = next(self._tokens)
        self._waits[token] = self._clock() + seconds
        self._update()
        try:
            await self._sleep(seconds)
        finally:
            del self._waits[token]
            self._update()

    def _answered(self, outcome: ResponseMeta | ApiError) -> None:
        """Any answer means the server is reachable; what it said decides the rest."""
        self._heard = True
        self._unreachable = None
        meta = outcome.meta if isinstance(outcome, ApiError) else outcome
        reading = meta.method.upper() in ("GET", "HEAD")
        if isinstance(outcome, ServerError):
            self._server_error = f"the server failed ({outcome.message})"
            return
        self._server_error = None
        if isinstance(outcome, Unauthorized):
            self._key_refused = f"the server refused the API key ({outcome.message})"
        elif isinstance(outcome, Forbidden):
            if reading and outcome.permission in READ_PERMISSIONS:
                self._reads_refused = (
                    f"the API key may not read ({outcome.permission}): {outcome.message}"
                )
        elif isinstance(outcome, RateLimited):
            wait = outcome.retry_after if outcome.retry_after is not None else 1.0
            self._limited_until = self._clock() + wait
        elif isinstance(outcome, ResponseMeta):
            self._key_refused = None
            self._limited_until = None
            if reading and _resource(meta) in READ_RESOURCES:
                self._reads_refused = None

    def _current(self) -> ConnectionState:
        now = self._clock()
        if self._limited_until is not None and self._limited_until <= now:
            self._limited_until = None
        until = max([*self._waits.values(), self._limited_until or 0.0], default=0.0)
        refused = self._key_refused or self._reads_refused
        if refused:
            return ConnectionState(Connection.KEY_REFUSED, refused)
        if self._unreachable:
            return ConnectionState(Connection.OFFLINE, self._unreachable)
        if until > now:
            return ConnectionState(
                Connection.RATE_LIMITED, "waiting for the server's rate limit", until=until
            )
        if self._server_error:
            return ConnectionState(Connection.SERVER_ERROR, self._server_error)
        if self._heard:
            return ConnectionState(Connection.ONLINE)
        return ConnectionState()

    def _update(self) -> None:
        state = self._current()
        self._plan_recheck(state)
        if state != self.state:
            self.state = state
            if self._on_change is not None:
                self._on_change(state)

    def _plan_recheck(self, state: ConnectionState) -> None:
        """A 429's wait ends without any request telling us: look again when it does."""
        if self._recheck is not None:
            self._recheck.cancel()
            self._recheck = None
        if state.kind is Connection.RATE_LIMITED and self._limited_until is not None:
            import asyncio

            loop = asyncio.get_running_loop()
            delay = max(0.0, self._limited_until - self._clock())
            self._recheck = loop.call_later(delay + 0.01, self._update)
