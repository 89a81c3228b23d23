"""Every failure answers in the published error body with one of the service's codes
(docs/api.md#error-codes)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_support import FakeClock, MakeKey, assert_error, bearer, create_issue

from server.app import create_app
from server.errors import RateLimitExceeded
from server.handlers import error_response

MIB = 1 << 20


@pytest.mark.parametrize(
    ("content", "content_type", "fragment"),
    [
        (b"{", "application/json", "not valid JSON"),
        (b'{"title": "x",}', "application/json", "not valid JSON"),
        (b"\xff\xfe", "application/json", "not valid JSON"),
        (b"[1, 2]", "application/json", "JSON object"),
        (b'"title"', "application/json", "JSON object"),
        (b"null", "application/json", "JSON object"),
        (b'{"title": "x"}', "text/plain", "JSON object"),
        (b"title=x", "application/x-www-form-urlencoded", "JSON object"),
        (b"", "application/json", "body is required"),
        (b'{"title": NaN}', "application/json", "`title`"),
        (b'{"title": 1e999}', "application/json", "`title`"),
        (b'{"title": "\\ud800"}', "application/json", "`title`"),
        (b'{"title": "x", "\\udfff": 1}', "application/json", "Invalid"),
        (b"[" * 100_000 + b"]" * 100_000, "application/json", ""),
    ],
)
async def test_bodies_that_are_not_a_json_object_are_400(
    client: httpx.AsyncClient, content: bytes, content_type: str, fragment: str
) -> None:
    response = await client.post("/issues", content=content, headers={"Content-Type": content_type})
    error = assert_error(response, 400, "invalid_request")
    assert fragment in error["message"]
    assert "Traceback" not in response.text


async def test_a_declared_length_over_one_mib_is_413(client: httpx.AsyncClient) -> None:
    body = json.dumps({"title": "x", "description": "y" * MIB}).encode()
    response = await client.post(
        "/issues", content=body, headers={"Content-Type": "application/json"}
    )
    error = assert_error(response, 413, "payload_too_large")
    assert str(MIB) in error["message"]
    assert (await client.get("/issues")).json()["pagination"]["total"] == 0


async def test_a_streamed_body_over_one_mib_is_413(client: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"title": "x", "description": "'
        for _ in range(20):
            yield b"y" * 65_536
        yield b'"}'

    response = await client.post(
        "/issues", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert "content-length" not in response.request.headers
    assert_error(response, 413, "payload_too_large")


async def test_a_streamed_body_over_the_limit_is_413_for_idempotent_posts_too(
    client: httpx.AsyncClient,
) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(17):
            yield b" " * 65_536

    response = await client.post(
        "/issues",
        content=chunks(),
        headers={"Content-Type": "application/json", "Idempotency-Key": "big"},
    )
    assert_error(response, 413, "payload_too_large")


async def test_exactly_one_mib_is_not_too_large(client: httpx.AsyncClient) -> None:
    padding = MIB - len(b'{"title": "x"}')
    body = b'{"title": "x"}' + b" " * padding
    assert len(body) == MIB
    response = await client.post(
        "/issues", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 201


@pytest.mark.parametrize("path", ["/nothing", "/issues/", "/issues/x/y", "/v1/issues"])
async def test_unknown_routes_are_404(client: httpx.AsyncClient, path: str) -> None:
    assert_error(await client.get(path), 404, "not_found")


@pytest.mark.parametrize(
    "url", ["http://test/v2/issues", "http://test/v0/me", "http://test/", "http://test/issues"]
)
async def test_other_versions_are_404(client: httpx.AsyncClient, url: str) -> None:
    assert_error(await client.get(url), 404, "not_found")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/issues"),
        ("DELETE", "/issues"),
        ("POST", "/me"),
        ("PUT", "/issues/x"),
        ("GET", "/issues/bulk/x"),
    ],
)
async def test_wrong_methods_keep_405_with_the_envelope(
    client: httpx.AsyncClient, method: str, path: str
) -> None:
    response = await client.request(method, path)
    if path.endswith("/x") and method == "GET":
        assert_error(response, 404, "not_found")
        return
    assert_error(response, 405, "method_not_allowed")
    assert response.headers["allow"]


class ExplodingSink:
    def emit(self, *args: Any) -> None:
        raise RuntimeError("secret internals: /etc/passwd")


async def test_unexpected_failures_are_500_without_details(
    db_path: Path, clock: FakeClock, make_key: MakeKey
) -> None:
    app = create_app(db_path, clock=clock, events=ExplodingSink())
    transport = httpx.ASGITransport(app, raise_app_exceptions=False)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://test/v1", headers=bearer(make_key())
    ) as client:
        response = await client.post("/issues", json={"title": "x"})
        assert (await client.get("/issues")).status_code == 200
    error = assert_error(response, 500, "internal_error")
    assert "secret" not in response.text and "Traceback" not in response.text
    assert set(error) == {"code", "message"}


def test_rate_limit_errors_carry_retry_after() -> None:
    response = error_response(RateLimitExceeded(7))
    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"
    body = json.loads(bytes(response.body))
    assert body["error"]["code"] == "rate_limit_exceeded"
    assert body["error"]["retry_after"] == 7
    assert "7 seconds" in body["error"]["message"]


async def test_path_ids_with_odd_characters_are_404(client: httpx.AsyncClient) -> None:
    for odd in ("%00", "%F0%9F%94%A5", "'%20OR%201=1", "a" * 300, "%ED%A0%80"):
        assert_error(await client.get(f"/issues/{odd}"), 404, "not_found")
        assert_error(await client.patch(f"/issues/{odd}", json={"title": "x"}), 404, "not_found")


async def test_query_values_with_odd_characters_are_harmless(client: httpx.AsyncClient) -> None:
    await create_issue(client)
    for value in ("\x00", "%ED%A0%80", "🔥", "' OR 1=1 --"):
        response = await client.get("/issues", params={"label": value, "assignee": value})
        assert response.json()["data"] == []


async def test_validation_errors_list_every_problem(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/issues", json={"title": "", "priority": "p0", "labels": "x", "extra": 1}
    )
    error = assert_error(response, 400, "invalid_request")
    fields = sorted(detail["field"] for detail in error["details"])
    assert fields == ["extra", "labels", "priority", "title"]


async def test_errors_keep_the_envelope_for_every_client(
    open_client: Callable[[str | None], Any],
) -> None:
    async with open_client(None) as anonymous:
        for response in (await anonymous.get("/issues"), await anonymous.get("http://test/v9/x")):
            assert set(response.json()) == {"error"}
