"""Fixtures for the security checks of the service: a fresh database per test, a clock the test
moves, keys of two workspaces. Requests go through `httpx.ASGITransport` into the real
application over a real SQLite file."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from security_support import MakeKey, OpenClient, SteppingClock

from server.app import create_app
from server.keys import create_key


@pytest.fixture
def clock() -> SteppingClock:
    return SteppingClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "tracker.db"


@pytest.fixture
async def app(db_path: Path, clock: SteppingClock) -> AsyncIterator[FastAPI]:
    application = create_app(db_path, clock=clock)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
def make_key(db_path: Path, clock: SteppingClock) -> MakeKey:
    def make(
        workspace: str = "Acme",
        *,
        permissions: Iterable[str] | None = None,
        expires_in_days: float | None = None,
    ) -> str:
        return create_key(
            db_path,
            workspace,
            "security key",
            permissions=permissions,
            plan="enterprise",
            expires_in_days=expires_in_days,
            clock=clock,
        )

    return make


@pytest.fixture
def open_client(app: FastAPI) -> OpenClient:
    """`async with open_client(key, address) as c:` a client of the app sending that key (or
    none) from that client address."""

    @asynccontextmanager
    async def opened(
        key: str | None = None, address: str = "127.0.0.1"
    ) -> AsyncIterator[httpx.AsyncClient]:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        transport = httpx.ASGITransport(app, raise_app_exceptions=False, client=(address, 4321))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://test/v1", headers=headers
        ) as client:
            yield client

    return opened
