"""`sync_once` (push, then pull) and the background `SyncLoop` against the service in process."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from push_support import Wire, session_for

from cache import ACTIVE_STATES, EntryState, IssueFilter, IssueSort, Resource
from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.engine import PassFailed, RetryPlanned, SyncLoop, sync_once
from sync.errors import NetworkError
from sync.push import Backoff, PushReport, StopReason
from sync.push.lock import PushLock
from sync.session import SyncSession

WINDOW = 1.0


async def test_sync_once_pushes_then_pulls(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 5, plan="enterprise")
    wire = Wire(create_app(db, window_seconds=WINDOW))
    async with session_for(key, tmp_path / "c.db", transport=wire, window_seconds=WINDOW) as s:
        first = await sync_once(s)
        assert first.pull is not None and s.cache.server.local_count(Resource.ISSUES) == 5
        local = s.cache.outbox.create(Resource.ISSUES, {"title": "from here"})
        other = await s.client.create_issue({"title": "from elsewhere"})
        wire.reset()
        report = await sync_once(s)
        assert report.push.done == 1 and report.pull is not None
        assert wire.requests.index(("POST", "/v1/issues/bulk")) < wire.requests.index(
            ("GET", "/v1/issues")
        )
        server_id = s.cache.outbox.resolve_id(local)
        assert s.cache.server.server_record(Resource.ISSUES, server_id) is not None
        assert s.cache.server.server_record(Resource.ISSUES, other.value.id) is not None


async def test_another_process_pushing_does_not_keep_this_one_from_pulling(
    tmp_path: Path,
) -> None:
    """While another pusher holds the profile's push lock, the push stops as `BUSY` (the other
    sends these writes) and `sync_once` pulls all the same; decided by the stop's reason."""
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 3, plan="enterprise")
    wire = Wire(create_app(db, window_seconds=WINDOW))
    async with session_for(key, tmp_path / "c.db", transport=wire, window_seconds=WINDOW) as s:
        s.cache.outbox.create(Resource.ISSUES, {"title": "queued here"})
        with PushLock(s.cache.path) as other:
            assert other.acquired
            report = await sync_once(s)
        assert report.push.stopped_for(StopReason.BUSY) and report.push.done == 0
        assert report.pull is not None
        assert report.pull.resources["issues"].received == 3
        assert [e.state for e in s.cache.outbox.entries()] == [EntryState.PENDING]


async def test_the_loop_pushes_soon_after_a_poke_and_pulls_when_woken(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 2, plan="enterprise")
    wire = Wire(create_app(db, window_seconds=WINDOW))
    heard: list[object] = []
    async with session_for(key, tmp_path / "c.db", transport=wire, window_seconds=WINDOW) as s:
        loop = SyncLoop(s, listener=heard.append, interval=3600, push_delay=0, wake_debounce=0)
        task = asyncio.create_task(loop.run())
        s.cache.outbox.create(Resource.ISSUES, {"title": "poked"})
        loop.poke()
        while not any(isinstance(item, PushReport) and item.done for item in heard):
            await asyncio.sleep(0.01)
        await s.client.create_issue({"title": "made elsewhere"})
        loop.wake()
        while not any(type(item).__name__ == "PullReport" for item in heard):
            await asyncio.sleep(0.01)
        loop.stop()
        await task
        assert s.cache.server.local_count(Resource.ISSUES) == 4


FAST_RETRY = Backoff(base=0.05, cap=0.4)
"""The loop's pace between attempts, scaled down (the app's is 1 s doubling to 60 s)."""
PUSH_BACKOFF = Backoff(base=0.01, cap=0.05)
PULL_RETRY = Backoff(tries=2, base=0.01, cap=0.05)


def fast_loop(session: SyncSession, heard: list[object]) -> SyncLoop:
    return SyncLoop(
        session,
        listener=heard.append,
        interval=3600,
        push_delay=0,
        wake_debounce=0,
        retry=FAST_RETRY,
        push_backoff=PUSH_BACKOFF,
        pull_retry=PULL_RETRY,
    )


