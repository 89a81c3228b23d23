"""The pull against servers unlike ours, on pytest-httpx's mocked network: broken bodies, a
newest-first order, a page-size cap, whole-second stamps, records without `updated_at`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from pytest_httpx import HTTPXMock

from accounts.secret import Secret
from cache import Cache, Resource
from sync.client import ApiClient
from sync.errors import ProtocolError
from sync.features import ServerFeatures
from sync.pull import Mode, pull
from sync.ratelimit import RateLimiter
from sync.retry import Backoff
from sync.session import SyncSession

BASE = "https://vendor.test/v1"
KEY = "trk_mockedMOCKEDmockedMOCKEDmockedMOCKED00"
FAST = Backoff(tries=3, base=0.001)
NOW = datetime(2027, 3, 1, 12, 0, 0, tzinfo=UTC)
SPEC_ONLY = ServerFeatures(
    me=False, updated_after=True, tombstones=False, keyset_order=True, users_list=False,
    comments_list=False, page_size=100,
)  # fmt: skip


@dataclass
class VendorServer:
    """A stand-in for another vendor's server, answering `GET /issues` and `GET /projects`."""

    issues: list[dict[str, Any]]
    cap: int = 100
    newest_first: bool = False
    say_per_page: bool = True
    whole_seconds: bool = False
    breaks: list[bytes] = field(default_factory=list)
    refusals: list[httpx.Response] = field(default_factory=list)
    asked: list[dict[str, str]] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        headers = {"Date": format_datetime(NOW, usegmt=True)}
        if request.url.path.endswith("/projects"):
            envelope = {"data": [], "pagination": {"page": 1, "per_page": 100, "total": 0}}
            return httpx.Response(200, json=envelope, headers=headers)
        params = dict(request.url.params)
        self.asked.append(params)
        if self.refusals:
            return self.refusals.pop(0)
        if self.breaks:
            return httpx.Response(200, content=self.breaks.pop(0), headers=headers)
        rows = self.issues
        since = params.get("updated_after")
        if since is not None and all("updated_at" in row for row in rows):
            floor = datetime.fromisoformat(since.replace("Z", "+00:00"))
            rows = [
                r for r in rows if datetime.fromisoformat(r["updated_at"][:-1] + "+00:00") > floor
            ]
            rows = sorted(rows, key=lambda r: (r["updated_at"], r["id"]), reverse=self.newest_first)
        size = min(int(params.get("per_page", 25)), self.cap)
        page = int(params.get("page", 1))
        data = rows[(page - 1) * size : page * size]
        pagination = {"page": page, "total": len(rows)} | (
            {"per_page": size} if self.say_per_page else {}
        )
        return httpx.Response(200, json={"data": data, "pagination": pagination}, headers=headers)


def issues(
    count: int, *, step: timedelta, whole: bool = False, start: datetime = NOW, prefix: str = "v"
) -> list[dict[str, Any]]:
    made = []
    for index in range(count):
        stamp = start - timedelta(days=1) + step * index
        text = stamp.strftime("%Y-%m-%dT%H:%M:%SZ" if whole else "%Y-%m-%dT%H:%M:%S.%fZ")
        made.append({"id": f"{prefix}-{index:05d}", "title": f"issue {index}", "updated_at": text})
    return made


@pytest.fixture
async def session(tmp_path: Path) -> AsyncIterator[SyncSession]:
    cache = Cache.open(tmp_path / "cache.db")
    limiter = RateLimiter(cache, plan="enterprise", jitter=0.0)
    async with ApiClient(BASE, Secret(KEY), limiter=limiter) as client:
        yield SyncSession("mock", BASE, cache, client, limiter, SPEC_ONLY)
    cache.close()


def serve(httpx_mock: HTTPXMock, server: Callable[[httpx.Request], httpx.Response]) -> None:
    httpx_mock.add_callback(server, is_reusable=True)


def held(session: SyncSession) -> int:
    return session.cache.local_count(Resource.ISSUES)


async def test_a_malformed_page_is_retried(httpx_mock: HTTPXMock, session: SyncSession) -> None:
    server = VendorServer(issues(120, step=timedelta(minutes=1)), breaks=[b'{"data": [ nope'])
    serve(httpx_mock, server)
    report = await pull(session, retry=FAST)
    assert held(session) == 120 and report.retries == 1


async def test_a_body_that_stays_truncated_fails_and_keeps_earlier_pages(
    httpx_mock: HTTPXMock, session: SyncSession
) -> None:
    truncated = json.dumps({"data": [{"id": "v-1"}], "pagination": {}}).encode()[:-9]
    server = VendorServer(issues(250, step=timedelta(minutes=1)))
    serve(httpx_mock, server)
    await pull(session, retry=FAST)
    server.issues += issues(
        150, step=timedelta(minutes=1), start=NOW + timedelta(days=2), prefix="w"
    )
    server.breaks = [truncated] * FAST.tries
    with pytest.raises(ProtocolError):
        await pull(session, retry=FAST)
    assert held(session) == 250
    assert session.cache.get_cursor(Resource.ISSUES) is not None
    report = await pull(session, retry=FAST)
    assert held(session) == 400 and report.resources["issues"].inserted == 150


