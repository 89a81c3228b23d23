"""Live updates: the receiver's checks over real loopback HTTP, registration and its reuse
after a crash, and a server's delivery waking the loop into a pull."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from push_support import Wire, session_for

from cache import Resource
from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.engine import SyncLoop
from sync.live import STATE_KEY, LiveUpdates, WebhookReceiver
from sync.webhook_verify import MAX_BODY, signature

SECRET = "s3cret-for-tests"


def _delivery(
    delivery: str, *, secret: str = SECRET, age: float = 0
) -> tuple[bytes, dict[str, str]]:
    body = json.dumps({"id": delivery, "type": "issue.updated", "data": {"object": {}}}).encode()
    stamp = int(time.time() - age)
    headers = {
        "X-Tracker-Signature": signature(secret, stamp, body),
        "X-Tracker-Delivery": delivery,
        "X-Tracker-Event": "issue.updated",
        "Content-Type": "application/json",
    }
    return body, headers


@pytest.fixture
async def receiver() -> Any:
    woken: list[int] = []
    server = WebhookReceiver(SECRET, lambda: woken.append(1), clock=time.time)
    await server.start()
    yield server, woken
    await server.stop()


async def test_a_signed_delivery_wakes_once_and_its_replay_does_not(receiver: Any) -> None:
    server, woken = receiver
    body, headers = _delivery("evt_1")
    async with httpx.AsyncClient() as http:
        first = await http.post(server.url, content=body, headers=headers)
        again = await http.post(server.url, content=body, headers=headers)
    assert (first.status_code, again.status_code) == (200, 200)
    assert woken == [1] and server.stats.duplicates == 1


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ("forged", 401),
        ("stale", 401),
        ("unsigned", 401),
        ("tampered", 401),
        ("no-delivery-id", 400),
    ],
)
async def test_bad_deliveries_are_refused(receiver: Any, change: str, status: int) -> None:
    server, woken = receiver
    body, headers = _delivery(
        "evt_2",
        secret="wrong" if change == "forged" else SECRET,
        age=400 if change == "stale" else 0,
    )
    if change == "unsigned":
        del headers["X-Tracker-Signature"]
    if change == "tampered":
        body = body.replace(b"issue.updated", b"issue.deleted")
    if change == "no-delivery-id":
        del headers["X-Tracker-Delivery"]
    async with httpx.AsyncClient() as http:
        answer = await http.post(server.url, content=body, headers=headers)
    assert answer.status_code == status and woken == []


async def test_oversized_bodies_wrong_paths_and_methods_are_refused(receiver: Any) -> None:
    server, woken = receiver
    where = urlsplit(server.url)
    reader, writer = await asyncio.open_connection(where.hostname, where.port)
    head = f"POST {where.path} HTTP/1.1\r\nContent-Length: {MAX_BODY + 1}\r\n\r\n"
    writer.write(head.encode())
    await writer.drain()
    status_line = await reader.readline()
    writer.close()
    await writer.wait_closed()
    assert status_line.startswith(b"HTTP/1.1 413")
    async with httpx.AsyncClient() as http:
        assert (await http.get(server.url)).status_code == 405
        assert (await http.post(server.url + "x", content=b"{}")).status_code == 404
    assert woken == []


async def test_registration_is_reused_after_a_crash_and_removed_on_exit(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 1, plan="enterprise")
    wire = Wire(create_app(db, window_seconds=1.0))
    async with session_for(key, tmp_path / "c.db", transport=wire, window_seconds=1.0) as s:
        crashed = LiveUpdates(s, lambda: None)
        assert await crashed.start()
        await crashed.receiver.stop()
        async with LiveUpdates(s, lambda: None) as live:
            assert live.active and live.webhook_id == crashed.webhook_id
            hooks = (await s.client.list_webhooks()).value.data
            assert [(h.id, h.url) for h in hooks] == [(live.webhook_id, live.receiver.url)]
        assert (await s.client.list_webhooks()).value.data == []
        assert s.cache.state.get(STATE_KEY) is None


async def test_a_server_without_webhooks_means_polling_only(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 1, plan="enterprise")
    app = create_app(db, window_seconds=1.0)

    async def no_webhooks(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/v1/webhooks"):
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    wire = Wire(no_webhooks)
    async with (
        session_for(key, tmp_path / "c.db", transport=wire, window_seconds=1.0) as s,
        LiveUpdates(s, lambda: None) as live,
    ):
        assert not live.active and live.reason is not None


async def test_a_delivery_from_the_server_triggers_a_pull(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 2, plan="enterprise")
    with ServiceThread(create_app(db, window_seconds=1.0)) as service:
        async with session_for(
            key, tmp_path / "c.db", server=service.base_url, window_seconds=1.0
        ) as s:
            loop = SyncLoop(s, interval=3600, push_delay=0, wake_debounce=0.05)
            task = asyncio.create_task(loop.run())
            async with LiveUpdates(s, loop.wake) as live:
                assert live.active
                made = await s.client.create_issue({"title": "pushed to us"})
                for _ in range(500):
                    if s.cache.server.server_record(Resource.ISSUES, made.value.id) is not None:
                        break
                    await asyncio.sleep(0.02)
                assert s.cache.server.server_record(Resource.ISSUES, made.value.id) is not None
                assert live.receiver.stats.accepted >= 1
            loop.stop()
            await task
