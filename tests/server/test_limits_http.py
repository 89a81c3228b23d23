"""Rate limits as a client meets them over HTTP: counts, headers, 429s, windows, restarts.

The clock is the fake one from conftest: it starts at 15:33:11.561385 UTC, so the minute window
ends 48.44 s later (`retry_after` 49) and the UTC day 8 h 26 min 48.44 s later.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from server_support import (
    START,
    FakeClock,
    MakeKey,
    assert_error,
    bearer,
    create_issue,
    rate_headers,
    served,
)

from server.app import create_app
from server.ratelimit import PLAN_LIMITS

MINUTE_END = int(datetime(2026, 11, 21, 15, 34, tzinfo=UTC).timestamp())
RETRY_IN_MINUTE = 49
OpenClient = Callable[..., Any]


def seconds_until(end: datetime, clock: FakeClock) -> int:
    return math.ceil((end - clock.now).total_seconds())


def assert_refused(response: httpx.Response, limit: int, retry_after: int, reset: int) -> None:
    """A published 429 (docs/api.md#refused-requests-429) naming `limit`, with `retry_after` in the
    body, the message and the header."""
    error = assert_error(response, 429, "rate_limit_exceeded")
    assert error["retry_after"] == retry_after
    assert f"retry after {retry_after} seconds" in error["message"]
    assert response.headers["retry-after"] == str(retry_after)
    assert rate_headers(response) == (limit, 0, reset)


@asynccontextmanager
async def client_of(app: FastAPI, key: str, address: str = "127.0.0.1") -> AsyncIterator[Any]:
    transport = httpx.ASGITransport(app, client=(address, 50_000))
    async with httpx.AsyncClient(
        transport=transport, base_url="http://test/v1", headers=bearer(key)
    ) as client:
        yield client


@pytest.mark.parametrize("plan", ["free", "pro", "enterprise"])
async def test_each_plan_counts_down_refuses_then_resets(
    plan: str, open_client: OpenClient, make_key: MakeKey, clock: FakeClock
) -> None:
    per_minute, _ = PLAN_LIMITS[plan]
    async with open_client(make_key(plan=plan)) as client:
        for n in range(1, per_minute + 1):
            response = await client.get("/me")
            assert response.status_code == 200
            assert rate_headers(response) == (per_minute, per_minute - n, MINUTE_END)
        assert_refused(await client.get("/me"), per_minute, RETRY_IN_MINUTE, MINUTE_END)

        clock.now = datetime(2026, 11, 21, 15, 34, tzinfo=UTC)
        response = await client.get("/me")
        assert response.status_code == 200
        assert rate_headers(response) == (per_minute, per_minute - 1, MINUTE_END + 60)


async def test_an_exhausted_key_does_not_limit_another_key(
    open_client: OpenClient, make_key: MakeKey
) -> None:
    async with open_client(make_key()) as first, open_client(make_key()) as second:
        for _ in range(60):
            await first.get("/me")
        assert (await first.get("/me")).status_code == 429
        response = await second.get("/me")
        assert response.status_code == 200
        # The two keys share the workspace's day: 60 of its 1,000 are gone.
        assert int(response.headers["x-ratelimit-remaining"]) == 59


async def post_comment(client: httpx.AsyncClient, issue_id: str) -> httpx.Response:
    return await client.post("/comments", json={"issue_id": issue_id, "body": "Noted."})


ENDPOINTS = {
    "POST /issues": (30, 201),
    "POST /comments": (60, 201),
    "GET /search": (30, 200),
    "POST /issues/bulk": (10, 200),
}


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
async def test_each_endpoint_limit_refuses_on_top_of_the_plan(
    endpoint: str, open_client: OpenClient, make_key: MakeKey
) -> None:
    limit, success = ENDPOINTS[endpoint]
    async with open_client(make_key(plan="pro")) as client:
        issue = await create_issue(client)
        made = {"POST /issues": 1}.get(endpoint, 0)

        async def call() -> httpx.Response:
            if endpoint == "POST /issues":
                return await client.post("/issues", json={"title": "Limited"})
            if endpoint == "POST /comments":
                return await post_comment(client, issue["id"])
            if endpoint == "GET /search":
                return await client.get("/search", params={"q": "issue"})
            operations = [{"op": "update", "id": issue["id"], "changes": {"priority": "low"}}]
            return await client.post("/issues/bulk", json={"operations": operations})

        for n in range(made + 1, limit + 1):
            response = await call()
            assert response.status_code == success, response.text
            assert rate_headers(response) == (limit, limit - n, MINUTE_END)
        assert_refused(await call(), limit, RETRY_IN_MINUTE, MINUTE_END)
        other = await client.get("/me")
        assert other.status_code == 200
        assert rate_headers(other) == (300, 300 - limit - 1 - (made == 0), MINUTE_END)


async def test_bulk_counts_as_one_request_for_every_limit(
    open_client: OpenClient, make_key: MakeKey
) -> None:
    async with open_client(make_key(plan="pro")) as client:
        for _ in range(10):
            creates = [{"op": "create", "fields": {"title": f"Bulk {i}"}} for i in range(40)]
            response = await client.post("/issues/bulk", json={"operations": creates})
            assert response.status_code == 200
        # 400 issues created, yet POST /issues (30 a minute) has not been touched...
        single = await client.post("/issues", json={"title": "Single"})
        assert single.status_code == 201
        assert rate_headers(single) == (30, 29, MINUTE_END)
        # ...and the key's minute has seen 11 requests, not 411.
        me = await client.get("/me")
        assert rate_headers(me) == (300, 288, MINUTE_END)


async def test_the_day_limit_holds_across_minute_windows(
    open_client: OpenClient, make_key: MakeKey, clock: FakeClock
) -> None:
    midnight = datetime(2026, 11, 22, tzinfo=UTC)
    async with open_client(make_key()) as client:
        for _ in range(16):
            for _ in range(60):
                assert (await client.get("/me")).status_code == 200
            assert (await client.get("/me")).status_code == 429
            clock.advance(minutes=1)
        # 960 of the day's 1,000 are gone: the day is now the tighter limit.
        for n in range(961, 1_001):
            response = await client.get("/me")
            assert response.status_code == 200
            assert rate_headers(response) == (1_000, 1_000 - n, int(midnight.timestamp()))
        refused = await client.get("/me")
        assert_refused(refused, 1_000, seconds_until(midnight, clock), int(midnight.timestamp()))

        clock.advance(minutes=1)
        assert (await client.get("/me")).status_code == 429
        clock.now = midnight
        assert (await client.get("/me")).status_code == 200


async def test_a_restart_keeps_the_counts(
    db_path: Path, clock: FakeClock, make_key: MakeKey
) -> None:
    key = make_key()
    first = create_app(db_path, clock=clock)
    async with first.router.lifespan_context(first), client_of(first, key) as client:
        for _ in range(59):
            assert (await client.get("/me")).status_code == 200
    second = create_app(db_path, clock=clock)
    async with second.router.lifespan_context(second), client_of(second, key) as client:
        response = await client.get("/me")
        assert rate_headers(response) == (60, 0, MINUTE_END)
        assert_refused(await client.get("/me"), 60, RETRY_IN_MINUTE, MINUTE_END)


async def test_fifty_concurrent_requests_let_exactly_the_limit_through(
    open_client: OpenClient, make_key: MakeKey
) -> None:
    async with open_client(make_key(plan="pro")) as client:
        responses = await asyncio.gather(
            *(client.get("/search", params={"q": "x"}) for _ in range(50))
        )
        statuses = sorted(response.status_code for response in responses)
        assert statuses == [200] * 30 + [429] * 20
        remaining = sorted(
            int(r.headers["x-ratelimit-remaining"]) for r in responses if r.status_code == 200
        )
        assert remaining == list(range(30))


def test_fifty_threads_over_a_real_socket_never_exceed_the_limit(
    db_path: Path, clock: FakeClock, make_key: MakeKey
) -> None:
    key = make_key(plan="pro")
    start = threading.Barrier(50)

    def post(base_url: str, n: int) -> int:
        with httpx.Client(base_url=base_url, headers=bearer(key), timeout=30) as client:
            start.wait()
            return client.post("/issues", json={"title": f"Racing {n}"}).status_code

    with served(create_app(db_path, clock=clock)) as base_url:
        with ThreadPoolExecutor(50) as pool:
            statuses = sorted(pool.map(lambda n: post(base_url, n), range(50)))
        with httpx.Client(base_url=base_url, headers=bearer(key), timeout=30) as client:
            total = client.get("/issues").json()["pagination"]["total"]
    assert statuses == [201] * 30 + [429] * 20
    assert total == 30


class ExplodingSink:
    def emit(self, *args: Any) -> None:
        raise RuntimeError("boom")


async def test_every_answer_to_a_known_key_carries_the_headers_and_counts(
    db_path: Path, clock: FakeClock, make_key: MakeKey, open_client: OpenClient
) -> None:
    key = make_key()
    async with open_client(key) as client:
        answers = [
            await client.get("/issues/iss_missing"),
            await client.post("/issues", json={}),
            await client.post("/issues", content=b"not json"),
            await client.post("/issues", content=b"x" * (2 << 20)),
            await client.delete("/search"),
            await client.get("/no-such-endpoint"),
            await client.get("/issues", params={"per_page": 1000}),
        ]
    assert [a.status_code for a in answers] == [404, 400, 400, 413, 405, 404, 400]
    # Each counted once; POST /issues also counts against its own limit of 30, the tighter one.
    assert [rate_headers(a)[:2] for a in answers] == [
        (60, 59),
        (30, 29),
        (30, 28),
        (30, 27),
        (60, 55),
        (60, 54),
        (60, 53),
    ]

    exploding = create_app(db_path, clock=clock, events=ExplodingSink())
    transport = httpx.ASGITransport(exploding, raise_app_exceptions=False)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://test/v1", headers=bearer(key)
    ) as client:
        crashed = await client.post("/issues", json={"title": "x"})
    assert_error(crashed, 500, "internal_error")
    assert rate_headers(crashed) == (30, 26, MINUTE_END)


async def test_a_refusal_is_not_counted(open_client: OpenClient, make_key: MakeKey) -> None:
    async with open_client(make_key(plan="pro")) as client:
        for _ in range(30):
            await client.get("/search", params={"q": "x"})
        for _ in range(5):
            assert (await client.get("/search", params={"q": "x"})).status_code == 429
        me = await client.get("/me")
        assert rate_headers(me) == (300, 300 - 31, MINUTE_END)


async def test_failed_authentications_block_their_address_only(
    app: FastAPI, make_key: MakeKey, clock: FakeClock
) -> None:
    key = make_key()
    async with client_of(app, "trk_" + "x" * 40, "10.0.0.7") as wrong:
        for _ in range(21):
            assert_error(await wrong.get("/me"), 401, "unauthorized")
        blocked = await wrong.get("/me")
    assert_refused(blocked, 20, RETRY_IN_MINUTE, MINUTE_END)
    async with client_of(app, key, "10.0.0.7") as right:
        assert_refused(await right.get("/me"), 20, RETRY_IN_MINUTE, MINUTE_END)
    async with client_of(app, key, "10.0.0.8") as elsewhere:
        response = await elsewhere.get("/me")
    assert response.status_code == 200
    # The blocked request did not count against the key it sent.
    assert rate_headers(response) == (60, 59, MINUTE_END)
    clock.now = datetime(2026, 11, 21, 15, 34, tzinfo=UTC)
    async with client_of(app, key, "10.0.0.7") as right:
        assert (await right.get("/me")).status_code == 200


async def test_window_seconds_scales_minutes_days_and_retry_after(
    db_path: Path, clock: FakeClock, make_key: MakeKey
) -> None:
    """With one-second "minutes", a "day" is 1,440 s and every figure is in scaled seconds."""
    key = make_key()
    app = create_app(db_path, window_seconds=1, clock=clock)
    second_end = int(START.timestamp()) + 1
    day = 1_440
    day_end = (int(START.timestamp()) // day + 1) * day
    async with app.router.lifespan_context(app), client_of(app, key) as client:
        for n in range(1, 61):
            response = await client.get("/me")
            assert rate_headers(response) == (60, 60 - n, second_end)
        assert_refused(await client.get("/me"), 60, 1, second_end)
        clock.advance(seconds=0.5)
        response = await client.get("/me")
        assert rate_headers(response) == (60, 59, second_end + 1)

        for _ in range(15):
            clock.advance(seconds=1)
            for _ in range(60):
                await client.get("/me")
        clock.advance(seconds=1)
        for _ in range(1_000 - 61 - 900):
            assert (await client.get("/me")).status_code == 200
        refused = await client.get("/me")
        assert_refused(refused, 1_000, math.ceil(day_end - clock.now.timestamp()), day_end)
    assert clock.now.timestamp() < day_end  # the whole test ran inside one scaled day
