"""Authentication (401), permissions (403) and `GET /me`."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_support import FakeClock, MakeKey, assert_error, bearer, create_issue

from server.keys import create_key, revoke_key

ALL_PERMISSIONS = {
    "issues:read",
    "issues:write",
    "projects:read",
    "projects:write",
    "comments:read",
    "comments:write",
    "webhooks:manage",
    "admin",
}


def test_keys_have_the_contract_format_and_are_stored_only_as_hashes(db_path: Path) -> None:
    key = create_key(db_path, "Acme", "ci")
    assert re.fullmatch(r"trk_[A-Za-z0-9_-]{40}", key)
    dump = "\n".join(sqlite3.connect(db_path).iterdump())
    assert key not in dump
    assert key[4:] not in dump


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Bearer",
        "Basic dXNlcjpwYXNz",
        "Bearer trk_short",
        "Bearer trk_" + "A" * 40,
        "Token trk_" + "A" * 40,
    ],
)
async def test_missing_or_invalid_keys_are_401(
    open_client: Callable[[str | None], Any], authorization: str | None
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    async with open_client(None) as anonymous:
        response = await anonymous.get("/issues", headers=headers)
    assert_error(response, 401, "unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"


async def test_the_scheme_is_case_insensitive(
    open_client: Callable[[str | None], Any], make_key: MakeKey
) -> None:
    async with open_client(None) as anonymous:
        response = await anonymous.get("/me", headers={"Authorization": f"bearer {make_key()}"})
    assert response.status_code == 200


async def test_a_revoked_key_is_401(
    open_client: Callable[[str | None], Any], make_key: MakeKey, db_path: Path
) -> None:
    key = make_key()
    async with open_client(key) as client:
        assert (await client.get("/me")).status_code == 200
        revoke_key(db_path, key)
        error = assert_error(await client.get("/me"), 401, "unauthorized")
    assert "revoked" in error["message"]
    with pytest.raises(ValueError, match="already revoked"):
        revoke_key(db_path, key)


async def test_an_expired_key_is_401(
    open_client: Callable[[str | None], Any], make_key: MakeKey, clock: FakeClock
) -> None:
    key = make_key(expires_in_days=1)
    async with open_client(key) as client:
        clock.advance(days=1, microseconds=-1)
        assert (await client.get("/me")).status_code == 200
        clock.advance(microseconds=1)
        error = assert_error(await client.get("/me"), 401, "unauthorized")
    assert "expired" in error["message"]


async def test_an_unknown_route_needs_a_key_too(open_client: Callable[[str | None], Any]) -> None:
    async with open_client(None) as anonymous:
        assert_error(await anonymous.get("/nothing-here"), 401, "unauthorized")


async def test_me_describes_the_key(client: httpx.AsyncClient) -> None:
    response = await client.get("/me")
    assert response.status_code == 200
    me = response.json()
    assert set(me) == {"user", "workspace", "permissions", "plan"}
    assert set(me["permissions"]) == ALL_PERMISSIONS
    assert me["plan"] == "free"
    assert me["workspace"]["name"] == "Acme"
    assert me["workspace"]["plan"] == "free"
    assert me["user"]["id"].startswith("usr_")
    assert me["workspace"]["id"].startswith("wsp_")
    users = (await client.get("/users")).json()["data"]
    assert [user["id"] for user in users] == [me["user"]["id"]]


async def test_me_shows_chosen_permissions_and_plan(
    open_client: Callable[[str | None], Any], make_key: MakeKey
) -> None:
    key = make_key("Initech", permissions=["issues:read"], plan="pro")
    async with open_client(key) as client:
        me = (await client.get("/me")).json()
    assert me["permissions"] == ["issues:read"]
    assert me["plan"] == "pro"


async def test_keys_of_two_members_belong_to_two_users(
    open_client: Callable[[str | None], Any], make_key: MakeKey
) -> None:
    async with open_client(make_key(user="Ada")) as ada, open_client(make_key(user="Bob")) as bob:
        ada_me, bob_me = (await ada.get("/me")).json(), (await bob.get("/me")).json()
    assert ada_me["workspace"] == bob_me["workspace"]
    assert ada_me["user"]["name"] == "Ada"
    assert bob_me["user"]["name"] == "Bob"


ENDPOINTS: list[tuple[str, str, str, dict[str, Any] | None]] = [
    ("issues:read", "GET", "/issues", None),
    ("issues:read", "GET", "/issues/{issue}", None),
    ("issues:read", "GET", "/search?q=crash", None),
    ("issues:write", "POST", "/issues", {"title": "x"}),
    ("issues:write", "PATCH", "/issues/{issue}", {"title": "y"}),
    ("issues:write", "DELETE", "/issues/{issue}", None),
    ("issues:write", "POST", "/issues/bulk", {"operations": [{"op": "delete", "id": "x"}]}),
    ("projects:read", "GET", "/projects", None),
    ("projects:read", "GET", "/projects/{project}", None),
    ("projects:write", "POST", "/projects", {"name": "Web"}),
    ("projects:write", "PATCH", "/projects/{project}", {"name": "Web 2"}),
    ("projects:write", "DELETE", "/projects/{project}", None),
    ("comments:read", "GET", "/comments", None),
    ("comments:read", "GET", "/comments/{comment}", None),
    ("comments:write", "POST", "/comments", {"issue_id": "{issue}", "body": "hi"}),
    ("comments:write", "PATCH", "/comments/{comment}", {"body": "edited"}),
    ("comments:write", "DELETE", "/comments/{comment}", None),
    ("admin", "PATCH", "/workspaces/{workspace}", {"name": "Acme Corp"}),
]


def _fill(template: Any, ids: dict[str, str]) -> Any:
    if isinstance(template, str):
        return template.format(**ids)
    if isinstance(template, dict):
        return {name: _fill(value, ids) for name, value in template.items()}
    return template


async def seed_records(client: httpx.AsyncClient) -> dict[str, str]:
    """One record of each kind in the client's workspace, by placeholder name."""
    issue = await create_issue(client)
    project = (await client.post("/projects", json={"name": "Platform"})).json()
    comment = (await client.post("/comments", json={"issue_id": issue["id"], "body": "x"})).json()
    workspace = (await client.get("/me")).json()["workspace"]
    return {
        "issue": issue["id"],
        "project": project["id"],
        "comment": comment["id"],
        "workspace": workspace["id"],
    }