async def eventually(condition: Callable[[], bool], seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not in time"
        await asyncio.sleep(0.02)


async def test_a_write_queued_while_the_server_is_down_is_sent_when_it_returns(
    tmp_path: Path,
) -> None:
    """One poke while the server is stopped: the push fails, and the loop keeps trying with a
    capped backoff until the server, started again on the same port, takes the write; no
    other edit or poke is needed (issue 14, defect 2)."""
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 3, plan="enterprise")
    service = ServiceThread(create_app(db, window_seconds=WINDOW)).__enter__()
    port = urlsplit(service.base_url).port
    assert port is not None
    heard: list[object] = []
    try:
        async with session_for(
            key, tmp_path / "c.db", server=service.base_url, window_seconds=WINDOW, timeout=2
        ) as s:
            issue_id = await edited_once_the_server_is_gone(s, service, "written offline")
            loop = fast_loop(s, heard)
            task = asyncio.create_task(loop.run())
            loop.poke()
            await eventually(lambda: loop.retry_at is not None)
            await asyncio.sleep(1.0)  # down for a while: attempts back off, capped
            tries = loop.passes
            assert 2 <= tries <= 12
            service = ServiceThread(create_app(db, window_seconds=WINDOW), port=port).__enter__()
            await eventually(lambda: not s.cache.outbox.entries(ACTIVE_STATES))
            await eventually(lambda: loop.retry_at is None)
            loop.stop()
            await task
        answer = httpx.get(
            f"{service.base_url}/issues/{issue_id}",
            headers={"Authorization": f"Bearer {key}"},
            timeout=5,
        )
        assert answer.json()["title"] == "written offline"
        assert any(
            isinstance(item, PushReport) and item.stopped_for(StopReason.UNREACHABLE)
            for item in heard
        )
    finally:
        service.__exit__(None, None, None)


class Counted(httpx.AsyncBaseTransport):
    """A real HTTP transport that counts the requests it was asked to send."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self.requests = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def counted_session(
    key: str, tmp_path: Path, service: ServiceThread, wire: Counted
) -> AbstractAsyncContextManager[SyncSession]:
    """A session on the service's workspace whose requests `wire` counts."""
    return session_for(
        key,
        tmp_path / "c.db",
        server=service.base_url,
        transport=wire,
        window_seconds=WINDOW,
        timeout=2,
    )


async def edited_once_the_server_is_gone(s: SyncSession, service: ServiceThread, title: str) -> str:
    """Sync, stop the server, then retitle an issue: the edit waits in the outbox. Its id."""
    await sync_once(s)
    service.__exit__(None, None, None)
    issue_id = sorted(local_issue_ids(s))[0]
    s.cache.outbox.update(Resource.ISSUES, issue_id, {"title": title})
    return issue_id


async def test_polls_due_while_the_server_is_down_wait_for_the_retry(tmp_path: Path) -> None:
    """With the server gone, the loop's next attempt is its retry, however often polls fall
    due meanwhile: a failed push skips its pass's pull, so the poll's time was never moved on,
    and a poll already due started a pass at once, again and again (the app sent a pending
    comment 13 times a second while its status line said "retry in 49 s")."""
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 3, plan="enterprise")
    service = ServiceThread(create_app(db, window_seconds=WINDOW)).__enter__()
    heard: list[object] = []
    wire = Counted()
    try:
        async with counted_session(key, tmp_path, service, wire) as s:
            await edited_once_the_server_is_gone(s, service, "written offline")
            sent_before = wire.requests
            loop = SyncLoop(
                s,
                listener=heard.append,
                interval=0.02,
                push_delay=0,
                wake_debounce=0,
                retry=Backoff(base=0.2, cap=0.4, random=lambda: 0.5),
                push_backoff=PUSH_BACKOFF,
                pull_retry=PULL_RETRY,
            )
            task = asyncio.create_task(loop.run())
            loop.poke()
            await asyncio.sleep(1.2)
            loop.stop()
            await task
            assert len(s.cache.outbox.entries(ACTIVE_STATES)) == 1
    finally:
        service.__exit__(None, None, None)
    # Retries 0.15, 0.3, 0.3, ... s apart: five passes in 1.2 s, each one request.
    assert 3 <= loop.passes <= 7
    assert wire.requests - sent_before == loop.passes
    planned = [item for item in heard if isinstance(item, RetryPlanned)]
    assert len(planned) == loop.passes


