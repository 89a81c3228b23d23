"""A sync session: one profile's cache, API client, rate limiter and known server features.

Pull, push, the command line and the app all need the same four collaborators wired the same
way (the limiter's log in the profile's cache, the client reporting every response to the
limiter, features detected once per server and remembered), so they are built in one place.

What the limiter learns about the server's limits (`sync.ratelimit.learned`) is remembered
beside the features, per server, each time it changes, and taken up by the next session before
its first request: otherwise every process starts at Free's 60 a minute, and waits for most of
a window when the log shared with the others already holds more than that.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass

import httpx

from accounts.credentials import ResolvedProfile
from cache import Cache, CacheError, open_cache
from sync.client import ApiClient, Observer
from sync.errors import Forbidden, NoCredentials, SyncError
from sync.features import ServerFeatures
from sync.foreground import Foreground
from sync.permissions import key_tag, learn_denied
from sync.probe import ProbePage, detect_features
from sync.ratelimit import RateLimiter, ResponseMeta
from sync.ratelimit.learned import Learned
from sync.remembered import keep_features, keep_limits, remembered_features, remembered_limits

PROBE_RETRIES = 2
"""Features are stored for good, so a probe that met a dropped connection, a 5xx or a garbled
body is sent again before that failure is taken for the server's answer."""


@dataclass
class SyncSession:
    """What every sync operation runs with; `features` may be refreshed in place."""

    profile: str
    server: str
    cache: Cache
    client: ApiClient
    limiter: RateLimiter
    features: ServerFeatures
    user: str | None = None
    """The id of the key's user once `/me` was asked (`sync.push.reconcile`), for this session only:
    the profile's key may change between sessions."""
    key_tag: str = ""
    """Tells this key's remembered permissions from another's (`sync.permissions`)."""
    probe_page: ProbePage | None = None
    """The features' probe's page of issues when this session probed: the first page a
    head-first start asks for, which it takes from here instead (sync.pull.head)."""
    foreground: Foreground | None = None
    """The user's keys, which a pull's requests wait for a pause in (sync.foreground); None
    where no one types (the command line)."""


async def known_features(
    cache: Cache,
    client: ApiClient,
    server: str,
    *,
    refresh: bool = False,
    keep_page: Callable[[ProbePage], None] | None = None,
) -> ServerFeatures:
    """The server's features, probed only when not remembered for this very server URL;
    `keep_page` hears the probe's page of issues when it was a whole first page."""
    remembered = None if refresh else remembered_features(cache, server)
    if remembered is not None:
        return remembered
    features = await detect_features(client, retries=PROBE_RETRIES, keep_page=keep_page)
    keep_features(cache, server, features)
    return features


def remember_features(session: SyncSession) -> None:
    """Store features learned during sync (a first tombstone, an order that broke)."""
    keep_features(session.cache, session.server, session.features)


def _limits_keeper(cache: Cache, server: str) -> Callable[[Learned], None]:
    def keep(learned: Learned) -> None:
        # Best effort: a busy cache costs the next process one answer's worth of learning,
        # and a limiter must never fail a request over it.
        with suppress(CacheError):
            keep_limits(cache, server, learned)

    return keep


def _learning(observer: Observer | None, cache: Cache, server: str, tag: str) -> Observer:
    """The caller's observer, after keeping a permission a 403 named as one this key lacks."""

    def observe(outcome: ResponseMeta | SyncError) -> None:
        if isinstance(outcome, Forbidden) and outcome.permission:
            with suppress(CacheError):
                learn_denied(cache, server, tag, outcome.permission)
        if observer is not None:
            observer(outcome)

    return observe


@asynccontextmanager
async def open_session(
    resolved: ResolvedProfile,
    *,
    cache: Cache | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    window_seconds: float = 60.0,
    clock: Callable[[], float] = time.time,
    timeout: float = 10.0,
    margin: float | None = None,
    observer: Observer | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
) -> AsyncIterator[SyncSession]:
    """Open the profile's session; the cache is closed on exit only if it was opened here.

    `margin` is the limiter's (default a 60th of a window); a server whose windows are scaled
    to a second needs more than that, as its whole-second `Date` and resets are ±0.5 s.
    `observer` is told every request's outcome and `sleep` makes the limiter's waits for a
    slot, so a caller can show its connection state and when it waits for the rate limit
    (`sync.connection.ConnectionWatch` gives both).
    """
    if resolved.key is None:
        raise NoCredentials(
            "no API key: run `tracker-tui login --server URL`, or set TRACKER_API_KEY"
        )
    owned = cache is None
    store = open_cache(resolved.cache_name) if cache is None else cache
    try:
        limiter = RateLimiter(
            store.requests,
            clock=clock,
            window_seconds=window_seconds,
            margin=margin,
            sleep=sleep or asyncio.sleep,
        )
        learned = remembered_limits(store, resolved.server)
        if learned is not None:
            limiter.restore(learned)
        limiter.on_learned = _limits_keeper(store, resolved.server)
        tag = key_tag(resolved.key.reveal())
        async with ApiClient(
            resolved.server,
            resolved.key,
            transport=transport,
            timeout=timeout,
            limiter=limiter,
            observer=_learning(observer, store, resolved.server, tag),
        ) as client:
            probed: list[ProbePage] = []
            features = await known_features(store, client, resolved.server, keep_page=probed.append)
            if features.plan and learned is None:
                # A cache from before limits were remembered: the plan `/me` named at the probe.
                # Remembered limits are newer (that probe's answer was stored with them).
                limiter.set_plan(features.plan)
            yield SyncSession(
                profile=resolved.cache_name,
                server=resolved.server,
                cache=store,
                client=client,
                limiter=limiter,
                features=features,
                key_tag=tag,
                probe_page=probed[0] if probed else None,
            )
    finally:
        if owned:
            store.close()
