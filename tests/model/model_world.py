"""One example's world: the service (plain or SPEC-only) on virtual time, two or three clients
each with its own cache file and wire, and a colleague writing straight to the service.

Everything runs on one event loop owned by the world; the model's steps are plain calls that
run a coroutine to completion on it. A client whose wire raised `Killed` is crashed: whatever
it was still running is cancelled (as a SIGKILL ends every thread at once), its session and
cache are dropped, and it is reopened from its files, as the next `tracker-tui` process would.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Coroutine
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
from model_service import Oracle, VirtualClock, dated, spec_only
from model_wire import FaultWire, Killed

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import Cache
from server.app import create_app
from server.keys import create_key
from server.ratelimit import PLAN_LIMITS
from server.seed import seed_workspace
from sync.session import SyncSession, open_session

T = TypeVar("T")

BASE_URL = "http://tracker.model/v1"
CLIENT_USERS = ("Ada Lovelace", "Grace Hopper", "Alan Turing")
CLIENT_NAMES = ("A", "B", "C")
COLLEAGUE = "K"
COLLEAGUE_USER = "Katherine Johnson"


@dataclass(frozen=True)
class Config:
    """A server the model runs against: `spec` strips every CONTRACT extension."""

    name: str
    spec: bool
    plan: str
    issues: int = 3


FULL = Config("full", spec=False, plan="pro")
SPEC = Config("spec", spec=True, plan="free")


@dataclass
class Client:
    name: str
    key: str
    path: Path
    wire: FaultWire
    stack: AsyncExitStack | None = None
    session: SyncSession | None = None
    crashes: int = 0

    @property
    def cache(self) -> Cache:
        assert self.session is not None
        return self.session.cache

    def raw(self) -> sqlite3.Connection:
        """A read-only look at the cache file, for what the `Cache` API does not say."""
        conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        conn.row_factory = sqlite3.Row
        return conn


class World:
    def __init__(self, config: Config, clients: int, tmp: Path) -> None:
        self.config, self.tmp = config, tmp
        self.loop = asyncio.new_event_loop()
        self.clock = VirtualClock(time.time() + 1.0)
        db = tmp / "server.db"
        seed_workspace(db, "acme", config.issues, plan=config.plan)
        actors: dict[str, str] = {}
        for name, user in zip(CLIENT_NAMES[:clients], CLIENT_USERS, strict=False):
            actors[create_key(db, "acme", f"model-{name}", user=user)] = name
        colleague_key = create_key(db, "acme", "model-colleague", user=COLLEAGUE_USER)
        actors[colleague_key] = COLLEAGUE
        self.app = create_app(db, clock=self.clock.utc)
        inner = spec_only(self.app) if config.spec else self.app
        self.oracle = Oracle(dated(inner, self.clock), self.clock, actors)
        self._lifespan: AbstractAsyncContextManager[None] = self.app.router.lifespan_context(
            self.app
        )
        self.run(self._lifespan.__aenter__())
        self.colleague = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.oracle),
            base_url=BASE_URL,
            headers={"Authorization": f"Bearer {colleague_key}"},
        )
        self.run(self._load_mirror())
        limit = PLAN_LIMITS[config.plan][0]
        self.clients = []
        for key, name in actors.items():
            if name == COLLEAGUE:
                continue
            wire = FaultWire(self.oracle, self.clock, limit)
            self.clients.append(Client(name, key, tmp / f"cache-{name}.db", wire))
        for client in self.clients:
            self.run(self.open(client))

    # -- running ------------------------------------------------------------------------------

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)

    def run_client(self, client: Client, coro: Coroutine[Any, Any, T]) -> T | None:
        """Run one step of `client`; None when its process was killed during it (it is then
        reopened from its files)."""
        before = asyncio.all_tasks(self.loop)
        try:
            return self.run(coro)
        except Killed:
            pass
        leftovers = asyncio.all_tasks(self.loop) - before - client.wire.serving
        for task in leftovers:
            task.cancel()
        if leftovers:
            self.run(asyncio.wait(leftovers))
        if client.wire.serving:
            self.run(asyncio.wait(set(client.wire.serving)))
        self.run(self.crash(client))
        return None

    async def open(self, client: Client) -> None:
        stack = AsyncExitStack()
        cache = stack.enter_context(Cache.open(client.path, clock=self.clock.time))
        profile = ResolvedProfile(None, BASE_URL, None, Secret(client.key), KeySource.ENV)
        client.session = await stack.enter_async_context(
            open_session(
                profile,
                cache=cache,
                transport=client.wire,
                clock=self.clock.time,
                sleep=self.limiter_sleep,
            )
        )
        client.stack = stack

    async def limiter_sleep(self, seconds: float) -> None:
        await self.clock.sleep(seconds, "limiter")

    async def crash(self, client: Client) -> None:
        """The process is gone: drop its objects and start a new one on the same files."""
        client.crashes += 1
        client.wire.disarm()
        if client.stack is not None:
            await client.stack.aclose()
        client.stack, client.session = None, None
        client.wire.dead = False
        await self.open(client)

    def close(self) -> None:
        try:
            for client in self.clients:
                if client.stack is not None:
                    self.run(client.stack.aclose())
            self.run(self.colleague.aclose())
            self.run(self._lifespan.__aexit__(None, None, None))
        finally:
            self.loop.close()

    # -- the service, as it is ---------------------------------------------------------------

    async def _load_mirror(self) -> None:
        issues = await self.listing("/issues")
        comments = await self.listing("/comments")
        self.oracle.mirror.load(issues, comments)

    async def listing(self, path: str, **params: Any) -> list[dict[str, Any]]:
        """Every record of a listing, read by the colleague (no fault, no client limiter)."""
        found: list[dict[str, Any]] = []
        page = 1
        while True:
            answer = await self.colleague_call(
                "GET", path, params={**params, "page": page, "per_page": 100}
            )
            data = answer.json()["data"]
            found.extend(data)
            if len(data) < 100:
                return found
            page += 1

    async def colleague_call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """The colleague's request; a 429 (the colleague is a busy user too) waits it out."""
        for _ in range(5):
            self.clock.advance(0.004)
            answer = await self.colleague.request(method, path, **kwargs)
            if answer.status_code != 429:
                return answer
            self.clock.advance(float(answer.headers.get("Retry-After", "60")) + 0.5)
        raise AssertionError(f"the colleague's {method} {path} kept being refused")