async def test_the_first_pass_after_the_server_died_plans_its_retry_after_one_request(
    tmp_path: Path,
) -> None:
    """An edit made just after the server died, before any request noticed: the pass sends one
    request, skips the pull (it would fail the same way), and hands over to the loop's backoff
    with the write pending; the retry after the server returns sends it. Before, the push
    retried its conflict listing five times in each of five rounds: 25 requests (~40 s at the
    app's pace) before the loop planned its retry."""
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 3, plan="enterprise")
    service = ServiceThread(create_app(db, window_seconds=WINDOW)).__enter__()
    port = urlsplit(service.base_url).port
    assert port is not None
    wire = Counted()
    heard: list[object] = []
    try:
        async with counted_session(key, tmp_path, service, wire) as s:
            await edited_once_the_server_is_gone(s, service, "just after it died")
            loop = fast_loop(s, heard)
            sent_before = wire.requests
            task = asyncio.create_task(loop.run())
            loop.poke()
            await eventually(lambda: any(isinstance(item, RetryPlanned) for item in heard))
            tried = wire.requests - sent_before
            first_pass = heard[
                : next(i for i, x in enumerate(heard) if isinstance(x, RetryPlanned))
            ]
            [pushed] = [item for item in first_pass if isinstance(item, PushReport)]
            service = ServiceThread(create_app(db, window_seconds=WINDOW), port=port).__enter__()
            await eventually(lambda: not s.cache.outbox.entries(ACTIVE_STATES))
            loop.stop()
            await task
        assert tried == 1
        assert pushed.stopped_for(StopReason.UNREACHABLE) and pushed.remaining == 1
        assert [type(item).__name__ for item in first_pass] == ["PushReport"]
    finally:
        service.__exit__(None, None, None)


async def test_a_failed_pass_is_told_as_a_typed_event_after_its_retry_is_planned(
    tmp_path: Path,
) -> None:
    """The pull of a pass meets a server that is gone: the listener hears the planned retry,
    then `PassFailed` carrying the error (it was told the bare exception, among objects)."""
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 2, plan="enterprise")
    service = ServiceThread(create_app(db, window_seconds=WINDOW)).__enter__()
    heard: list[object] = []
    try:
        async with counted_session(key, tmp_path, service, Counted()) as s:
            await sync_once(s)
            service.__exit__(None, None, None)
            loop = fast_loop(s, heard)
            task = asyncio.create_task(loop.run())
            loop.wake()
            await eventually(lambda: any(isinstance(item, PassFailed) for item in heard))
            loop.stop()
            await task
    finally:
        service.__exit__(None, None, None)
    kinds = [type(item).__name__ for item in heard]
    assert kinds[: kinds.index("PassFailed") + 1] == ["PushReport", "RetryPlanned", "PassFailed"]
    failed = heard[kinds.index("PassFailed")]
    assert isinstance(failed, PassFailed) and isinstance(failed.error, NetworkError)
    assert not failed.error.request_sent


async def test_a_write_the_server_refused_is_not_retried(tmp_path: Path) -> None:
    """A failed write waits for the user (retry, edit, discard in the sync panel): the loop
    does not send it again on its own, and plans no retry for it."""
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 2, plan="enterprise")
    wire = Wire(create_app(db, window_seconds=WINDOW))
    heard: list[object] = []
    async with session_for(key, tmp_path / "c.db", transport=wire, window_seconds=WINDOW) as s:
        await sync_once(s)
        issue_id = sorted(local_issue_ids(s))[0]
        s.cache.outbox.update(Resource.ISSUES, issue_id, {"title": ""})  # the service refuses it
        loop = fast_loop(s, heard)
        task = asyncio.create_task(loop.run())
        loop.poke()
        await eventually(lambda: any(isinstance(i, PushReport) and i.failed for i in heard))
        wire.reset()
        await asyncio.sleep(1.0)
        loop.stop()
        await task
        assert [entry.state for entry in s.cache.outbox.entries(ACTIVE_STATES)] == [
            EntryState.FAILED
        ]
    assert loop.retry_at is None
    assert wire.count("PATCH", issue_id) == 0 and wire.count("POST", "/issues/bulk") == 0


def local_issue_ids(session: SyncSession) -> set[str]:
    return {row.id for row in session.cache.reads.window(IssueFilter(), IssueSort(), 0, 1000)}
