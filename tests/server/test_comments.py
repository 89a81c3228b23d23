"""Comments: creation, listing per issue, author-only changes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from server_support import FakeClock, MakeKey, assert_error, create_issue


async def test_create_get_list(client: httpx.AsyncClient) -> None:
    issue = await create_issue(client)
    other_issue = await create_issue(client)
    me = (await client.get("/me")).json()["user"]
    response = await client.post("/comments", json={"issue_id": issue["id"], "body": "First!"})
    assert response.status_code == 201
    comment = response.json()
    assert comment["id"].startswith("cmt_")
    assert (comment["issue_id"], comment["body"], comment["author"]) == (
        issue["id"],
        "First!",
        me["id"],
    )
    await client.post("/comments", json={"issue_id": other_issue["id"], "body": "elsewhere"})
    assert (await client.get(f"/comments/{comment['id']}")).json() == comment
    listed = (await client.get("/comments", params={"issue_id": issue["id"]})).json()
    assert listed["data"] == [comment]
    assert listed["pagination"]["total"] == 1
    assert (await client.get("/comments")).json()["pagination"]["total"] == 2
    nothing = await client.get("/comments", params={"issue_id": "iss_unknown"})
    assert nothing.json()["data"] == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"body": "x"}, "issue_id"),
        ({"issue_id": "iss_nothing", "body": "x"}, "issue_id"),
        ({"issue_id": "{issue}"}, "body"),
        ({"issue_id": "{issue}", "body": ""}, "body"),
        ({"issue_id": "{issue}", "body": "x" * 65_536}, "body"),
        ({"issue_id": "{issue}", "body": 5}, "body"),
        ({"issue_id": "{issue}", "body": "x", "author": "usr_me"}, "author"),
    ],
)
async def test_invalid_comments_are_refused(
    client: httpx.AsyncClient, body: dict[str, Any], field: str
) -> None:
    issue = await create_issue(client)
    filled = {k: v.format(issue=issue["id"]) if isinstance(v, str) else v for k, v in body.items()}
    error = assert_error(await client.post("/comments", json=filled), 400, "invalid_request")
    assert error["details"][0]["field"] == field


async def test_only_the_author_may_edit_or_delete(
    open_client: Callable[[str | None], Any], make_key: MakeKey, clock: FakeClock
) -> None:
    async with (
        open_client(make_key(user="Ada")) as ada,
        open_client(make_key(user="Bob")) as bob,
    ):
        issue = await create_issue(ada)
        comment = (await ada.post("/comments", json={"issue_id": issue["id"], "body": "a"})).json()
        error = assert_error(
            await bob.patch(f"/comments/{comment['id']}", json={"body": "b"}), 403, "forbidden"
        )
        assert "author" in error["message"]
        assert_error(await bob.delete(f"/comments/{comment['id']}"), 403, "forbidden")
        assert (await bob.get(f"/comments/{comment['id']}")).json() == comment

        clock.advance(seconds=1)
        edited = await ada.patch(f"/comments/{comment['id']}", json={"body": "a, edited"})
        assert edited.status_code == 200
        assert edited.json()["body"] == "a, edited"
        assert edited.json()["updated_at"] > comment["updated_at"]
        deleted = await ada.delete(f"/comments/{comment['id']}")
        assert deleted.json() == edited.json()
        assert_error(await ada.get(f"/comments/{comment['id']}"), 404, "not_found")


async def test_an_edit_to_the_same_body_is_a_no_op(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    issue = await create_issue(client)
    comment = (await client.post("/comments", json={"issue_id": issue["id"], "body": "a"})).json()
    clock.advance(seconds=1)
    for body in ({"body": "a"}, {}):
        assert (await client.patch(f"/comments/{comment['id']}", json=body)).json() == comment
    assert_error(
        await client.patch(f"/comments/{comment['id']}", json={"body": None}),
        400,
        "invalid_request",
    )