async def test_a_newest_first_server_is_walked_not_keyset_paged(
    httpx_mock: HTTPXMock, session: SyncSession
) -> None:
    serve(httpx_mock, VendorServer(issues(230, step=timedelta(minutes=1)), newest_first=True))
    report = await pull(session, retry=FAST)
    assert held(session) == 230
    assert report.resources["issues"].mode is Mode.PAGES
    assert session.features.keyset_order is False


async def test_a_page_size_cap_of_50_is_followed(
    httpx_mock: HTTPXMock, session: SyncSession
) -> None:
    server = VendorServer(issues(175, step=timedelta(minutes=1)), cap=50)
    serve(httpx_mock, server)
    report = await pull(session, retry=FAST)
    assert held(session) == 175
    assert server.asked[0]["per_page"] == "100"
    assert {asked["per_page"] for asked in server.asked[1:]} <= {"50", "1"}
    assert report.resources["issues"].requests <= 4 + 1 + 1  # pages, overlap, count check


async def test_a_silent_page_size_cap_is_learned_from_total(
    httpx_mock: HTTPXMock, session: SyncSession
) -> None:
    serve(
        httpx_mock, VendorServer(issues(130, step=timedelta(minutes=1)), cap=50, say_per_page=False)
    )
    await pull(session, retry=FAST)
    assert held(session) == 130


async def test_whole_second_ties_across_pages(httpx_mock: HTTPXMock, session: SyncSession) -> None:
    same_second = issues(260, step=timedelta(0), whole=True)
    later = issues(
        40, step=timedelta(seconds=1), whole=True, start=NOW + timedelta(hours=1), prefix="w"
    )
    server = VendorServer(same_second + later)
    serve(httpx_mock, server)
    await pull(session, retry=FAST)
    assert held(session) == 300
    cursor = session.cache.get_cursor(Resource.ISSUES)
    assert cursor is not None and "." not in cursor.updated_at
    assert all("." not in asked.get("updated_after", "") for asked in server.asked)
    assert len(server.asked) < 12


async def test_records_without_updated_at_use_the_server_date(
    httpx_mock: HTTPXMock, session: SyncSession
) -> None:
    rows = [{"id": f"n-{index}", "title": "no stamps"} for index in range(140)]
    server = VendorServer(rows)
    serve(httpx_mock, server)
    report = await pull(session, retry=FAST)
    assert held(session) == 140 and report.resources["issues"].mode is Mode.PAGES
    cursor = session.cache.get_cursor(Resource.ISSUES)
    assert cursor is not None and cursor.updated_at == "2027-03-01T12:00:00Z"
    await pull(session, retry=FAST)
    assert server.asked[-2]["updated_after"] == "2027-03-01T11:59:59Z"  # minus the overlap
    assert report.clock_offset is not None


async def test_429_and_503_are_retried_as_the_server_says(
    httpx_mock: HTTPXMock, session: SyncSession
) -> None:
    body = {"error": {"code": "rate_limit_exceeded", "message": "slow down", "retry_after": 0}}
    refusals = [
        httpx.Response(429, json=body, headers={"Retry-After": "0"}),
        httpx.Response(503, text="<html>upstream unavailable</html>"),
    ]
    server = VendorServer(issues(30, step=timedelta(minutes=1)), refusals=refusals)
    serve(httpx_mock, server)
    report = await pull(session, retry=FAST)
    assert held(session) == 30 and report.retries == 2


async def test_a_pulls_waits_for_a_failing_server_stay_within_their_cap(
    httpx_mock: HTTPXMock, session: SyncSession
) -> None:
    """Five 503s in a row, the jitter at its top: the pull's waits double from 8 s up to the
    30 s cap and never past it (they went up to 1.5 times the cap, 44.99 s)."""
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    failing = [httpx.Response(503, text="<html>upstream unavailable</html>") for _ in range(5)]
    server = VendorServer(issues(30, step=timedelta(minutes=1)), refusals=failing)
    serve(httpx_mock, server)
    retry = Backoff(tries=6, base=8.0, cap=30.0, sleep=record, random=lambda: 0.999_999)
    report = await pull(session, retry=retry)
    assert held(session) == 30 and report.retries == 5
    assert len(waits) == 5
    assert max(waits) <= 30.0
    assert waits == pytest.approx([8.0, 16.0, 30.0, 30.0, 30.0], rel=1e-5)
