"""`sync_once` (push, then pull) and the background `SyncLoop` against the service in process."""

from __future__ import annotations

import asyncio
from pathlib import Path

from push_support import Wire, session_for

from cache import Resource
from server.app import create_app
from server.seed import seed_workspace
from sync.engine import SyncLoop, sync_once
from sync.push import PushReport

WINDOW = 1.0


async def test_sync_once_pushes_then_pulls(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 5, plan="enterprise")
    wire = Wire(create_app(db, window_seconds=WINDOW))
    async with session_for(key, tmp_path / "c.db", transport=wire, window_seconds=WINDOW) as s:
        first = await sync_once(s)
        assert first.pull is not None and s.cache.local_count(Resource.ISSUES) == 5
        local = s.cache.create(Resource.ISSUES, {"title": "from here"})
        other = await s.client.create_issue({"title": "from elsewhere"})
        wire.reset()
        report = await sync_once(s)
        assert report.push.done == 1 and report.pull is not None
        assert wire.requests.index(("POST", "/v1/issues/bulk")) < wire.requests.index(
            ("GET", "/v1/issues")
        )
        server_id = s.cache.resolve_id(local)
        assert s.cache.server_record(Resource.ISSUES, server_id) is not None
        assert s.cache.server_record(Resource.ISSUES, other.value.id) is not None


async def test_the_loop_pushes_soon_after_a_poke_and_pulls_when_woken(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 2, plan="enterprise")
    wire = Wire(create_app(db, window_seconds=WINDOW))
    heard: list[object] = []
    async with session_for(key, tmp_path / "c.db", transport=wire, window_seconds=WINDOW) as s:
        loop = SyncLoop(s, listener=heard.append, interval=3600, push_delay=0, wake_debounce=0)
        task = asyncio.create_task(loop.run())
        s.cache.create(Resource.ISSUES, {"title": "poked"})
        loop.poke()
        while not any(isinstance(item, PushReport) and item.done for item in heard):
            await asyncio.sleep(0.01)
        await s.client.create_issue({"title": "made elsewhere"})
        loop.wake()
        while not any(type(item).__name__ == "PullReport" for item in heard):
            await asyncio.sleep(0.01)
        loop.stop()
        await task
        assert s.cache.local_count(Resource.ISSUES) == 4
