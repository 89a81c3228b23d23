"""Lists: the published envelope, paging bounds, filters, sync order and tombstones."""

from __future__ import annotations

import httpx
import pytest
from server_support import FakeClock, assert_error, create_issue


async def test_the_envelope_and_paging(client: httpx.AsyncClient) -> None:
    created = [await create_issue(client, title=f"Issue {n}") for n in range(7)]
    first = (await client.get("/issues", params={"per_page": 3})).json()
    assert set(first) == {"data", "pagination"}
    assert first["pagination"] == {"page": 1, "per_page": 3, "total": 7}
    pages = [first["data"]]
    for page in (2, 3, 4):
        response = await client.get("/issues", params={"per_page": 3, "page": page})
        pages.append(response.json()["data"])
    assert [len(page) for page in pages] == [3, 3, 1, 0]
    assert [issue for page in pages for issue in page] == created


async def test_default_page_size_is_25(client: httpx.AsyncClient) -> None:
    for n in range(27):
        await create_issue(client, title=f"n{n}")
    page = (await client.get("/issues")).json()
    assert page["pagination"] == {"page": 1, "per_page": 25, "total": 27}
    assert len(page["data"]) == 25
    assert len((await client.get("/issues", params={"per_page": 100})).json()["data"]) == 27


@pytest.mark.parametrize("path", ["/issues", "/projects", "/comments", "/users", "/workspaces"])
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"page": 0}, "page"),
        ({"page": -1}, "page"),
        ({"page": "one"}, "page"),
        ({"per_page": 0}, "per_page"),
        ({"per_page": 101}, "per_page"),
        ({"per_page": 1000}, "per_page"),
        ({"updated_after": "yesterday"}, "updated_after"),
        ({"updated_after": "2026-13-01T00:00:00Z"}, "updated_after"),
        ({"include_deleted": "maybe"}, "include_deleted"),
    ],
)
async def test_bad_paging_parameters_are_400(
    client: httpx.AsyncClient, path: str, params: dict[str, object], field: str
) -> None:
    error = assert_error(await client.get(path, params=params), 400, "invalid_request")
    assert error["details"][0]["field"] == field


async def test_a_page_beyond_the_end_is_empty(client: httpx.AsyncClient) -> None:
    await create_issue(client)
    for page in (2, 10**30):
        response = await client.get("/issues", params={"page": page})
        assert response.status_code == 200
        assert response.json()["data"] == []
        assert response.json()["pagination"]["total"] == 1


async def test_updated_after_is_strict_and_orders_by_update(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    first = await create_issue(client, title="first")
    clock.advance(seconds=1)
    second = await create_issue(client, title="second")
    clock.advance(seconds=1)
    first = (await client.patch(f"/issues/{first['id']}", json={"title": "first again"})).json()

    everything = await client.get("/issues", params={"updated_after": "2000-01-01T00:00:00Z"})
    assert [issue["id"] for issue in everything.json()["data"]] == [second["id"], first["id"]]
    strictly = await client.get("/issues", params={"updated_after": second["updated_at"]})
    assert strictly.json()["data"] == [first]
    assert strictly.json()["pagination"]["total"] == 1
    none_after = await client.get("/issues", params={"updated_after": first["updated_at"]})
    assert none_after.json()["data"] == []


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-21T16:33:11.561385+01:00",
        "2026-11-21T15:33:11.561385",
        "2026-11-21 15:33:11.561385Z",
    ],
)
async def test_updated_after_accepts_offsets_and_naive_utc(
    client: httpx.AsyncClient, clock: FakeClock, text: str
) -> None:
    clock.advance(microseconds=10)
    issue = await create_issue(client)
    response = await client.get("/issues", params={"updated_after": text})
    assert response.json()["data"] == [issue]


