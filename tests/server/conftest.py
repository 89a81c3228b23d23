"""Fixtures for the service tests: a fresh database per test, a clock the test moves, keys.

Requests go through `httpx.ASGITransport` into the real application over a real SQLite file;
nothing below the HTTP interface is replaced.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from server_support import FakeClock, MakeKey, RecordingSink, bearer

from server.app import create_app
from server.keys import create_key


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "tracker.db"


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()


@pytest.fixture
async def app(db_path: Path, clock: FakeClock, sink: RecordingSink) -> AsyncIterator[FastAPI]:
    application = create_app(db_path, clock=clock, events=sink)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
def make_key(db_path: Path, clock: FakeClock) -> MakeKey:
    def make(
        workspace: str = "Acme",
        *,
        permissions: Iterable[str] | None = None,
        plan: str | None = None,
        user: str | None = None,
        expires_in_days: float | None = None,
    ) -> str:
        return create_key(
            db_path,
            workspace,
            "test key",
            permissions=permissions,
            plan=plan,
            expires_in_days=expires_in_days,
            user=user,
            clock=clock,
        )

    return make


@pytest.fixture
def open_client(app: FastAPI) -> Callable[[str | None], Any]:
    """`async with open_client(key) as c:` a client of the app sending that key (or none)."""

    @asynccontextmanager
    async def opened(key: str | None = None) -> AsyncIterator[httpx.AsyncClient]:
        headers = bearer(key) if key else {}
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app), base_url="http://test/v1", headers=headers
        ) as client:
            yield client

    return opened


@pytest.fixture
async def client(
    open_client: Callable[[str | None], Any], make_key: MakeKey
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of workspace "Acme" with every permission."""
    async with open_client(make_key()) as opened:
        yield opened


@pytest.fixture
async def other(
    open_client: Callable[[str | None], Any], make_key: MakeKey
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of another workspace, "Globex", with every permission."""
    async with open_client(make_key("Globex")) as opened:
        yield opened
