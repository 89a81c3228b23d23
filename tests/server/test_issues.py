"""Issues: defaults, validation, numbering, stamps, updates, deletion."""

from __future__ import annotations

import re
from datetime import timedelta

import httpx
import pytest
from server_support import FakeClock, assert_error, create_issue

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


async def test_create_fills_the_contract_defaults(client: httpx.AsyncClient) -> None:
    response = await client.post("/issues", json={"title": "Crash on save"})
    assert response.status_code == 201
    issue = response.json()
    assert issue["id"].startswith("iss_")
    assert issue["number"] == 1
    assert issue["title"] == "Crash on save"
    assert issue["description"] == ""
    assert issue["status"] == "todo"
    assert issue["priority"] == "none"
    assert issue["assignee"] is None
    assert issue["project_id"] is None
    assert issue["labels"] == []
    assert STAMP.fullmatch(issue["created_at"])
    assert issue["created_at"] == issue["updated_at"]


async def test_create_takes_every_writable_field(client: httpx.AsyncClient) -> None:
    me = (await client.get("/me")).json()
    project = (await client.post("/projects", json={"name": "Web"})).json()
    issue = await create_issue(
        client,
        title="  Padded title  ",
        description="Steps: 1, 2, 3",
        status="in_progress",
        priority="high",
        assignee=me["user"]["id"],
        project_id=project["id"],
        labels=["bug", "ux", "bug"],
    )
    assert issue["title"] == "Padded title"
    assert issue["description"] == "Steps: 1, 2, 3"
    assert (issue["status"], issue["priority"]) == ("in_progress", "high")
    assert issue["assignee"] == me["user"]["id"]
    assert issue["project_id"] == project["id"]
    assert issue["labels"] == ["bug", "ux"]


async def test_missing_title_says_the_title_is_required(client: httpx.AsyncClient) -> None:
    error = assert_error(await client.post("/issues", json={}), 400, "invalid_request")
    assert "`title`" in error["message"] and "required" in error["message"]
    assert error["details"] == [{"field": "title", "message": "Field required"}]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"title": ""}, "title"),
        ({"title": "   "}, "title"),
        ({"title": "x" * 256}, "title"),
        ({"title": 42}, "title"),
        ({"title": None}, "title"),
        ({"title": "x", "description": "y" * 65_536}, "description"),
        ({"title": "x", "description": None}, "description"),
        ({"title": "x", "status": "started"}, "status"),
        ({"title": "x", "priority": "p1"}, "priority"),
        ({"title": "x", "priority": 1}, "priority"),
        ({"title": "x", "labels": "bug"}, "labels"),
        ({"title": "x", "labels": [""]}, "labels.0"),
        ({"title": "x", "labels": ["y" * 51]}, "labels.0"),
        ({"title": "x", "labels": [str(n) for n in range(21)]}, "labels"),
        ({"title": "x", "labels": [1]}, "labels.0"),
        ({"title": "x", "assignee": 7}, "assignee"),
        ({"title": "x", "assignee": "usr_nobody"}, "assignee"),
        ({"title": "x", "project_id": "prj_nothing"}, "project_id"),
    ],
)
async def test_invalid_fields_are_400_with_details(
    client: httpx.AsyncClient, body: dict[str, object], field: str
) -> None:
    error = assert_error(await client.post("/issues", json=body), 400, "invalid_request")
    assert [detail["field"] for detail in error["details"]] == [field]
    assert f"`{field}`" in error["message"]
    assert (await client.get("/issues")).json()["pagination"]["total"] == 0


async def test_boundary_lengths_are_accepted(client: httpx.AsyncClient) -> None:
    issue = await create_issue(
        client,
        title="x" * 255,
        description="y" * 65_535,
        labels=["z" * 50] + [f"l{n}" for n in range(19)],
    )
    assert len(issue["title"]) == 255
    assert len(issue["labels"]) == 20


async def test_unknown_members_are_named(client: httpx.AsyncClient) -> None:
    response = await client.post("/issues", json={"title": "x", "severity": "high"})
    error = assert_error(response, 400, "invalid_request")
    assert "`severity`" in error["message"]
    assert error["details"] == [{"field": "severity", "message": "unknown member"}]


async def test_numbers_count_up_per_workspace_and_are_never_reused(
    client: httpx.AsyncClient, other: httpx.AsyncClient
) -> None:
    first = await create_issue(client)
    second = await create_issue(client)
    assert (first["number"], second["number"]) == (1, 2)
    assert (await create_issue(other))["number"] == 1
    await client.delete(f"/issues/{second['id']}")
    assert (await create_issue(client))["number"] == 3


