"""The reference service on loopback for the fault tests, counting its own refusals, and a
client session pointed at a `FaultProxy` in front of it.

`Service.refused` counts the 429s the service itself decided (its real limiter, subclassed only
to count), so a test can assert that no request the client sent was over any limit, whatever
the proxy injected on top.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from fault_proxy import FaultProxy, Plan, pass_all

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import Cache
from server.app import create_app
from server.ratelimit import RateDecision, RateLimiter
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.session import SyncSession, open_session

WINDOW = 0.5
"""A rate-limit "minute" of half a second, for client and service alike."""
MARGIN = 0.25
"""The client limiter's margin at that scale: `Date` and resets are whole seconds."""
TIMEOUT = 1.0
"""The client's timeout where a test injects `Fault.DELAY`, which holds answers longer."""
HELD = TIMEOUT + 0.5
PATIENT = 10.0
"""The client's timeout where no answer is held: a second is short on a loaded CI machine
(four workers on two cores, the service in the test's own process), and a timeout there is a
fault the test did not ask for, which its counts of retries and requests then show."""


class CountingLimiter(RateLimiter):
    """The service's own limiter; it also counts what it refused (from uvicorn's threads)."""

    def __init__(self, db_path: Path, *, window_seconds: float) -> None:
        super().__init__(db_path, window_seconds=window_seconds)
        self._lock = threading.Lock()
        self.refused = 0
        self.allowed = 0

    def hit(
        self, *, key_id: str, workspace_id: str, plan: str, endpoint: str | None
    ) -> RateDecision:
        decision = super().hit(
            key_id=key_id, workspace_id=workspace_id, plan=plan, endpoint=endpoint
        )
        with self._lock:
            if decision.allowed:
                self.allowed += 1
            else:
                self.refused += 1
        return decision


@dataclass
class Service:
    base_url: str
    key: str
    limiter: CountingLimiter

    @property
    def refused(self) -> int:
        return self.limiter.refused


@contextmanager
def running_service(db: Path, issues: int, *, plan: str = "pro") -> Iterator[Service]:
    key = seed_workspace(db, "acme", issues, plan=plan)
    limiter = CountingLimiter(db, window_seconds=WINDOW)
    with ServiceThread(create_app(db, window_seconds=WINDOW, limiter=limiter)) as thread:
        yield Service(thread.base_url, key, limiter)


def resolved(key: str, server: str) -> ResolvedProfile:
    return ResolvedProfile(
        name=None, server=server, workspace=None, key=Secret(key), key_source=KeySource.ENV
    )


@asynccontextmanager
async def session_via(
    key: str, server: str, cache_path: Path, *, timeout: float = TIMEOUT
) -> AsyncIterator[SyncSession]:
    """A real session (cache file, limiter, client) talking to `server`, at the test scale."""
    with Cache.open(cache_path) as cache:
        async with open_session(
            resolved(key, server),
            cache=cache,
            window_seconds=WINDOW,
            timeout=timeout,
            margin=MARGIN,
        ) as session:
            yield session


async def fetch_all(service: Service, path: str, **params: Any) -> list[dict[str, Any]]:
    """Every record of a listing, straight from the service (not through the proxy)."""
    found: list[dict[str, Any]] = []
    headers = {"Authorization": f"Bearer {service.key}"}
    async with httpx.AsyncClient(base_url=service.base_url, headers=headers) as http:
        page = 1
        while True:
            answer = await http.get(path, params={**params, "page": page, "per_page": 100})
            answer.raise_for_status()
            data = answer.json()["data"]
            found.extend(data)
            if len(data) < 100:
                return found
            page += 1


@asynccontextmanager
async def through_proxy(
    service: Service, cache_path: Path, plan: Plan = pass_all, *, delays: bool = False
) -> AsyncIterator[tuple[FaultProxy, SyncSession]]:
    """A proxy in front of the service and a session through it; the session is opened (its
    feature probes sent) under `plan`, which the test may then replace (`proxy.plan = ...`).
    `delays` says the test injects `Fault.DELAY`, so the client gives up after `TIMEOUT`."""
    async with (
        FaultProxy(service.base_url, plan, delay=HELD) as proxy,
        session_via(
            service.key, proxy.base_url, cache_path, timeout=TIMEOUT if delays else PATIENT
        ) as session,
    ):
        yield proxy, session
