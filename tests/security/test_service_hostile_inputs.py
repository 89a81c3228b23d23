"""Hostile input never makes the service fail: it is stored exactly as sent, or refused with a
4xx in the error envelope. Never a 500, never a stack trace, never a query that escapes.

Covers SQL and FTS syntax in search and filters, control characters and NUL, unicode edge
cases (escaped surrogates, RTL marks, combining characters, 4-byte emoji, very long text),
bodies over 1 MiB and deeply nested JSON on every route that takes a body.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from security_support import (
    HOOK_URL,
    ROUTES,
    MakeKey,
    OpenClient,
    SteppingClock,
    assert_error,
    assert_refusal,
    make_records,
)

MIB = 1 << 20

HOSTILE_TEXT = [
    "'; DROP TABLE issues; --",
    'x" OR 1=1 --',
    "NEAR(alpha beta) AND title:x* OR ^y NOT -z",
    "a\x00b",
    "\x00",
    "bell\x07 escape\x1b[31m del\x7f",
    "line\nbreak\r\ntab\tend",
    "\u202eevil.exe\u202c \u200f\u200e",
    "e\u0301\u0301\u0301 a\u0308\u0304",
    "😀 𝄞 👩‍👩‍👧‍👦 🇫🇷",
    "\ufeffbom \ufffe \uffff \U0010ffff",
    "%s %n {0} ${x} {{7*7}}",
    "<script>alert(1)</script>",
]
"""Each one fits every text field (≤ 50 characters, no surrounding whitespace to trim)."""


@pytest.fixture
async def client(open_client: OpenClient, make_key: MakeKey) -> AsyncIterator[httpx.AsyncClient]:
    async with open_client(make_key()) as opened:
        yield opened


def _stored(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code in {200, 201}, response.text
    record: dict[str, Any] = response.json()
    return record


async def test_hostile_text_is_stored_exactly_as_sent(
    client: httpx.AsyncClient, clock: SteppingClock
) -> None:
    for number, text in enumerate(HOSTILE_TEXT):
        clock.advance(minutes=1)
        fields = {"title": text, "description": text, "labels": [text]}
        issue = _stored(await client.post("/issues", json=fields))
        fetched = _stored(await client.get(f"/issues/{issue['id']}"))
        assert (fetched["title"], fetched["description"], fetched["labels"]) == (text, text, [text])
        patch = {"description": text * 2}
        edited = _stored(await client.patch(f"/issues/{issue['id']}", json=patch))
        assert edited["description"] == text * 2
        said = {"issue_id": issue["id"], "body": text}
        comment = _stored(await client.post("/comments", json=said))
        assert _stored(await client.get(f"/comments/{comment['id']}"))["body"] == text
        key = "".join(chr(ord("A") + int(digit)) for digit in f"{number:02d}")
        made = {"name": text, "description": text, "key": "HX" + key}
        project = _stored(await client.post("/projects", json=made))
        assert _stored(await client.get(f"/projects/{project['id']}"))["name"] == text
        listed = _stored(await client.get("/issues", params={"label": text}))
        assert [each["id"] for each in listed["data"]] == [issue["id"]], text


async def test_escaped_surrogate_pairs_are_characters_and_lone_ones_are_refused(
    client: httpx.AsyncClient,
) -> None:
    headers = {"Content-Type": "application/json"}
    pair = await client.post("/issues", content=b'{"title": "\\ud83d\\ude00"}', headers=headers)
    assert _stored(pair)["title"] == "😀"
    for lone in (b"\\ud800", b"\\udfff", b"x\\ud83d", b"\\ude00\\ud83d"):
        body = b'{"title": "ok", "description": "' + lone + b'"}'
        refused = await client.post("/issues", content=body, headers=headers)
        assert_error(refused, 400, "invalid_request")
    assert _stored(await client.get("/issues"))["pagination"]["total"] == 1


@pytest.mark.parametrize(
    ("field", "limit", "unit"),
    [("title", 255, "😀"), ("description", 65_535, "😀"), ("title", 255, "e\u0301"[0])],
)
async def test_very_long_text_is_kept_to_the_limit_in_characters(
    client: httpx.AsyncClient, field: str, limit: int, unit: str
) -> None:
    fields = {"title": "t", field: unit * limit}
    assert _stored(await client.post("/issues", json=fields))[field] == unit * limit
    error = assert_error(
        await client.post("/issues", json={"title": "t", field: unit * (limit + 1)}),
        400,
        "invalid_request",
    )
    assert error["details"][0]["field"] == field


async def test_search_syntax_is_never_interpreted(client: httpx.AsyncClient) -> None:
    alpha = _stored(await client.post("/issues", json={"title": "alpha crash"}))
    _stored(await client.post("/issues", json={"title": "beta failure"}))
    quoted = _stored(await client.post("/issues", json={"title": 'O\'Brien said "NEAR"'}))

    async def found(q: str) -> list[str]:
        response = await client.get("/search", params={"q": q})
        assert response.status_code == 200, (q, response.text)
        return [issue["id"] for issue in response.json()["data"]]

    assert await found("alpha") == [alpha["id"]]
    for operator_query in ("alpha OR beta", "NOT alpha", "alpha NEAR beta", "title:beta"):
        assert await found(operator_query) == [], operator_query
    assert await found('alpha" OR "beta') == []
    assert await found('O\'Brien "NEAR"') == [quoted["id"]]
    assert await found("ALPHA") == [alpha["id"]]


HOSTILE_QUERIES = [
    *HOSTILE_TEXT,
    '"',
    "*",
    "(",
    ")",
    "^",
    ":",
    "-",
    "a" * 500,
    "😀" * 500,
    "qq " * 166,
    "' OR '1'='1",
    "%",
    "_",
    "\\",
    "issues_fts",
]


async def test_search_and_filters_survive_hostile_values(
    client: httpx.AsyncClient, clock: SteppingClock
) -> None:
    await make_records(client)
    for number, value in enumerate(HOSTILE_QUERIES):
        if number % 25 == 0:
            clock.advance(minutes=1)  # GET /search allows 30 a minute
        response = await client.get("/search", params={"q": value})
        if response.status_code != 200:
            assert_refusal(response)
        assert response.json().get("data", []) == [], value
    for value in HOSTILE_QUERIES:
        for name in ("label", "assignee", "project_id", "status", "priority"):
            response = await client.get("/issues", params={name: value})
            if response.status_code != 200:
                assert_refusal(response)
            assert response.json().get("data", []) == [], (name, value)
        response = await client.get("/comments", params={"issue_id": value})
        assert response.json()["data"] == [], value


PAGING_EXTREMES = [
    {"page": str(10**30)},
    {"page": str(2**63)},
    {"page": "-1"},
    {"page": "1e3"},
    {"per_page": "0"},
    {"per_page": "101"},
    {"per_page": "NaN"},
    {"updated_after": "0001-01-01T00:00:00Z"},
    {"updated_after": "9999-12-31T23:59:59.999999Z"},
    {"updated_after": "2026-02-30T00:00:00Z"},
    {"updated_after": "2026-01-01T00:00:00+14:00"},
    {"updated_after": "1e20"},
    {"updated_after": "'; --"},
    {"include_deleted": "\x00"},
]


async def test_paging_and_cursor_extremes_never_fail(
    client: httpx.AsyncClient, clock: SteppingClock
) -> None:
    await make_records(client)
    for params in PAGING_EXTREMES:
        clock.advance(minutes=1)
        for route in ROUTES:
            if route.method != "GET" or "{" in route.path:
                continue
            response = await client.get(route.path, params={**(route.query or {}), **params})
            if response.status_code != 200:
                assert_refusal(response)


def _body_routes() -> list[tuple[str, str]]:
    return sorted({(route.method, route.path) for route in ROUTES if route.body is not None})


def _nested(depth: int) -> bytes:
    return b'{"name": ' + b'{"a": ' * depth + b"1" + b"}" * depth + b"}"


@pytest.mark.parametrize(
    ("label", "content", "status", "code"),
    [
        ("nested objects", _nested(100_000), 400, "invalid_request"),
        ("nested arrays", b'{"name": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 400, ""),
        ("raw NUL", b'{"name": "a\x00b"}', 400, "invalid_request"),
        ("invalid UTF-8", b'{"name": "\xc3\x28"}', 400, "invalid_request"),
        ("over one MiB", b'{"name": "' + b"y" * MIB + b'"}', 413, "payload_too_large"),
        ("a bare string", b'"' + b"y" * 1000 + b'"', 400, "invalid_request"),
        ("a 5,000-digit number", b'{"name": 1' + b"0" * 5000 + b"}", 400, "invalid_request"),
    ],
)
async def test_every_body_route_refuses_hostile_bodies(
    client: httpx.AsyncClient,
    clock: SteppingClock,
    label: str,
    content: bytes,
    status: int,
    code: str,
) -> None:
    ids = await make_records(client)
    headers = {"Content-Type": "application/json"}
    for method, path in _body_routes():
        clock.advance(minutes=1)
        response = await client.request(
            method, path.format(**ids), content=content, headers=headers
        )
        assert response.status_code == status, (label, method, path, response.text[:300])
        assert_refusal(response)
        if code:
            assert response.json()["error"]["code"] == code, (label, method, path)


async def test_a_streamed_body_over_one_mib_is_413_on_every_body_route(
    client: httpx.AsyncClient, clock: SteppingClock
) -> None:
    ids = await make_records(client)

    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"name": "'
        for _ in range(17):
            yield b"y" * 65_536
        yield b'"}'

    for method, path in _body_routes():
        clock.advance(minutes=1)
        response = await client.request(
            method,
            path.format(**ids),
            content=chunks(),
            headers={"Content-Type": "application/json"},
        )
        assert_error(response, 413, "payload_too_large")


async def test_hostile_headers_are_refused_or_ignored(
    client: httpx.AsyncClient, open_client: OpenClient
) -> None:
    issue = _stored(await client.post("/issues", json={"title": "x"}))
    for value in (b"\x01\x02", b"k" * 256, "é😀".encode(), b"'; DROP TABLE idempotency; --"):
        response = await client.post(
            "/issues", json={"title": "idem"}, headers=[(b"Idempotency-Key", value)]
        )
        if response.status_code != 201:
            assert_refusal(response)
    for value in (b"*", b'W/"x"', b'"' + b"a" * 10_000 + b'"', b"\x01", "é".encode()):
        response = await client.patch(
            f"/issues/{issue['id']}", json={"title": "y"}, headers=[(b"If-Match", value)]
        )
        if response.status_code != 200:
            assert_refusal(response)
    async with open_client(None, "10.2.0.1") as anonymous:
        for value in (
            b"Bearer " + b"a" * 100_000,
            b"Bearer trk_\x00" + b"a" * 39,
            "Bearer é".encode(),
        ):
            response = await anonymous.get("/me", headers=[(b"Authorization", value)])
            assert_error(response, 401, "unauthorized")
    assert json.loads((await client.get(f"/issues/{issue['id']}")).text)["id"] == issue["id"]


async def test_webhook_urls_the_dispatcher_cannot_send_to_are_refused(
    client: httpx.AsyncClient,
) -> None:
    hook = _stored(await client.post("/webhooks", json={"url": HOOK_URL, "events": ["*"]}))
    for url in (
        "http://127.0.0.1:9/\x00",
        "http://127.0.0.1:9/a\x7f",
        "http://127.0.0.1:9/\r\nX: y",
    ):
        for response in (
            await client.post("/webhooks", json={"url": url, "events": ["*"]}),
            await client.patch(f"/webhooks/{hook['id']}", json={"url": url}),
        ):
            error = assert_error(response, 400, "invalid_request")
            assert error["details"][0]["field"] == "url"
    assert _stored(await client.get(f"/webhooks/{hook['id']}"))["url"] == HOOK_URL


async def test_a_stored_url_that_cannot_be_sent_to_fails_its_delivery_once(
    app: FastAPI, client: httpx.AsyncClient, db_path: Path
) -> None:
    """A URL stored before it was checked becomes a failed attempt, not a crash loop."""
    hook = _stored(await client.post("/webhooks", json={"url": HOOK_URL, "events": ["*"]}))
    with closing(sqlite3.connect(db_path)) as conn, conn:
        conn.execute(
            "UPDATE webhook_subscriptions SET url = ? WHERE id = ?",
            ("http://127.0.0.1:9/\x00", hook["id"]),
        )
    await client.post("/issues", json={"title": "x"})
    await app.state.webhooks.drain(5)
    attempts = _stored(await client.get(f"/webhooks/{hook['id']}/deliveries"))["data"]
    assert [attempt["status"] for attempt in attempts] == ["retrying", "pending"], attempts
    assert attempts[0]["response_code"] is None
    assert "malformed" in attempts[0]["error"]
