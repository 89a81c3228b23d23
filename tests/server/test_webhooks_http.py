"""Webhooks over HTTP: CRUD, permissions, isolation, URL policy, and real deliveries.

Deliveries go to a real receiver on a loopback port, which checks each signature with the
secret the API answered. The app's clock is the fake one; the receiver checks signatures
against it, and retries fall due when a test moves it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from server_support import FakeClock, MakeKey, assert_error, bearer, create_issue
from webhook_receiver import Receiver, Request, receiving

from server.app import create_app
from server.webhook_delivery import MAX_IN_FLIGHT_PER_WEBHOOK, WebhookDispatcher

OpenClient = Callable[..., Any]


@pytest.fixture
async def receiver(clock: FakeClock) -> AsyncIterator[Receiver]:
    async with receiving() as listening:
        listening.now = lambda: clock.now.timestamp()
        yield listening


async def register(
    client: httpx.AsyncClient, receiver: Receiver, events: list[str] | None = None
) -> dict[str, Any]:
    """A webhook to the receiver; the receiver learns the secret from the answer."""
    body = {"url": receiver.url(), "events": events or ["*"]}
    response = await client.post("/webhooks", json=body)
    assert response.status_code == 201, response.text
    hook: dict[str, Any] = response.json()
    receiver.secret = hook["secret"]
    return hook


async def drain(app: FastAPI) -> None:
    dispatcher: WebhookDispatcher = app.state.webhooks
    await dispatcher.drain(timeout=10)


async def test_crud_shows_the_secret_once(client: httpx.AsyncClient, clock: FakeClock) -> None:
    created = await client.post(
        "/webhooks", json={"url": "http://127.0.0.1:9/a", "events": ["issue.created"]}
    )
    assert created.status_code == 201
    hook = created.json()
    assert hook["id"].startswith("whk_") and hook["secret"].startswith("whsec_")
    clock.advance(seconds=1)
    chosen = await client.post(
        "/webhooks", json={"url": "http://localhost:9/b", "events": ["*"], "secret": "mine"}
    )
    assert chosen.json()["secret"] == "mine"

    fetched = (await client.get(f"/webhooks/{hook['id']}")).json()
    assert "secret" not in fetched
    assert fetched == {k: v for k, v in hook.items() if k != "secret"}
    listed = (await client.get("/webhooks", params={"per_page": 1})).json()
    assert listed["pagination"] == {"page": 1, "per_page": 1, "total": 2}
    assert listed["data"] == [fetched]
    assert all("secret" not in h for h in (await client.get("/webhooks")).json()["data"])

    clock.advance(seconds=1)
    patched = await client.patch(
        f"/webhooks/{hook['id']}", json={"events": ["issue.updated", "issue.deleted"]}
    )
    assert patched.status_code == 200
    assert patched.json()["events"] == ["issue.updated", "issue.deleted"]
    assert patched.json()["updated_at"] > hook["updated_at"]
    since = await client.get("/webhooks", params={"updated_after": hook["updated_at"]})
    assert [h["id"] for h in since.json()["data"]] == [chosen.json()["id"], hook["id"]]

    deleted = await client.delete(f"/webhooks/{hook['id']}")
    assert deleted.status_code == 200 and deleted.json()["id"] == hook["id"]
    assert_error(await client.get(f"/webhooks/{hook['id']}"), 404, "not_found")
    assert_error(await client.delete(f"/webhooks/{hook['id']}"), 404, "not_found")


async def test_webhooks_need_the_permission_and_stay_in_their_workspace(
    client: httpx.AsyncClient,
    other: httpx.AsyncClient,
    open_client: OpenClient,
    make_key: MakeKey,
) -> None:
    hook = (
        await client.post("/webhooks", json={"url": "http://127.0.0.1:9/a", "events": ["*"]})
    ).json()
    path = f"/webhooks/{hook['id']}"
    async with open_client(make_key(permissions=["issues:read", "admin"])) as lacking:
        for response in [
            await lacking.get("/webhooks"),
            await lacking.post("/webhooks", json={"url": "http://127.0.0.1:9/", "events": ["*"]}),
            await lacking.get(path),
            await lacking.patch(path, json={"events": ["*"]}),
            await lacking.delete(path),
            await lacking.get(f"{path}/deliveries"),
        ]:
            error = assert_error(response, 403, "forbidden")
            assert "webhooks:manage" in error["message"]
    for response in [
        await other.get(path),
        await other.patch(path, json={"events": ["*"]}),
        await other.delete(path),
        await other.get(f"{path}/deliveries"),
    ]:
        assert_error(response, 404, "not_found")
    assert (await other.get("/webhooks")).json()["data"] == []
    assert (await client.get(path)).status_code == 200


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "http://10.0.0.1/hook", "events": ["*"]}, "url"),
        ({"url": "http://192.168.1.20:8080/hook", "events": ["*"]}, "url"),
        ({"url": "ftp://127.0.0.1/hook", "events": ["*"]}, "url"),
        ({"url": "not a url", "events": ["*"]}, "url"),
        ({"url": "http://127.0.0.1/hook", "events": ["issue.archived"]}, "events"),
        ({"url": "http://127.0.0.1/hook", "events": []}, "events"),
        ({"url": "http://127.0.0.1/hook", "events": ["*"], "secret": ""}, "secret"),
        ({"url": "http://127.0.0.1/hook", "events": ["*"], "colour": "red"}, "colour"),
    ],
)
async def test_bad_webhooks_are_refused_naming_the_member(
    client: httpx.AsyncClient, body: dict[str, Any], field: str
) -> None:
    error = assert_error(await client.post("/webhooks", json=body), 400, "invalid_request")
    assert field in error["message"]
    hook = (
        await client.post("/webhooks", json={"url": "http://127.0.0.1:9/", "events": ["*"]})
    ).json()
    changes = body if field == "url" else {k: v for k, v in body.items() if k != "url"}
    patched = await client.patch(f"/webhooks/{hook['id']}", json=changes)
    assert_error(patched, 400, "invalid_request")
    assert (await client.get(f"/webhooks/{hook['id']}")).json()["url"] == "http://127.0.0.1:9/"


async def test_private_hosts_are_allowed_only_when_the_app_allows_them(
    db_path: Path, clock: FakeClock, make_key: MakeKey
) -> None:
    app = create_app(db_path, clock=clock, allow_private_webhooks=True)
    transport = httpx.ASGITransport(app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://test/v1", headers=bearer(make_key())
    ) as client:
        response = await client.post(
            "/webhooks", json={"url": "http://10.0.0.1/hook", "events": ["*"]}
        )
    assert response.status_code == 201


async def test_deliveries_are_signed_and_in_order_per_record(
    app: FastAPI, client: httpx.AsyncClient, receiver: Receiver
) -> None:
    hook = await register(client, receiver, ["issue.created", "issue.updated"])
    issue = await create_issue(client, title="v0")
    for n in range(1, 6):
        response = await client.patch(f"/issues/{issue['id']}", json={"title": f"v{n}"})
        assert response.status_code == 200
    await client.post("/projects", json={"name": "Not subscribed"})
    await receiver.wait_for(6)
    await drain(app)

    events = receiver.events()
    assert [e["type"] for e in events] == ["issue.created"] + ["issue.updated"] * 5
    assert [e["data"]["object"]["title"] for e in events] == [f"v{n}" for n in range(6)]
    assert events[1]["data"]["previous"] == {"title": "v0"}
    assert all(r.signed for r in receiver.requests)
    assert [r.headers["x-tracker-delivery"] for r in receiver.requests] == [e["id"] for e in events]
    assert [r.headers["x-tracker-event"] for r in receiver.requests] == [e["type"] for e in events]

    deliveries = await client.get(f"/webhooks/{hook['id']}/deliveries")
    assert deliveries.status_code == 200
    attempts = deliveries.json()["data"]
    assert [(a["event_id"], a["status"], a["response_code"]) for a in attempts] == [
        (e["id"], "succeeded", 200) for e in events
    ]
    page = (await client.get(f"/webhooks/{hook['id']}/deliveries", params={"per_page": 2})).json()
    assert page["pagination"]["total"] == 6 and page["data"] == attempts[:2]


async def test_a_failed_delivery_is_retried_on_schedule(
    app: FastAPI, client: httpx.AsyncClient, receiver: Receiver, clock: FakeClock
) -> None:
    async def fail_first(request: Request) -> int:
        return 500 if len(receiver.requests) == 1 else 200

    receiver.answer = fail_first
    hook = await register(client, receiver)
    await create_issue(client)
    await receiver.wait_for(1)
    await drain(app)
    assert len(receiver.requests) == 1
    clock.advance(seconds=1)
    await drain(app)

    first, second = receiver.requests
    assert first.body == second.body and first.signed and second.signed
    assert first.headers["x-tracker-delivery"] == second.headers["x-tracker-delivery"]
    attempts = (await client.get(f"/webhooks/{hook['id']}/deliveries")).json()["data"]
    assert [(a["attempt"], a["status"], a["response_code"]) for a in attempts] == [
        (1, "retrying", 500),
        (2, "succeeded", 200),
    ]


async def test_a_hung_receiver_does_not_hold_up_the_api(
    app: FastAPI, client: httpx.AsyncClient, receiver: Receiver
) -> None:
    released = asyncio.Event()

    async def hang(request: Request) -> int:
        await released.wait()
        return 200

    receiver.answer = hang
    await register(client, receiver)
    await create_issue(client, title="First")
    await receiver.wait_for(1)

    writes = [await client.post("/issues", json={"title": f"Write {n}"}) for n in range(20)]

    assert [w.status_code for w in writes] == [201] * 20
    assert not released.is_set()
    # Every write was answered while the receiver had answered nothing, and at most the
    # per-webhook cap of deliveries is open at once.
    assert 1 <= len(receiver.requests) <= MAX_IN_FLIGHT_PER_WEBHOOK
    released.set()
    await receiver.wait_for(21)
    await drain(app)
    titles = sorted(e["data"]["object"]["title"] for e in receiver.events())
    assert titles == sorted(["First", *(f"Write {n}" for n in range(20))])


async def test_bulk_writes_emit_their_events(
    app: FastAPI, client: httpx.AsyncClient, receiver: Receiver
) -> None:
    await register(client, receiver)
    issue = await create_issue(client, title="Existing")
    operations = [
        {"op": "create", "fields": {"title": "Made in bulk"}},
        {"op": "update", "id": issue["id"], "changes": {"priority": "high"}},
        {"op": "update", "id": issue["id"], "changes": {"status": "done"}},
        {"op": "delete", "id": issue["id"]},
    ]
    results = (await client.post("/issues/bulk", json={"operations": operations})).json()
    assert [r["status"] for r in results["data"]] == [201, 200, 400, 200]
    await receiver.wait_for(4)
    await drain(app)
    by_record: dict[str, list[str]] = {}
    for event in receiver.events():
        by_record.setdefault(event["data"]["object"]["title"], []).append(event["type"])
    assert by_record == {
        "Existing": ["issue.created", "issue.updated", "issue.deleted"],
        "Made in bulk": ["issue.created"],
    }
