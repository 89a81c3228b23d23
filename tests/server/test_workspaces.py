"""The caller's workspace and its members."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from server_support import FakeClock, MakeKey, assert_error


async def test_list_and_get_show_only_the_own_workspace(
    client: httpx.AsyncClient, other: httpx.AsyncClient
) -> None:
    mine = (await client.get("/me")).json()["workspace"]
    theirs = (await other.get("/me")).json()["workspace"]
    listed = (await client.get("/workspaces")).json()
    assert listed == {"data": [mine], "pagination": {"page": 1, "per_page": 25, "total": 1}}
    assert (await client.get(f"/workspaces/{mine['id']}")).json() == mine
    assert mine["id"].startswith("wsp_") and mine["plan"] == "free"
    assert_error(await client.get(f"/workspaces/{theirs['id']}"), 404, "not_found")


async def test_renaming_needs_admin(
    open_client: Callable[[str | None], Any], make_key: MakeKey, clock: FakeClock
) -> None:
    admin_key = make_key()
    member_key = make_key(permissions=["issues:read", "issues:write"])
    async with open_client(admin_key) as admin, open_client(member_key) as member:
        workspace = (await admin.get("/me")).json()["workspace"]
        path = f"/workspaces/{workspace['id']}"
        error = assert_error(await member.patch(path, json={"name": "Mine"}), 403, "forbidden")
        assert "`admin`" in error["message"]
        clock.advance(seconds=1)
        renamed = await admin.patch(path, json={"name": "Acme Corp"})
        assert renamed.status_code == 200
        assert renamed.json()["name"] == "Acme Corp"
        assert renamed.json()["updated_at"] > workspace["updated_at"]
        for body in ({"name": ""}, {"plan": "enterprise"}, {"name": None}, {"name": 3}):
            assert_error(await admin.patch(path, json=body), 400, "invalid_request")


async def test_a_name_taken_by_another_workspace_is_refused(
    client: httpx.AsyncClient, other: httpx.AsyncClient
) -> None:
    workspace = (await client.get("/me")).json()["workspace"]
    response = await client.patch(f"/workspaces/{workspace['id']}", json={"name": "Globex"})
    error = assert_error(response, 400, "invalid_request")
    assert error["details"][0]["field"] == "name"


async def test_users_lists_the_members_of_the_workspace(
    open_client: Callable[[str | None], Any], make_key: MakeKey
) -> None:
    make_key("Elsewhere", user="Stranger")
    async with open_client(make_key(user="Ada")) as ada:
        make_key(user="Bob")
        page = (await ada.get("/users")).json()
    assert [user["name"] for user in page["data"]] == ["Ada", "Bob"]
    assert page["pagination"]["total"] == 2
    assert all(user["id"].startswith("usr_") and "@" in user["email"] for user in page["data"])
