"""Every write reaches the event sink once it has committed, and only then."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
from server_support import FakeClock, MakeKey, RecordingSink, bearer, create_issue

from server.app import create_app


async def test_issue_events_carry_the_record_and_changed_fields(
    client: httpx.AsyncClient, sink: RecordingSink
) -> None:
    issue = await create_issue(client, title="A", priority="low")
    workspace_id = (await client.get("/me")).json()["workspace"]["id"]
    await client.patch(f"/issues/{issue['id']}", json={"title": "B", "priority": "low"})
    await client.patch(f"/issues/{issue['id']}", json={"title": "B"})
    deleted = (await client.delete(f"/issues/{issue['id']}")).json()
    assert sink.types() == ["issue.created", "issue.updated", "issue.deleted"]
    (ws1, _, created, none1), (_, _, updated, previous), (_, _, gone, none2) = sink.events
    assert ws1 == workspace_id
    assert created == issue and none1 is None and none2 is None
    assert updated["title"] == "B"
    assert previous == {"title": "A"}
    assert gone == deleted


async def test_project_and_comment_events(client: httpx.AsyncClient, sink: RecordingSink) -> None:
    project = (await client.post("/projects", json={"name": "Web"})).json()
    await client.patch(f"/projects/{project['id']}", json={"state": "archived"})
    issue = await create_issue(client)
    comment = (await client.post("/comments", json={"issue_id": issue["id"], "body": "x"})).json()
    await client.patch(f"/comments/{comment['id']}", json={"body": "y"})
    await client.delete(f"/comments/{comment['id']}")
    await client.delete(f"/projects/{project['id']}")
    assert sink.types() == [
        "project.created",
        "project.updated",
        "issue.created",
        "comment.created",
        "comment.updated",
        "comment.deleted",
        "project.deleted",
    ]
    assert sink.events[1][3] == {"state": "active"}
    assert sink.events[4][3] == {"body": "x"}


async def test_deleting_an_issue_announces_its_comments(
    client: httpx.AsyncClient, sink: RecordingSink
) -> None:
    issue = await create_issue(client)
    await client.post("/comments", json={"issue_id": issue["id"], "body": "x"})
    sink.events.clear()
    await client.delete(f"/issues/{issue['id']}")
    assert sink.types() == ["comment.deleted", "issue.deleted"]


async def test_refused_writes_and_reads_emit_nothing(
    client: httpx.AsyncClient, sink: RecordingSink
) -> None:
    issue = await create_issue(client, status="done")
    sink.events.clear()
    await client.patch(f"/issues/{issue['id']}", json={"status": "in_review"})
    await client.patch(f"/issues/{issue['id']}", json={"status": "done"})
    await client.post("/issues", json={"title": ""})
    await client.get("/issues")
    await client.get(f"/issues/{issue['id']}")
    assert sink.events == []


class CommitCheckingSink:
    """Looks each emitted record up through its own connection, outside the writer's."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self.visible: list[bool] = []

    def emit(self, workspace_id: str, event_type: str, obj: dict[str, Any], previous: Any) -> None:
        with closing(sqlite3.connect(self.db_path)) as conn:
            row = conn.execute("SELECT 1 FROM issues WHERE id = ?", (obj["id"],)).fetchone()
        self.visible.append(row is not None)


async def test_events_are_emitted_after_the_commit(
    db_path: Path, clock: FakeClock, make_key: MakeKey
) -> None:
    sink = CommitCheckingSink(db_path)
    app = create_app(db_path, clock=clock, events=sink)
    transport = httpx.ASGITransport(app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=transport, base_url="http://test/v1", headers=bearer(make_key())
        ) as client,
    ):
        await create_issue(client)
        await client.post(
            "/issues/bulk", json={"operations": [{"op": "create", "fields": {"title": "b"}}]}
        )
    assert sink.visible == [True, True]


async def test_clock_does_not_matter_for_order(
    client: httpx.AsyncClient, sink: RecordingSink, clock: FakeClock
) -> None:
    first = await create_issue(client)
    clock.advance(days=-30)
    second = await create_issue(client)
    assert [event[2]["id"] for event in sink.events] == [first["id"], second["id"]]
    assert second["updated_at"] > first["updated_at"]