async def test_keyset_paging_sees_every_change_once(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    """A client moving its cursor to the last `updated_at` it saw misses nothing, even with
    a clock that stands still, because stamps are unique per workspace."""
    issues = [await create_issue(client, title=f"t{n}") for n in range(5)]
    for issue in issues[:3]:
        await client.patch(f"/issues/{issue['id']}", json={"priority": "high"})
    cursor, seen = "1970-01-01T00:00:00Z", []
    while True:
        page = await client.get("/issues", params={"updated_after": cursor, "per_page": 2})
        data = page.json()["data"]
        if not data:
            break
        keys = [(issue["updated_at"], issue["id"]) for issue in data]
        assert keys == sorted(keys)
        seen.extend(issue["id"] for issue in data)
        cursor = data[-1]["updated_at"]
    expected = [issue["id"] for issue in issues[3:]] + [issue["id"] for issue in issues[:3]]
    assert seen == expected


async def test_tombstones_report_deletions_after_the_cursor(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    early = await create_issue(client, title="deleted early")
    await client.delete(f"/issues/{early['id']}")
    clock.advance(seconds=1)
    kept = await create_issue(client, title="kept")
    cursor = kept["updated_at"]
    doomed = await create_issue(client, title="doomed")
    clock.advance(seconds=1)
    await client.delete(f"/issues/{doomed['id']}")
    deletion = clock.now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    plain = await client.get("/issues", params={"updated_after": cursor})
    assert plain.json()["data"] == []
    response = await client.get(
        "/issues", params={"updated_after": cursor, "include_deleted": True}
    )
    assert response.json()["data"] == [
        {"id": doomed["id"], "deleted": True, "updated_at": deletion}
    ]
    assert response.json()["pagination"]["total"] == 1
    everything = (await client.get("/issues", params={"include_deleted": "true"})).json()
    assert [(item["id"], item.get("deleted", False)) for item in everything["data"]] == [
        (early["id"], True),
        (kept["id"], False),
        (doomed["id"], True),
    ]


async def test_tombstones_mix_with_records_in_one_order(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    a = await create_issue(client, title="a")
    b = await create_issue(client, title="b")
    await client.delete(f"/issues/{a['id']}")
    c = await create_issue(client, title="c")
    pages = []
    for page in (1, 2):
        response = await client.get(
            "/issues",
            params={
                "updated_after": "2000-01-01T00:00:00Z",
                "include_deleted": "true",
                "page": page,
                "per_page": 2,
            },
        )
        pages.append(response.json())
    items = pages[0]["data"] + pages[1]["data"]
    assert [item["id"] for item in items] == [b["id"], a["id"], c["id"]]
    assert items[1]["deleted"] is True
    assert pages[0]["pagination"]["total"] == 3
    stamps = [item["updated_at"] for item in items]
    assert stamps == sorted(stamps)


@pytest.mark.parametrize(("path", "kind"), [("/projects", "project"), ("/comments", "comment")])
async def test_projects_and_comments_leave_tombstones_too(
    client: httpx.AsyncClient, path: str, kind: str
) -> None:
    issue = await create_issue(client)
    bodies = {"project": {"name": "Web"}, "comment": {"issue_id": issue["id"], "body": "x"}}
    record = (await client.post(path, json=bodies[kind])).json()
    await client.delete(f"{path}/{record['id']}")
    response = await client.get(
        path, params={"updated_after": record["updated_at"], "include_deleted": "true"}
    )
    [tombstone] = response.json()["data"]
    assert tombstone["id"] == record["id"] and tombstone["deleted"] is True


async def test_issue_filters(client: httpx.AsyncClient) -> None:
    me = (await client.get("/me")).json()["user"]
    project = (await client.post("/projects", json={"name": "Web"})).json()
    a = await create_issue(client, status="backlog", priority="high", labels=["bug", "ux"])
    b = await create_issue(client, assignee=me["id"], project_id=project["id"], labels=["bug"])
    c = await create_issue(client, status="backlog", priority="low")

    async def ids(**params: str) -> list[str]:
        response = await client.get("/issues", params=params)
        assert response.status_code == 200, response.text
        return [issue["id"] for issue in response.json()["data"]]

    assert await ids(status="backlog") == [a["id"], c["id"]]
    assert await ids(priority="high") == [a["id"]]
    assert await ids(assignee=me["id"]) == [b["id"]]
    assert await ids(project_id=project["id"]) == [b["id"]]
    assert await ids(label="bug") == [a["id"], b["id"]]
    assert await ids(label="ux", status="backlog") == [a["id"]]
    assert await ids(label="nope") == []
    await client.patch(f"/issues/{a['id']}", json={"labels": ["ux"]})
    assert await ids(label="bug") == [b["id"]]
    assert_error(await client.get("/issues", params={"status": "open"}), 400, "invalid_request")
    assert_error(await client.get("/issues", params={"priority": "p1"}), 400, "invalid_request")
