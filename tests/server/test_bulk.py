"""`POST /issues/bulk`: independent operations, results in order."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from server_support import RecordingSink, assert_error, create_issue


async def _bulk(client: httpx.AsyncClient, *operations: Any) -> list[dict[str, Any]]:
    response = await client.post("/issues/bulk", json={"operations": list(operations)})
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"data"}
    results: list[dict[str, Any]] = body["data"]
    assert [result["index"] for result in results] == list(range(len(operations)))
    return results


async def test_mixed_operations_succeed_or_fail_on_their_own(
    client: httpx.AsyncClient, sink: RecordingSink
) -> None:
    keep = await create_issue(client, title="keep")
    doomed = await create_issue(client, title="doomed")
    sink.events.clear()
    results = await _bulk(
        client,
        {"op": "create", "fields": {"title": "new one", "labels": ["bulk"]}},
        {"op": "update", "id": keep["id"], "changes": {"status": "in_progress"}},
        {"op": "update", "id": keep["id"], "changes": {"status": "backlog"}},
        {"op": "delete", "id": doomed["id"]},
        {"op": "delete", "id": doomed["id"]},
        {"op": "create", "fields": {}},
        {"op": "update", "id": keep["id"], "changes": {"title": "kept", "bogus": True}},
    )
    created, moved, refused, deleted, gone, invalid, unknown = results
    assert created["status"] == 201 and created["issue"]["title"] == "new one"
    assert moved["status"] == 200 and moved["issue"]["status"] == "in_progress"
    assert refused["status"] == 400 and refused["error"]["code"] == "invalid_transition"
    assert deleted["status"] == 200 and deleted["issue"]["id"] == doomed["id"]
    assert gone["status"] == 404 and gone["error"]["code"] == "not_found"
    assert invalid["status"] == 400 and invalid["error"]["code"] == "invalid_request"
    assert invalid["error"]["details"] == [{"field": "fields.title", "message": "Field required"}]
    assert unknown["error"]["details"] == [{"field": "changes.bogus", "message": "unknown member"}]
    assert all(set(result) == {"index", "status", "issue"} for result in (created, moved, deleted))
    assert all(set(result) == {"index", "status", "error"} for result in (refused, gone, invalid))

    now = (await client.get(f"/issues/{keep['id']}")).json()
    assert (now["status"], now["title"]) == ("in_progress", "keep")
    assert_error(await client.get(f"/issues/{doomed['id']}"), 404, "not_found")
    assert sink.types() == ["issue.created", "issue.updated", "issue.deleted"]


@pytest.mark.parametrize(
    "operation",
    [
        {},
        {"op": "upsert", "id": "x"},
        {"op": ["create"]},
        {"op": "update", "changes": {"title": "no id"}},
        {"op": "update", "id": "x"},
        {"op": "delete"},
        {"op": "delete", "id": 5},
        {"op": "create", "fields": "title"},
        {"op": "delete", "id": "x", "extra": 1},
    ],
)
async def test_malformed_operations_fail_alone(
    client: httpx.AsyncClient, operation: dict[str, Any]
) -> None:
    results = await _bulk(client, operation, {"op": "create", "fields": {"title": "fine"}})
    assert results[0]["status"] == 400
    assert results[0]["error"]["code"] == "invalid_request"
    assert results[1]["status"] == 201


@pytest.mark.parametrize("count", [0, 101])
async def test_the_number_of_operations_is_bounded(client: httpx.AsyncClient, count: int) -> None:
    operations = [{"op": "create", "fields": {"title": f"n{n}"}} for n in range(count)]
    response = await client.post("/issues/bulk", json={"operations": operations})
    error = assert_error(response, 400, "invalid_request")
    assert error["details"][0]["field"] == "operations"
    assert (await client.get("/issues")).json()["pagination"]["total"] == 0


async def test_a_hundred_operations_are_fine(client: httpx.AsyncClient) -> None:
    operations = [{"op": "create", "fields": {"title": f"n{n}"}} for n in range(100)]
    results = await _bulk(client, *operations)
    assert [result["issue"]["number"] for result in results] == list(range(1, 101))


@pytest.mark.parametrize(
    "body", [{}, {"operations": "all"}, {"operations": [1]}, {"operations": [], "x": 1}, []]
)
async def test_a_malformed_request_is_400(client: httpx.AsyncClient, body: Any) -> None:
    assert_error(await client.post("/issues/bulk", json=body), 400, "invalid_request")


async def test_another_workspaces_issues_are_not_found(
    client: httpx.AsyncClient, other: httpx.AsyncClient
) -> None:
    foreign = await create_issue(other)
    results = await _bulk(
        client,
        {"op": "update", "id": foreign["id"], "changes": {"title": "mine now"}},
        {"op": "delete", "id": foreign["id"]},
        {"op": "create", "fields": {"title": "x", "project_id": foreign["project_id"]}},
    )
    assert [result["status"] for result in results] == [404, 404, 201]
    assert (await other.get(f"/issues/{foreign['id']}")).json() == foreign
