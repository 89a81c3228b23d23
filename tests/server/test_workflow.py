"""The status workflow, every pair of states (docs/api.md#statuses-and-workflow, written out
independently)."""

from __future__ import annotations

import itertools

import httpx
import pytest
from server_support import FakeClock, assert_error, create_issue

STATES = ("backlog", "todo", "in_progress", "in_review", "done", "canceled")
ALLOWED = {
    ("backlog", "todo"),
    ("backlog", "in_progress"),
    ("backlog", "canceled"),
    ("todo", "backlog"),
    ("todo", "in_progress"),
    ("todo", "canceled"),
    ("in_progress", "todo"),
    ("in_progress", "in_review"),
    ("in_progress", "done"),
    ("in_progress", "canceled"),
    ("in_review", "in_progress"),
    ("in_review", "done"),
    ("in_review", "canceled"),
    ("done", "todo"),
    ("canceled", "todo"),
}
MOVES = [(a, b) for a, b in itertools.product(STATES, STATES) if a != b]


@pytest.mark.parametrize(("current", "target"), MOVES)
async def test_each_move_is_allowed_or_refused_as_the_table_says(
    client: httpx.AsyncClient, clock: FakeClock, current: str, target: str
) -> None:
    issue = await create_issue(client, status=current)
    clock.advance(seconds=1)
    response = await client.patch(f"/issues/{issue['id']}", json={"status": target})
    if (current, target) in ALLOWED:
        assert response.status_code == 200, response.text
        assert response.json()["status"] == target
        assert response.json()["updated_at"] > issue["updated_at"]
    else:
        error = assert_error(response, 400, "invalid_transition")
        assert f"`{current}`" in error["message"] and f"`{target}`" in error["message"]
        assert (await client.get(f"/issues/{issue['id']}")).json() == issue


@pytest.mark.parametrize("state", STATES)
async def test_setting_the_same_status_is_a_no_op(
    client: httpx.AsyncClient, clock: FakeClock, state: str
) -> None:
    issue = await create_issue(client, status=state)
    clock.advance(seconds=1)
    response = await client.patch(f"/issues/{issue['id']}", json={"status": state})
    assert response.status_code == 200
    assert response.json() == issue


async def test_a_refused_move_changes_no_other_field(client: httpx.AsyncClient) -> None:
    issue = await create_issue(client, status="done")
    response = await client.patch(
        f"/issues/{issue['id']}", json={"status": "in_review", "title": "renamed"}
    )
    assert_error(response, 400, "invalid_transition")
    assert (await client.get(f"/issues/{issue['id']}")).json()["title"] == issue["title"]