async def test_get_returns_the_issue_and_404_for_unknown_ids(client: httpx.AsyncClient) -> None:
    issue = await create_issue(client)
    assert (await client.get(f"/issues/{issue['id']}")).json() == issue
    for bad in ("iss_doesnotexist", "nonsense", "prj_x", "%20"):
        assert_error(await client.get(f"/issues/{bad}"), 404, "not_found")


async def test_patch_changes_only_what_it_names(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    issue = await create_issue(client, description="keep me", labels=["bug"])
    clock.advance(seconds=5)
    response = await client.patch(f"/issues/{issue['id']}", json={"title": "  New title "})
    assert response.status_code == 200
    updated = response.json()
    assert updated["title"] == "New title"
    assert updated["description"] == "keep me"
    assert updated["labels"] == ["bug"]
    assert updated["created_at"] == issue["created_at"]
    assert updated["updated_at"] > issue["updated_at"]
    assert (await client.get(f"/issues/{issue['id']}")).json() == updated


async def test_patch_can_clear_nullable_fields_but_not_required_ones(
    client: httpx.AsyncClient,
) -> None:
    me = (await client.get("/me")).json()
    issue = await create_issue(client, assignee=me["user"]["id"])
    cleared = await client.patch(f"/issues/{issue['id']}", json={"assignee": None})
    assert cleared.json()["assignee"] is None
    for field in ("title", "description", "status", "priority", "labels"):
        response = await client.patch(f"/issues/{issue['id']}", json={field: None})
        error = assert_error(response, 400, "invalid_request")
        assert error["details"] == [{"field": field, "message": "may not be null"}]


async def test_patch_validates_like_create(client: httpx.AsyncClient) -> None:
    issue = await create_issue(client)
    for body in ({"title": ""}, {"priority": "p0"}, {"nope": 1}, {"assignee": "usr_x"}):
        response = await client.patch(f"/issues/{issue['id']}", json=body)
        assert_error(response, 400, "invalid_request")
    assert (await client.get(f"/issues/{issue['id']}")).json() == issue


async def test_a_patch_that_changes_nothing_does_not_bump(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    issue = await create_issue(client, title="Same", status="todo", labels=["a"])
    clock.advance(seconds=1)
    for body in ({}, {"title": "Same"}, {"status": "todo"}, {"labels": ["a"], "title": " Same "}):
        response = await client.patch(f"/issues/{issue['id']}", json=body)
        assert response.status_code == 200
        assert response.json() == issue


async def test_updated_at_strictly_increases_even_when_the_clock_does_not(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    seen = [(await create_issue(client))["updated_at"]]
    issue_id = (await create_issue(client))["id"]
    for step in range(6):
        if step == 3:
            clock.advance(hours=-2)
        response = await client.patch(f"/issues/{issue_id}", json={"title": f"v{step}"})
        seen.append(response.json()["updated_at"])
    assert all(STAMP.fullmatch(stamp) for stamp in seen)
    assert seen == sorted(seen)
    assert len(set(seen)) == len(seen)


async def test_stamps_follow_the_clock_with_microseconds(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    clock.advance(days=1, microseconds=7)
    issue = await create_issue(client)
    expected = (clock.now).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert issue["created_at"] == expected
    clock.advance(microseconds=1)
    assert (await create_issue(client))["created_at"] == (
        clock.now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    )
    assert timedelta(microseconds=1) > timedelta(0)


async def test_delete_answers_with_the_deleted_issue(client: httpx.AsyncClient) -> None:
    issue = await create_issue(client, labels=["bug"])
    response = await client.delete(f"/issues/{issue['id']}")
    assert response.status_code == 200
    assert response.json() == issue
    assert_error(await client.get(f"/issues/{issue['id']}"), 404, "not_found")
    assert_error(await client.delete(f"/issues/{issue['id']}"), 404, "not_found")
    listed = await client.get("/issues", params={"label": "bug"})
    assert listed.json()["data"] == []


async def test_deleting_an_issue_deletes_its_comments(client: httpx.AsyncClient) -> None:
    issue = await create_issue(client)
    kept = await create_issue(client)
    doomed = await client.post("/comments", json={"issue_id": issue["id"], "body": "bye"})
    survivor = await client.post("/comments", json={"issue_id": kept["id"], "body": "hi"})
    await client.delete(f"/issues/{issue['id']}")
    assert_error(await client.get(f"/comments/{doomed.json()['id']}"), 404, "not_found")
    remaining = (await client.get("/comments")).json()["data"]
    assert [comment["id"] for comment in remaining] == [survivor.json()["id"]]
