"""A keyed POST whose answer never reached the client is applied once, however it is retried.

The write commits before its answer is sent. If the connection (or the whole process) dies in
between, the client knows nothing and sends the same request with the same key again; the
service must find the key and replay the first answer, not make the record a second time. Each
test below loses the first answer after the write committed (the ASGI `send` fails, as it does
when the peer is gone) and then retries through an ordinary client.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from server_support import MakeKey, RecordingSink, bearer, create_issue
from starlette.types import Message

from server.app import API_PREFIX


class AnswerLost(Exception):
    """The peer went away before the answer could be sent."""


async def post_losing_the_answer(
    app: FastAPI, api_key: str, path: str, body: dict[str, Any], idempotency_key: str
) -> None:
    """POST `body` to `path` and fail the moment the app starts to answer."""
    content = encoded(body)
    headers = {
        **bearer(api_key),
        "content-type": "application/json",
        "content-length": str(len(content)),
        "idempotency-key": idempotency_key,
    }
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": API_PREFIX + path,
        "raw_path": (API_PREFIX + path).encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(name.lower().encode(), value.encode()) for name, value in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("test", 80),
    }
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": content, "more_body": False}

    async def send(message: Message) -> None:
        raise AnswerLost(message["type"])

    with pytest.raises(AnswerLost):
        await app(scope, receive, send)


def encoded(body: dict[str, Any]) -> bytes:
    """The body's bytes: a retry sends the very same bytes, or it is another request."""
    return json.dumps(body).encode()


async def retried(
    client: httpx.AsyncClient, path: str, body: dict[str, Any], idempotency_key: str
) -> httpx.Response:
    headers = {"Idempotency-Key": idempotency_key, "content-type": "application/json"}
    return await client.post(path, content=encoded(body), headers=headers)


async def total(client: httpx.AsyncClient, path: str) -> int:
    found: int = (await client.get(path)).json()["pagination"]["total"]
    return found


async def test_an_issue_whose_answer_was_lost_is_made_once(
    app: FastAPI,
    open_client: Callable[[str | None], Any],
    make_key: MakeKey,
    sink: RecordingSink,
) -> None:
    api_key = make_key()
    body = {"title": "Made while the line dropped"}
    await post_losing_the_answer(app, api_key, "/issues", body, "lost-1")
    async with open_client(api_key) as client:
        assert await total(client, "/issues") == 1
        retry = await retried(client, "/issues", body, "lost-1")
        assert retry.status_code == 201
        assert retry.headers["idempotency-replayed"] == "true"
        assert await total(client, "/issues") == 1
        made = (await client.get("/issues")).json()["data"][0]
        assert retry.json() == made
    assert sink.types() == ["issue.created"]


@pytest.mark.parametrize(
    ("path", "listing", "body"),
    [
        ("/projects", "/projects", {"name": "Lost answers"}),
        ("/comments", "/comments", {"issue_id": "ISSUE", "body": "Noted while away."}),
        ("/api-keys", "/api-keys", {"name": "CI", "permissions": ["issues:read"]}),
        ("/webhooks", "/webhooks", {"url": "http://127.0.0.1:9/a", "events": ["*"]}),
        (
            "/issues/bulk",
            "/issues",
            {"operations": [{"op": "create", "fields": {"title": "B"}}] * 3},
        ),
    ],
)
async def test_every_keyed_create_whose_answer_was_lost_is_made_once(
    app: FastAPI,
    open_client: Callable[[str | None], Any],
    make_key: MakeKey,
    path: str,
    listing: str,
    body: dict[str, Any],
) -> None:
    api_key = make_key()
    async with open_client(api_key) as client:
        if "issue_id" in body:
            body = {**body, "issue_id": (await create_issue(client))["id"]}
        before = await total(client, listing)
        await post_losing_the_answer(app, api_key, path, body, "lost-2")
        made = await total(client, listing) - before
        assert made >= 1
        retry = await retried(client, path, body, "lost-2")
        assert retry.status_code in (200, 201)
        assert retry.headers["idempotency-replayed"] == "true"
        assert await total(client, listing) - before == made
        again = await retried(client, path, body, "lost-2")
        assert again.json() == retry.json()


def test_every_post_route_is_covered_here(app: FastAPI) -> None:
    """A new POST route must keep its answer with its write, and be added to the list above."""
    paths: dict[str, dict[str, Any]] = app.openapi()["paths"]
    posts = {path.removeprefix(API_PREFIX) for path, methods in paths.items() if "post" in methods}
    assert posts == {"/issues", "/projects", "/comments", "/api-keys", "/webhooks", "/issues/bulk"}
