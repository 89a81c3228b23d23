"""The connection state, folded from the outcome of every request to the reference service: a
refused key, a missing permission, a server that cannot be reached, a wait for the rate limit
with the moment it ends, and back to online (issue 14, defects 3 and 10)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from test_pull_support import FAST_RETRY, Service, resolved, served

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import Cache
from server.keys import create_key, revoke_key
from sync.connection import Connection, ConnectionState, ConnectionWatch
from sync.errors import Forbidden, NetworkError, Unauthorized
from sync.pull import pull
from sync.session import SyncSession, open_session

WINDOW = 2.0
"""The rate-limit "minute" of service and client alike, in seconds."""


@asynccontextmanager
async def watched(
    service: Service, cache: Cache, watch: ConnectionWatch, key: str | None = None
) -> AsyncIterator[SyncSession]:
    """A session whose client and limiter report to `watch`."""
    async with open_session(
        resolved(key or service.key),
        cache=cache,
        transport=service.transport(),
        window_seconds=WINDOW,
        observer=watch.observe,
        sleep=watch.sleep,
    ) as session:
        yield session


async def test_a_refused_key_shows_until_an_answer_proves_it_good(
    tmp_path: Path, cache: Cache
) -> None:
    seen: list[ConnectionState] = []
    watch = ConnectionWatch(on_change=seen.append)
    assert watch.state.kind is Connection.CONNECTING
    async with (
        served(tmp_path, 5, window_seconds=WINDOW) as service,
        watched(service, cache, watch) as session,
    ):
        await session.client.list_issues(page=1, per_page=5)
        assert watch.state.kind is Connection.ONLINE
        revoke_key(service.db, service.key)
        with pytest.raises(Unauthorized):
            await session.client.list_issues(page=1, per_page=5)
        assert watch.state.kind is Connection.KEY_REFUSED
        assert watch.state.detail is not None and "revoked" in watch.state.detail
        with pytest.raises(Unauthorized):
            await session.client.me()
        assert watch.state.kind is Connection.KEY_REFUSED
    assert [state.kind for state in seen] == [Connection.ONLINE, Connection.KEY_REFUSED]


async def test_a_key_without_read_permission_is_refused_one_without_comments_is_not(
    tmp_path: Path, cache: Cache
) -> None:
    """403 naming a permission every pull needs refuses the key; a 403 about anything else
    (comments) is one request's business."""
    watch = ConnectionWatch()
    async with served(tmp_path, 5, window_seconds=WINDOW) as service:
        no_comments = create_key(service.db, "Acme", "reader", ["issues:read", "projects:read"])
        async with watched(service, cache, watch, no_comments) as session:
            await session.client.list_issues(page=1, per_page=5)
            with pytest.raises(Forbidden):
                await session.client.list_comments(page=1, per_page=5)
            assert watch.state.kind is Connection.ONLINE
        no_issues = create_key(service.db, "Acme", "blind", ["comments:read"])
        async with watched(service, cache, watch, no_issues) as session:
            with pytest.raises(Forbidden):
                await session.client.list_issues(page=1, per_page=5)
            assert watch.state.kind is Connection.KEY_REFUSED
            assert watch.state.detail is not None and "issues:read" in watch.state.detail


async def test_a_server_that_cannot_be_reached_is_offline_at_the_first_failure(
    cache: Cache,
) -> None:
    watch = ConnectionWatch()
    away = ResolvedProfile(
        name=None,
        server="http://127.0.0.1:9/v1",
        workspace=None,
        key=Secret("trk_" + "x" * 40),
        key_source=KeySource.ENV,
    )
    with pytest.raises(NetworkError):
        async with open_session(away, cache=cache, observer=watch.observe, sleep=watch.sleep):
            pass
    assert watch.state.kind is Connection.OFFLINE
    assert watch.state.detail is not None and "cannot reach" in watch.state.detail


async def test_a_wait_for_the_rate_limit_is_a_state_that_says_when_it_ends(
    tmp_path: Path, cache: Cache
) -> None:
    """Another process of the profile spent this minute's requests: the pull waits for the
    window to pass, and meanwhile the state says so with the moment it ends, rather than a
    progress bar standing still; once the pull goes on, the state is online again."""
    seen: list[tuple[float, ConnectionState]] = []
    watch = ConnectionWatch(
        on_change=lambda state: seen.append((time.monotonic(), state)),
        shown_wait=WINDOW / 60,
    )
    async with (
        served(tmp_path, 5, plan="free", window_seconds=WINDOW) as service,
        watched(service, cache, watch) as session,
    ):
        now = time.time()
        for _ in range(session.limiter.plan.per_minute):
            cache.reserve_request(now, "other", [])
        began = time.monotonic()
        report = await pull(session, retry=FAST_RETRY)
    assert report.resources["issues"].received == 5
    waits = [(at, state) for at, state in seen if state.kind is Connection.RATE_LIMITED]
    assert waits, [state.kind for _, state in seen]
    at, first = waits[0]
    assert first.until is not None and 0.5 * WINDOW <= first.until - began <= 1.5 * WINDOW
    assert at - began < 0.5  # shown as the wait began, not when it ended
    assert seen[-1][1].kind is Connection.ONLINE
