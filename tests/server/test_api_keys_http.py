"""API keys over HTTP: the value shown once, keys that work, revocation, permissions, isolation."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest
from server_support import FakeClock, MakeKey, assert_error

from server.models import PERMISSIONS

OpenClient = Callable[..., Any]
KEY = re.compile(r"trk_[A-Za-z0-9_-]{40}")


async def test_a_new_key_is_shown_once_and_works_with_its_permissions(
    client: httpx.AsyncClient, open_client: OpenClient
) -> None:
    response = await client.post("/api-keys", json={"name": "CI", "permissions": ["issues:read"]})
    assert response.status_code == 201
    created = response.json()
    value = created.pop("key")
    assert KEY.fullmatch(value)
    assert created["id"].startswith("key_")
    assert created["name"] == "CI" and created["permissions"] == ["issues:read"]
    assert created["expires_at"] is None and created["revoked"] is False

    listing = await client.get("/api-keys")
    assert listing.status_code == 200
    assert value not in listing.text
    records = listing.json()["data"]
    assert created in records and len(records) == 2
    assert all(set(r) == set(created) for r in records)
    assert "key" not in (await client.delete(f"/api-keys/{created['id']}")).json()

    async with open_client(value) as fresh:
        assert_error(await fresh.get("/issues"), 401, "unauthorized")
    made = await client.post("/api-keys", json={"name": "Reader", "permissions": ["issues:read"]})
    async with open_client(made.json()["key"]) as reader:
        assert (await reader.get("/issues")).status_code == 200
        error = assert_error(await reader.post("/issues", json={"title": "x"}), 403, "forbidden")
        assert "issues:write" in error["message"]
        assert_error(await reader.get("/api-keys"), 403, "forbidden")


async def test_a_key_gets_every_permission_unless_told_otherwise(
    client: httpx.AsyncClient,
) -> None:
    created = (await client.post("/api-keys", json={"name": "Full"})).json()
    assert created["permissions"] == list(PERMISSIONS)


async def test_revoking_refuses_the_key_from_then_on(
    client: httpx.AsyncClient, open_client: OpenClient
) -> None:
    created = (await client.post("/api-keys", json={"name": "Temp"})).json()
    async with open_client(created["key"]) as temp:
        assert (await temp.get("/me")).status_code == 200
        revoked = await client.delete(f"/api-keys/{created['id']}")
        assert revoked.status_code == 200
        assert revoked.json()["revoked"] is True and revoked.json()["id"] == created["id"]
        error = assert_error(await temp.get("/me"), 401, "unauthorized")
        assert "revoked" in error["message"]
    again = await client.delete(f"/api-keys/{created['id']}")
    assert again.status_code == 200 and again.json() == revoked.json()
    listed = {r["id"]: r for r in (await client.get("/api-keys")).json()["data"]}
    assert listed[created["id"]]["revoked"] is True


async def test_a_key_may_revoke_itself(client: httpx.AsyncClient) -> None:
    mine = (await client.get("/api-keys")).json()["data"][0]
    assert (await client.delete(f"/api-keys/{mine['id']}")).status_code == 200
    assert_error(await client.get("/me"), 401, "unauthorized")


async def test_keys_expire_when_asked(
    client: httpx.AsyncClient, open_client: OpenClient, clock: FakeClock
) -> None:
    in_days = (await client.post("/api-keys", json={"name": "D", "expires_in_days": 2})).json()
    at = (clock.now + timedelta(hours=1)).isoformat()
    at_time = (await client.post("/api-keys", json={"name": "T", "expires_at": at})).json()
    assert in_days["expires_at"] == (clock.now + timedelta(days=2)).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ"
    )
    assert at_time["expires_at"] == (clock.now + timedelta(hours=1)).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ"
    )
    async with open_client(in_days["key"]) as days, open_client(at_time["key"]) as hour:
        clock.advance(hours=1)
        assert (await days.get("/me")).status_code == 200
        assert_error(await hour.get("/me"), 401, "unauthorized")
        clock.advance(days=2)
        assert_error(await days.get("/me"), 401, "unauthorized")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "", "permissions": ["issues:read"]}, "name"),
        ({"name": "X", "permissions": ["issues:delete"]}, "permissions"),
        ({"name": "X", "expires_in_days": 0}, "expires_in_days"),
        ({"name": "X", "expires_at": "2020-01-01T00:00:00Z"}, "expires_at"),
        ({"name": "X", "expires_in_days": 1, "expires_at": "2099-01-01T00:00:00Z"}, "expires_at"),
        ({"name": "X", "key": "trk_" + "a" * 40}, "key"),
    ],
)
async def test_bad_keys_are_refused_naming_the_member(
    client: httpx.AsyncClient, body: dict[str, Any], field: str
) -> None:
    error = assert_error(await client.post("/api-keys", json=body), 400, "invalid_request")
    assert field in error["message"]


async def test_api_keys_need_admin_and_stay_in_their_workspace(
    client: httpx.AsyncClient,
    other: httpx.AsyncClient,
    open_client: OpenClient,
    make_key: MakeKey,
) -> None:
    created = (await client.post("/api-keys", json={"name": "Ours"})).json()
    async with open_client(make_key(permissions=["issues:read", "webhooks:manage"])) as lacking:
        for response in [
            await lacking.get("/api-keys"),
            await lacking.post("/api-keys", json={"name": "Mine"}),
            await lacking.delete(f"/api-keys/{created['id']}"),
        ]:
            error = assert_error(response, 403, "forbidden")
            assert "admin" in error["message"]
    assert_error(await other.delete(f"/api-keys/{created['id']}"), 404, "not_found")
    assert created["id"] not in str((await other.get("/api-keys")).json())
    async with open_client(created["key"]) as ours:
        assert (await ours.get("/me")).status_code == 200
