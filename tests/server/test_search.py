"""Full-text search: prefix matching, ranking, isolation and hostile input."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import httpx
import pytest
from server_support import assert_error, create_issue

from server.records.search import MATCHES, RANKED
from server.search_query import MAX_TERMS, match_expression


async def _titles(client: httpx.AsyncClient, q: str, **params: object) -> list[str]:
    response = await client.get("/search", params={"q": q, **params})
    assert response.status_code == 200, response.text
    return [issue["title"] for issue in response.json()["data"]]


async def test_prefixes_match_and_every_word_must_match(client: httpx.AsyncClient) -> None:
    await create_issue(client, title="Crash when saving", description="Happens on mobile")
    await create_issue(client, title="Slow dashboard", description="The crashes are rare")
    await create_issue(client, title="Unrelated")
    assert sorted(await _titles(client, "cras")) == ["Crash when saving", "Slow dashboard"]
    assert await _titles(client, "crash mobile") == ["Crash when saving"]
    assert await _titles(client, "CRASH   sav") == ["Crash when saving"]
    assert await _titles(client, "crash save") == []
    assert await _titles(client, "nothing-like-this") == []


async def test_titles_rank_above_descriptions(client: httpx.AsyncClient) -> None:
    await create_issue(client, title="Dashboard colours", description="The login page is fine")
    await create_issue(client, title="Login fails", description="After login nothing loads")
    await create_issue(client, title="Profile page", description="Unrelated to anything")
    assert await _titles(client, "login") == ["Login fails", "Dashboard colours"]


async def test_diacritics_and_case_are_ignored(client: httpx.AsyncClient) -> None:
    await create_issue(client, title="Café menu crashes")
    assert await _titles(client, "cafe") == ["Café menu crashes"]


async def test_results_page_with_the_list_envelope(client: httpx.AsyncClient) -> None:
    for n in range(5):
        await create_issue(client, title=f"Timeout number {n}")
    response = await client.get("/search", params={"q": "timeout", "per_page": 2, "page": 3})
    body = response.json()
    assert body["pagination"] == {"page": 3, "per_page": 2, "total": 5}
    assert len(body["data"]) == 1
    assert set(body["data"][0]) >= {"id", "title", "status", "updated_at"}
    assert_error(
        await client.get("/search", params={"q": "x", "per_page": 0}), 400, "invalid_request"
    )


async def test_the_index_follows_updates_and_deletes(client: httpx.AsyncClient) -> None:
    issue = await create_issue(client, title="Old wording")
    await client.patch(
        f"/issues/{issue['id']}", json={"title": "Fresh wording", "status": "in_progress"}
    )
    assert await _titles(client, "old") == []
    assert await _titles(client, "fresh") == ["Fresh wording"]
    await client.patch(f"/issues/{issue['id']}", json={"description": "zebra"})
    assert await _titles(client, "zebra") == ["Fresh wording"]
    await client.delete(f"/issues/{issue['id']}")
    assert await _titles(client, "fresh") == []


async def test_other_workspaces_are_invisible(
    client: httpx.AsyncClient, other: httpx.AsyncClient
) -> None:
    await create_issue(other, title="Secret crash")
    await create_issue(client, title="Public crash")
    assert await _titles(client, "crash") == ["Public crash"]
    response = await client.get("/search", params={"q": "secret"})
    assert response.json()["pagination"]["total"] == 0


HOSTILE = [
    '"',
    '"crash',
    "crash*",
    "*",
    "NEAR(crash save)",
    "crash AND",
    "OR crash",
    "NOT crash",
    "(crash",
    "crash)",
    "title:crash",
    "^crash",
    "crash -save",
    "c'r\"a(s)h",
    "'; DROP TABLE issues; --",
    "{crash}",
    "crash + save",
    "\x00crash",
    "🔥 crash",
    "a" * 500,
    " ".join(["crash"] * 100),
]


@pytest.mark.parametrize("q", HOSTILE)
async def test_search_syntax_is_never_interpreted(client: httpx.AsyncClient, q: str) -> None:
    await create_issue(client, title="Crash when saving")
    response = await client.get("/search", params={"q": q})
    assert response.status_code in {200, 400}, response.text
    if response.status_code == 400:
        assert_error(response, 400, "invalid_request")
    assert (await client.get("/issues")).json()["pagination"]["total"] == 1


@pytest.mark.parametrize("q", ["crash*", "NOT crash", "(crash", '"crash', "crash)"])
async def test_operators_are_plain_text(client: httpx.AsyncClient, q: str) -> None:
    await create_issue(client, title="Crash when saving")
    assert await _titles(client, q) == (["Crash when saving"] if "NOT" not in q else [])


@pytest.mark.parametrize("q", ["", "   ", "***", "()", '""'])
async def test_a_query_without_words_is_400(client: httpx.AsyncClient, q: str) -> None:
    error = assert_error(await client.get("/search", params={"q": q}), 400, "invalid_request")
    assert error["details"][0]["field"] == "q"


async def test_q_is_required_and_bounded(client: httpx.AsyncClient) -> None:
    assert_error(await client.get("/search"), 400, "invalid_request")
    assert_error(await client.get("/search", params={"q": "a" * 501}), 400, "invalid_request")


def test_the_query_builder_quotes_every_word_as_a_prefix() -> None:
    assert match_expression("crash on save") == '"crash"* "on"* "save"*'
    assert match_expression('NEAR("a" OR b*)') == '"NEAR"* "a"* "OR"* "b"*'
    assert match_expression("snake_case über") == '"snake"* "case"* "über"*'
    assert match_expression(" \t*()^:-+") is None
    assert match_expression(" ".join(f"w{n}" for n in range(50))).count('"*') == MAX_TERMS


@pytest.mark.parametrize(
    ("select", "query"),
    [("count(*)", MATCHES), ("issues.*", MATCHES), ("issues.*", RANKED)],
)
async def test_the_full_text_index_drives_the_search_queries(
    client: httpx.AsyncClient, db_path: Path, select: str, query: str
) -> None:
    """With the issues table as the outer loop SQLite would run the MATCH once per issue of the
    workspace (a minute for 100,000 issues), so the plan must start from the index."""
    for n in range(30):
        await create_issue(client, title=f"Crash {n}")
    workspace_id = (await client.get("/me")).json()["workspace"]["id"]
    with closing(sqlite3.connect(db_path)) as conn:
        conn.execute("ANALYZE")
        plan = conn.execute(
            f"EXPLAIN QUERY PLAN SELECT {select} {query}", ('"crash"*', workspace_id)
        ).fetchall()
    assert plan[0][-1].startswith("SCAN issues_fts VIRTUAL TABLE"), plan
    assert not any("TEMP B-TREE" in step[-1] for step in plan), plan


async def test_equally_ranked_results_keep_creation_order_across_pages(
    client: httpx.AsyncClient,
) -> None:
    operations = [{"op": "create", "fields": {"title": "Crash report"}} for _ in range(60)]
    operations[30]["fields"]["title"] = "Crash crash"
    created = await client.post("/issues/bulk", json={"operations": operations})
    order = [result["issue"]["id"] for result in created.json()["data"]]
    pages = []
    for page in (1, 2, 3):
        response = await client.get("/search", params={"q": "crash", "per_page": 25, "page": page})
        pages.extend(issue["id"] for issue in response.json()["data"])
    assert pages == [order[30], *order[:30], *order[31:]]
