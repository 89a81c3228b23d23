"""Projects: keys, leads, and what deleting a project does to its issues."""

from __future__ import annotations

import httpx
import pytest
from server_support import FakeClock, RecordingSink, assert_error, create_issue


async def test_create_with_defaults(client: httpx.AsyncClient) -> None:
    response = await client.post("/projects", json={"key": "WEB", "name": "Web app"})
    assert response.status_code == 201
    project = response.json()
    assert project["id"].startswith("prj_")
    assert (project["key"], project["name"]) == ("WEB", "Web app")
    assert (project["description"], project["state"], project["lead"]) == ("", "active", None)
    assert project["created_at"] == project["updated_at"]
    assert (await client.get(f"/projects/{project['id']}")).json() == project


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Web", "WEB"),
        ("Infrastructure", "INFR"),
        ("Mobile App", "MA"),
        ("the big data team", "TBDT"),
    ],
)
async def test_a_missing_key_is_derived_from_the_name(
    client: httpx.AsyncClient, name: str, key: str
) -> None:
    response = await client.post("/projects", json={"name": name})
    assert response.json()["key"] == key


async def test_a_key_that_cannot_be_derived_must_be_given(client: httpx.AsyncClient) -> None:
    error = assert_error(await client.post("/projects", json={"name": "X"}), 400, "invalid_request")
    assert error["details"][0]["field"] == "key"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"key": "W", "name": "Web"}, "key"),
        ({"key": "web", "name": "Web"}, "key"),
        ({"key": "ABCDEFGHIJK", "name": "Web"}, "key"),
        ({"key": "WEB1", "name": "Web"}, "key"),
        ({"key": "WEB"}, "name"),
        ({"key": "WEB", "name": ""}, "name"),
        ({"key": "WEB", "name": "n" * 101}, "name"),
        ({"key": "WEB", "name": "Web", "state": "paused"}, "state"),
        ({"key": "WEB", "name": "Web", "lead": "usr_nobody"}, "lead"),
        ({"key": "WEB", "name": "Web", "color": "red"}, "color"),
    ],
)
async def test_invalid_projects_are_refused(
    client: httpx.AsyncClient, body: dict[str, object], field: str
) -> None:
    error = assert_error(await client.post("/projects", json=body), 400, "invalid_request")
    assert error["details"][0]["field"] == field


async def test_keys_are_unique_per_workspace(
    client: httpx.AsyncClient, other: httpx.AsyncClient
) -> None:
    first = (await client.post("/projects", json={"key": "WEB", "name": "Web"})).json()
    again = await client.post("/projects", json={"key": "WEB", "name": "Web two"})
    assert_error(again, 400, "invalid_request")
    assert (await other.post("/projects", json={"key": "WEB", "name": "Web"})).status_code == 201
    second = (await client.post("/projects", json={"key": "API", "name": "Api"})).json()
    clash = await client.patch(f"/projects/{second['id']}", json={"key": "WEB"})
    assert_error(clash, 400, "invalid_request")
    same = await client.patch(f"/projects/{first['id']}", json={"key": "WEB"})
    assert same.json() == first


async def test_update_and_lead(client: httpx.AsyncClient, clock: FakeClock) -> None:
    me = (await client.get("/me")).json()["user"]
    project = (await client.post("/projects", json={"name": "Web"})).json()
    clock.advance(seconds=1)
    response = await client.patch(
        f"/projects/{project['id']}",
        json={"name": "Website", "state": "archived", "lead": me["id"], "description": "d"},
    )
    updated = response.json()
    assert (updated["name"], updated["state"], updated["lead"]) == ("Website", "archived", me["id"])
    assert updated["updated_at"] > project["updated_at"]
    assert_error(
        await client.patch(f"/projects/{project['id']}", json={"name": None}),
        400,
        "invalid_request",
    )


async def test_deleting_a_project_detaches_its_issues(
    client: httpx.AsyncClient, clock: FakeClock, sink: RecordingSink
) -> None:
    project = (await client.post("/projects", json={"name": "Web"})).json()
    inside = [await create_issue(client, project_id=project["id"]) for _ in range(3)]
    outside = await create_issue(client)
    clock.advance(seconds=1)
    sink.events.clear()
    response = await client.delete(f"/projects/{project['id']}")
    assert response.status_code == 200
    assert response.json() == project
    stamps = []
    for issue in inside:
        now = (await client.get(f"/issues/{issue['id']}")).json()
        assert now["project_id"] is None
        assert now["updated_at"] > issue["updated_at"]
        stamps.append(now["updated_at"])
    assert len(set(stamps)) == 3
    assert (await client.get(f"/issues/{outside['id']}")).json() == outside
    assert sink.types() == ["issue.updated"] * 3 + ["project.deleted"]
    assert all(previous == {"project_id": project["id"]} for *_, previous in sink.events[:3])
    assert_error(await client.get(f"/projects/{project['id']}"), 404, "not_found")
