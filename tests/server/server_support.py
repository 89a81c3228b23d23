"""Helpers shared by the service tests: a clock, an event sink, the error-envelope check, a
real loopback server."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import httpx

from server.thread import ServiceThread

START = datetime(2026, 11, 21, 15, 33, 11, 561385, tzinfo=UTC)


class FakeClock:
    """Stands still until told to move, so tests decide what "now" is."""

    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@dataclass
class RecordingSink:
    """An event sink that keeps what it is given, in order."""

    events: list[tuple[str, str, dict[str, Any], dict[str, Any] | None]] = field(
        default_factory=list
    )

    def emit(
        self,
        workspace_id: str,
        event_type: str,
        obj: dict[str, Any],
        previous: dict[str, Any] | None,
    ) -> None:
        self.events.append((workspace_id, event_type, obj, previous))

    def types(self) -> list[str]:
        return [event_type for _, event_type, _, _ in self.events]


class MakeKey(Protocol):
    def __call__(
        self,
        workspace: str = ...,
        *,
        permissions: Iterable[str] | None = ...,
        plan: str | None = ...,
        user: str | None = ...,
        expires_in_days: float | None = ...,
    ) -> str: ...


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The response is the published error body with this status and code; returns the error."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}, body
    error: dict[str, Any] = body["error"]
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and error["message"]
    return error


async def create_issue(client: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    response = await client.post("/issues", json={"title": "An issue", **fields})
    assert response.status_code == 201, response.text
    issue: dict[str, Any] = response.json()
    return issue


@contextmanager
def served(app: Any) -> Iterator[str]:
    """Serve `app` with uvicorn on a free loopback port in a thread; yields the `/v1` base URL.

    Requests then cross a real socket and run on uvicorn's event loop and FastAPI's thread pool,
    as in a deployed service.
    """
    service = ServiceThread(app)
    with service:
        yield service.base_url
    assert not service.running


def rate_headers(response: httpx.Response) -> tuple[int, int, int]:
    """`X-RateLimit-Limit`, `-Remaining` and `-Reset` of a response, as integers."""
    return (
        int(response.headers["x-ratelimit-limit"]),
        int(response.headers["x-ratelimit-remaining"]),
        int(response.headers["x-ratelimit-reset"]),
    )
