"""ETag / If-Match (optimistic concurrency) and Idempotency-Key replays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from server_support import FakeClock, MakeKey, RecordingSink, assert_error, create_issue

RESOURCES = {
    "issues": {"title": "t"},
    "projects": {"name": "Web"},
    "comments": {"body": "b"},
}
CHANGES = {"issues": {"title": "t2"}, "projects": {"name": "Web 2"}, "comments": {"body": "b2"}}


async def _create(client: httpx.AsyncClient, resource: str) -> dict[str, Any]:
    body = dict(RESOURCES[resource])
    if resource == "comments":
        body["issue_id"] = (await create_issue(client))["id"]
    response = await client.post(f"/{resource}", json=body)
    assert response.status_code == 201
    record: dict[str, Any] = response.json()
    return record


@pytest.mark.parametrize("resource", RESOURCES)
async def test_etags_follow_changes(client: httpx.AsyncClient, resource: str) -> None:
    record = await _create(client, resource)
    path = f"/{resource}/{record['id']}"
    first = await client.get(path)
    tag = first.headers["etag"]
    assert tag.startswith('"') and tag.endswith('"')
    assert (await client.get(path)).headers["etag"] == tag
    patched = await client.patch(path, json=CHANGES[resource], headers={"If-Match": tag})
    assert patched.status_code == 200
    new_tag = patched.headers["etag"]
    assert new_tag != tag
    assert (await client.get(path)).headers["etag"] == new_tag

    stale = await client.patch(path, json=CHANGES[resource], headers={"If-Match": tag})
    assert_error(stale, 412, "precondition_failed")
    assert_error(await client.delete(path, headers={"If-Match": tag}), 412, "precondition_failed")
    assert (await client.get(path)).json() == patched.json()
    deleted = await client.delete(path, headers={"If-Match": f'"nope", {new_tag}'})
    assert deleted.status_code == 200


async def test_if_match_star_and_no_op_patches(client: httpx.AsyncClient) -> None:
    issue = await create_issue(client)
    path = f"/issues/{issue['id']}"
    tag = (await client.get(path)).headers["etag"]
    same = await client.patch(path, json={"title": issue["title"]}, headers={"If-Match": tag})
    assert same.headers["etag"] == tag
    star = await client.patch(path, json={"title": "x"}, headers={"If-Match": "*"})
    assert star.status_code == 200
    assert_error(
        await client.patch(path, json={"title": "y"}, headers={"If-Match": tag}),
        412,
        "precondition_failed",
    )


async def test_workspace_etag(client: httpx.AsyncClient) -> None:
    workspace = (await client.get("/me")).json()["workspace"]
    path = f"/workspaces/{workspace['id']}"
    tag = (await client.get(path)).headers["etag"]
    await client.patch(path, json={"name": "Renamed"})
    stale = await client.patch(path, json={"name": "Again"}, headers={"If-Match": tag})
    assert_error(stale, 412, "precondition_failed")


async def test_a_retry_with_the_same_key_replays_the_first_answer(
    client: httpx.AsyncClient, sink: RecordingSink
) -> None:
    headers = {"Idempotency-Key": "create-1"}
    first = await client.post("/issues", json={"title": "Once"}, headers=headers)
    again = await client.post("/issues", json={"title": "Once"}, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["idempotency-replayed"] == "true"
    assert "idempotency-replayed" not in first.headers
    assert (await client.get("/issues")).json()["pagination"]["total"] == 1
    assert sink.types() == ["issue.created"]


async def test_the_same_key_with_another_body_is_refused(client: httpx.AsyncClient) -> None:
    headers = {"Idempotency-Key": "k"}
    await client.post("/issues", json={"title": "One"}, headers=headers)
    reused = await client.post("/issues", json={"title": "Two"}, headers=headers)
    assert_error(reused, 400, "idempotency_key_reused")
    elsewhere = await client.post("/projects", json={"title": "One"}, headers=headers)
    assert_error(elsewhere, 400, "idempotency_key_reused")
    assert (await client.get("/issues")).json()["pagination"]["total"] == 1


async def test_keys_last_24_hours(client: httpx.AsyncClient, clock: FakeClock) -> None:
    headers = {"Idempotency-Key": "daily"}
    first = await client.post("/issues", json={"title": "A"}, headers=headers)
    clock.advance(hours=23, minutes=59)
    assert (await client.post("/issues", json={"title": "A"}, headers=headers)).json() == (
        first.json()
    )
    clock.advance(minutes=1)
    later = await client.post("/issues", json={"title": "A"}, headers=headers)
    assert later.status_code == 201
    assert later.json()["id"] != first.json()["id"]


async def test_failed_requests_are_not_remembered(client: httpx.AsyncClient) -> None:
    headers = {"Idempotency-Key": "fix-and-retry"}
    assert_error(await client.post("/issues", json={}, headers=headers), 400, "invalid_request")
    fixed = await client.post("/issues", json={"title": "Fixed"}, headers=headers)
    assert fixed.status_code == 201


async def test_keys_belong_to_one_api_key(
    client: httpx.AsyncClient, open_client: Callable[[str | None], Any], make_key: MakeKey
) -> None:
    headers = {"Idempotency-Key": "shared"}
    mine = await client.post("/issues", json={"title": "A"}, headers=headers)
    async with open_client(make_key()) as colleague:
        theirs = await colleague.post("/issues", json={"title": "A"}, headers=headers)
    assert theirs.status_code == 201
    assert theirs.json()["id"] != mine.json()["id"]


async def test_bulk_and_comments_replay_too(client: httpx.AsyncClient) -> None:
    issue = await create_issue(client)
    headers = {"Idempotency-Key": "bulk-1"}
    body = {"operations": [{"op": "create", "fields": {"title": "B"}}]}
    first = await client.post("/issues/bulk", json=body, headers=headers)
    assert (await client.post("/issues/bulk", json=body, headers=headers)).json() == first.json()
    comment = {"issue_id": issue["id"], "body": "c"}
    one = await client.post("/comments", json=comment, headers={"Idempotency-Key": "c"})
    two = await client.post("/comments", json=comment, headers={"Idempotency-Key": "c"})
    assert one.json() == two.json()
    assert (await client.get("/issues")).json()["pagination"]["total"] == 2


async def test_an_over_long_key_is_refused(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/issues", json={"title": "A"}, headers={"Idempotency-Key": "k" * 256}
    )
    error = assert_error(response, 400, "invalid_request")
    assert error["details"][0]["field"] == "Idempotency-Key"
    ok = await client.post("/issues", json={"title": "A"}, headers={"Idempotency-Key": "k" * 255})
    assert ok.status_code == 201