@pytest.mark.parametrize(("permission", "method", "path", "body"), ENDPOINTS)
async def test_each_endpoint_needs_its_permission(
    client: httpx.AsyncClient,
    open_client: Callable[[str | None], Any],
    make_key: MakeKey,
    permission: str,
    method: str,
    path: str,
    body: dict[str, Any] | None,
) -> None:
    ids = await seed_records(client)
    lacking = make_key(permissions=sorted(ALL_PERMISSIONS - {permission}))
    async with open_client(lacking) as limited:
        response = await limited.request(method, _fill(path, ids), json=_fill(body, ids))
    error = assert_error(response, 403, "forbidden")
    assert f"`{permission}`" in error["message"]
    allowed = await client.request(method, _fill(path, ids), json=_fill(body, ids))
    assert allowed.status_code in {200, 201}, allowed.text


@pytest.mark.parametrize("path", ["/me", "/users", "/workspaces", "/workspaces/{workspace}"])
async def test_reading_who_you_are_needs_no_permission(
    client: httpx.AsyncClient,
    open_client: Callable[[str | None], Any],
    make_key: MakeKey,
    path: str,
) -> None:
    ids = await seed_records(client)
    async with open_client(make_key(permissions=[])) as bare:
        assert (await bare.get(_fill(path, ids))).status_code == 200


async def test_forbidden_is_decided_before_the_body_is_validated(
    open_client: Callable[[str | None], Any], make_key: MakeKey
) -> None:
    async with open_client(make_key(permissions=["issues:read"])) as reader:
        response = await reader.post("/issues", json={"bogus": 1})
    assert_error(response, 403, "forbidden")


async def test_unauthorized_comes_before_everything_else(
    open_client: Callable[[str | None], Any],
) -> None:
    async with open_client(None) as anonymous:
        not_json = await anonymous.post(
            "/issues", content=b"{", headers={"Content-Type": "application/json"}
        )
        huge = await anonymous.post("/issues", content=b"x" * (2 << 20))
    assert_error(not_json, 401, "unauthorized")
    assert_error(huge, 401, "unauthorized")


async def test_the_key_header_is_sent_as_bearer(make_key: MakeKey) -> None:
    assert bearer("trk_x") == {"Authorization": "Bearer trk_x"}
    assert make_key() != make_key()
