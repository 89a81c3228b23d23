"""Each endpoint method sends what SPEC and CONTRACT say, and reads the answer into models."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from pytest_httpx import HTTPXMock

from accounts.secret import Secret
from sync.client import ApiClient, Response
from sync.errors import ProtocolError, RateLimited
from sync.models import BulkCreate, BulkDelete, BulkUpdate, Comment, Issue, Page, Project, Webhook
from sync.ratelimit import RateLimiter, RequestClass

ISSUE = {"id": "iss_1", "title": "t", "updated_at": "2026-11-21T15:33:11.561385Z"}
PROJECT = {"id": "prj_1", "key": "CORE", "name": "Core"}
COMMENT = {"id": "cmt_1", "issue_id": "iss_1", "body": "hi", "author": "usr_1"}
USER = {"id": "usr_1", "name": "Ada", "email": "ada@example.test"}
WEBHOOK = {"id": "whk_1", "url": "https://hook.test/", "events": ["*"], "secret": "s3"}


def envelope(*records: dict[str, Any]) -> dict[str, Any]:
    return {"data": list(records), "pagination": {"page": 1, "per_page": 25, "total": len(records)}}


Call = Callable[[ApiClient], Awaitable[Response[Any]]]

CASES: list[tuple[str, Call, str, str, dict[str, str], Any, int, Any]] = [
    ("me", lambda c: c.me(), "GET", "/v1/me", {}, None, 200, {"plan": "pro"}),
    (
        "list_issues",
        lambda c: c.list_issues(
            page=2,
            per_page=50,
            updated_after=datetime(2026, 11, 21, 15, 33, 11, 561385, UTC),
            include_deleted=True,
            status="todo",
            label=["bug", "ui"],
        ),
        "GET",
        "/v1/issues",
        {
            "page": "2",
            "per_page": "50",
            "updated_after": "2026-11-21T15:33:11.561385Z",
            "include_deleted": "true",
            "status": "todo",
            "label": "bug",
        },
        None,
        200,
        envelope(ISSUE),
    ),
    (
        "list_issues with the server's own cursor string",
        lambda c: c.list_issues(updated_after="2026-11-21T15:33:11Z"),
        "GET",
        "/v1/issues",
        {"updated_after": "2026-11-21T15:33:11Z"},
        None,
        200,
        envelope(),
    ),
    ("get_issue", lambda c: c.get_issue("iss_1"), "GET", "/v1/issues/iss_1", {}, None, 200, ISSUE),
    (
        "get_issue quotes an opaque id",
        lambda c: c.get_issue("a/b c"),
        "GET",
        "/v1/issues/a%2Fb%20c",
        {},
        None,
        200,
        ISSUE,
    ),
    (
        "create_issue",
        lambda c: c.create_issue({"title": "t", "priority": "high"}),
        "POST",
        "/v1/issues",
        {},
        {"title": "t", "priority": "high"},
        201,
        ISSUE,
    ),
    (
        "update_issue",
        lambda c: c.update_issue("iss_1", {"status": "done"}),
        "PATCH",
        "/v1/issues/iss_1",
        {},
        {"status": "done"},
        200,
        ISSUE,
    ),
    (
        "delete_issue",
        lambda c: c.delete_issue("iss_1"),
        "DELETE",
        "/v1/issues/iss_1",
        {},
        None,
        200,
        ISSUE,
    ),
    (
        "list_projects",
        lambda c: c.list_projects(per_page=10),
        "GET",
        "/v1/projects",
        {"per_page": "10"},
        None,
        200,
        envelope(PROJECT),
    ),
    (
        "get_project",
        lambda c: c.get_project("prj_1"),
        "GET",
        "/v1/projects/prj_1",
        {},
        None,
        200,
        PROJECT,
    ),
    (
        "create_project",
        lambda c: c.create_project({"key": "CORE", "name": "Core"}),
        "POST",
        "/v1/projects",
        {},
        {"key": "CORE", "name": "Core"},
        201,
        PROJECT,
    ),
    (
        "update_project",
        lambda c: c.update_project("prj_1", {"state": "archived"}),
        "PATCH",
        "/v1/projects/prj_1",
        {},
        {"state": "archived"},
        200,
        PROJECT,
    ),
    (
        "delete_project",
        lambda c: c.delete_project("prj_1"),
        "DELETE",
        "/v1/projects/prj_1",
        {},
        None,
        200,
        PROJECT,
    ),
    (
        "list_comments",
        lambda c: c.list_comments("iss_1", per_page=5),
        "GET",
        "/v1/comments",
        {"issue_id": "iss_1", "per_page": "5"},
        None,
        200,
        envelope(COMMENT),
    ),
    (
        "create_comment",
        lambda c: c.create_comment("iss_1", "hi"),
        "POST",
        "/v1/comments",
        {},
        {"issue_id": "iss_1", "body": "hi"},
        201,
        COMMENT,
    ),
    (
        "update_comment",
        lambda c: c.update_comment("cmt_1", "edited"),
        "PATCH",
        "/v1/comments/cmt_1",
        {},
        {"body": "edited"},
        200,
        COMMENT,
    ),
    (
        "delete_comment",
        lambda c: c.delete_comment("cmt_1"),
        "DELETE",
        "/v1/comments/cmt_1",
        {},
        None,
        200,
        COMMENT,
    ),
    (
        "list_users",
        lambda c: c.list_users(page=1),
        "GET",
        "/v1/users",
        {"page": "1"},
        None,
        200,
        envelope(USER),
    ),
    (
        "search",
        lambda c: c.search("crash on start", per_page=5),
        "GET",
        "/v1/search",
        {"q": "crash on start", "per_page": "5"},
        None,
        200,
        envelope(ISSUE),
    ),
    (
        "bulk",
        lambda c: c.bulk(
            [
                BulkCreate({"title": "n"}),
                BulkUpdate("iss_1", {"priority": "low"}),
                BulkDelete("iss_2"),
            ]
        ),
        "POST",
        "/v1/issues/bulk",
        {},
        {
            "operations": [
                {"op": "create", "fields": {"title": "n"}},
                {"op": "update", "id": "iss_1", "changes": {"priority": "low"}},
                {"op": "delete", "id": "iss_2"},
            ]
        },
        200,
        {"data": [{"index": 0, "status": 201, "issue": ISSUE}]},
    ),
    (
        "create_webhook",
        lambda c: c.create_webhook("https://hook.test/", ["issue.created"], secret="s3"),
        "POST",
        "/v1/webhooks",
        {},
        {"url": "https://hook.test/", "events": ["issue.created"], "secret": "s3"},
        201,
        WEBHOOK,
    ),
    (
        "create_webhook without a secret",
        lambda c: c.create_webhook("https://hook.test/", ["*"]),
        "POST",
        "/v1/webhooks",
        {},
        {"url": "https://hook.test/", "events": ["*"]},
        201,
        WEBHOOK,
    ),
    (
        "list_webhooks",
        lambda c: c.list_webhooks(),
        "GET",
        "/v1/webhooks",
        {},
        None,
        200,
        envelope(WEBHOOK),
    ),
    (
        "get_webhook",
        lambda c: c.get_webhook("whk_1"),
        "GET",
        "/v1/webhooks/whk_1",
        {},
        None,
        200,
        WEBHOOK,
    ),
    (
        "update_webhook",
        lambda c: c.update_webhook("whk_1", {"events": ["*"]}),
        "PATCH",
        "/v1/webhooks/whk_1",
        {},
        {"events": ["*"]},
        200,
        WEBHOOK,
    ),
    (
        "delete_webhook",
        lambda c: c.delete_webhook("whk_1"),
        "DELETE",
        "/v1/webhooks/whk_1",
        {},
        None,
        200,
        WEBHOOK,
    ),
]


@pytest.mark.parametrize(
    ("call", "method", "path", "params", "body", "status", "answer"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
async def test_each_endpoint_sends_the_documented_request(
    client: ApiClient,
    httpx_mock: HTTPXMock,
    call: Call,
    method: str,
    path: str,
    params: dict[str, str],
    body: Any,
    status: int,
    answer: Any,
) -> None:
    httpx_mock.add_response(status_code=status, json=answer)
    response = await call(client)
    request = httpx_mock.get_requests()[0]
    assert request.method == method
    assert request.url.raw_path.split(b"?")[0].decode() == path
    assert dict(request.url.params) == params
    assert (json.loads(request.content) if request.content else None) == body
    assert response.meta.status == status


async def test_multi_valued_filters_repeat_the_parameter(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    httpx_mock.add_response(json=envelope())
    await client.list_issues(label=["bug", "ui"])
    assert httpx_mock.get_requests()[0].url.params.get_list("label") == ["bug", "ui"]


async def test_answers_are_parsed_into_their_models(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    for answer in (envelope(ISSUE), PROJECT, envelope(COMMENT), WEBHOOK):
        httpx_mock.add_response(json=answer)
    issues = (await client.list_issues()).value
    project = (await client.get_project("prj_1")).value
    comments = (await client.list_comments("iss_1")).value
    webhook = (await client.get_webhook("whk_1")).value
    assert isinstance(issues, Page) and isinstance(issues.data[0], Issue)
    assert isinstance(project, Project)
    assert isinstance(comments.data[0], Comment)
    assert isinstance(webhook, Webhook) and webhook.secret == "s3"


async def test_bulk_results_come_back_per_operation(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    httpx_mock.add_response(
        json={
            "data": [
                {"index": 0, "status": 200, "issue": ISSUE},
                {
                    "index": 1,
                    "status": 400,
                    "error": {"code": "invalid_transition", "message": "no"},
                },
            ]
        }
    )
    results = (await client.bulk([BulkUpdate("iss_1", {}), BulkUpdate("iss_2", {})])).value
    assert [(r.index, r.ok) for r in results] == [(0, True), (1, False)]
    assert results[1].error is not None and results[1].error.code == "invalid_transition"


async def test_writes_send_idempotency_keys_and_preconditions(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    for _ in range(4):
        httpx_mock.add_response(status_code=201, json=ISSUE)
    httpx_mock.add_response(json={"data": []})
    await client.create_issue({"title": "t"}, idempotency_key="op-1")
    await client.update_issue("iss_1", {"title": "u"}, if_match='"v3"')
    await client.delete_issue("iss_1", if_match='"v4"')
    await client.create_comment("iss_1", "hi", idempotency_key="op-2")
    await client.bulk([BulkDelete("iss_1")], idempotency_key="op-3")
    sent = httpx_mock.get_requests()
    assert sent[0].headers["idempotency-key"] == "op-1"
    assert sent[1].headers["if-match"] == '"v3"'
    assert sent[2].headers["if-match"] == '"v4"'
    assert sent[3].headers["idempotency-key"] == "op-2"
    assert sent[4].headers["idempotency-key"] == "op-3"
    assert "if-match" not in sent[0].headers and "idempotency-key" not in sent[1].headers


async def test_me_tells_the_limiter_the_plan(
    httpx_mock: HTTPXMock, limiter: RateLimiter, base_url: str, api_key: str
) -> None:
    httpx_mock.add_response(json={"workspace": {"id": "wsp_1", "plan": "pro"}, "plan": None})
    async with ApiClient(base_url, Secret(api_key), limiter=limiter) as client:
        me = (await client.me()).value
    assert me.effective_plan == "pro"
    assert limiter.plan.name == "pro"


async def test_every_request_goes_through_the_limiter_in_its_bucket(
    httpx_mock: HTTPXMock, limiter: RateLimiter, request_log: Any, base_url: str, api_key: str
) -> None:
    httpx_mock.add_response(json=envelope(), is_reusable=True)
    async with ApiClient(base_url, Secret(api_key), limiter=limiter) as client:
        await client.search("x")
        await client.with_request_class(RequestClass.BACKGROUND).list_issues()
        with pytest.raises(ProtocolError):
            await client.create_issue({"title": "t"})
    assert [bucket for _, bucket in request_log.reserved] == [
        "search",
        "background",
        "issues.create",
    ]


async def test_responses_reach_the_limiter_even_when_they_are_429s(
    httpx_mock: HTTPXMock, limiter: RateLimiter, vtime: Any, base_url: str, api_key: str
) -> None:
    httpx_mock.add_response(
        status_code=429, json={"error": {"code": "rate_limit_exceeded", "retry_after": 20}}
    )
    httpx_mock.add_response(json=envelope())
    async with ApiClient(base_url, Secret(api_key), limiter=limiter) as client:
        with pytest.raises(RateLimited):
            await client.list_issues()
        start = vtime.now
        await vtime.run(client.list_issues())
    assert 20 <= vtime.now - start <= 21
