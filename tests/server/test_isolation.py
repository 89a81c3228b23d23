"""Workspaces never see each other: another workspace's records are simply not there."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from server_support import assert_error, create_issue


async def _records(client: httpx.AsyncClient) -> dict[str, Any]:
    issue = await create_issue(client, labels=["secret"])
    project = (await client.post("/projects", json={"name": "Secret project"})).json()
    comment = (await client.post("/comments", json={"issue_id": issue["id"], "body": "x"})).json()
    me = (await client.get("/me")).json()
    return {
        "issue": issue,
        "project": project,
        "comment": comment,
        "workspace": me["workspace"],
        "user": me["user"],
    }


RECORD_ENDPOINTS = [
    ("GET", "/issues/{issue}", None),
    ("PATCH", "/issues/{issue}", {"title": "stolen"}),
    ("DELETE", "/issues/{issue}", None),
    ("GET", "/projects/{project}", None),
    ("PATCH", "/projects/{project}", {"name": "stolen"}),
    ("DELETE", "/projects/{project}", None),
    ("GET", "/comments/{comment}", None),
    ("PATCH", "/comments/{comment}", {"body": "stolen"}),
    ("DELETE", "/comments/{comment}", None),
    ("GET", "/workspaces/{workspace}", None),
    ("PATCH", "/workspaces/{workspace}", {"name": "stolen"}),
]


@pytest.mark.parametrize(("method", "path", "body"), RECORD_ENDPOINTS)
async def test_foreign_records_are_404_on_every_endpoint(
    client: httpx.AsyncClient,
    other: httpx.AsyncClient,
    method: str,
    path: str,
    body: dict[str, Any] | None,
) -> None:
    theirs = await _records(other)
    ids = {name: record["id"] for name, record in theirs.items()}
    url = path.format(**ids)
    response = await client.request(method, url, json=body)
    error = assert_error(response, 404, "not_found")
    missing = await client.request(
        method, path.format(**dict.fromkeys(ids, "x_missing")), json=body
    )
    assert assert_error(missing, 404, "not_found")["code"] == error["code"]
    assert (await other.get(url)).status_code == 200


async def test_lists_and_filters_show_only_the_own_workspace(
    client: httpx.AsyncClient, other: httpx.AsyncClient
) -> None:
    theirs = await _records(other)
    mine = await _records(client)
    for path, record in (("/issues", "issue"), ("/projects", "project"), ("/comments", "comment")):
        listed = (await client.get(path, params={"include_deleted": "true"})).json()["data"]
        assert [item["id"] for item in listed] == [mine[record]["id"]]
    assert [user["id"] for user in (await client.get("/users")).json()["data"]] == [
        mine["user"]["id"]
    ]
    for params in (
        {"label": "secret"},
        {"project_id": theirs["project"]["id"]},
        {"assignee": theirs["user"]["id"]},
    ):
        ids = [issue["id"] for issue in (await client.get("/issues", params=params)).json()["data"]]
        assert theirs["issue"]["id"] not in ids
    foreign_comments = await client.get("/comments", params={"issue_id": theirs["issue"]["id"]})
    assert foreign_comments.json()["data"] == []


async def test_foreign_tombstones_stay_hidden(
    client: httpx.AsyncClient, other: httpx.AsyncClient
) -> None:
    theirs = await create_issue(other)
    await other.delete(f"/issues/{theirs['id']}")
    listed = await client.get("/issues", params={"include_deleted": "true"})
    assert listed.json()["data"] == []


@pytest.mark.parametrize(
    ("field", "source"),
    [("assignee", "user"), ("project_id", "project")],
)
async def test_references_into_another_workspace_are_refused_like_unknown_ids(
    client: httpx.AsyncClient, other: httpx.AsyncClient, field: str, source: str
) -> None:
    theirs = await _records(other)
    foreign = await client.post("/issues", json={"title": "x", field: theirs[source]["id"]})
    unknown = await client.post("/issues", json={"title": "x", field: f"{source}_nothing"})
    assert assert_error(foreign, 400, "invalid_request")["details"][0]["field"] == field
    assert assert_error(unknown, 400, "invalid_request")["details"][0]["field"] == field


async def test_comments_and_leads_cannot_point_into_another_workspace(
    client: httpx.AsyncClient, other: httpx.AsyncClient
) -> None:
    theirs = await _records(other)
    comment = await client.post("/comments", json={"issue_id": theirs["issue"]["id"], "body": "x"})
    assert_error(comment, 400, "invalid_request")
    project = await client.post("/projects", json={"name": "Web", "lead": theirs["user"]["id"]})
    assert_error(project, 400, "invalid_request")
    assert (await other.get("/comments")).json()["pagination"]["total"] == 1
