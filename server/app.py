"""The application factory: the API under `/v1` over one SQLite file.

Requests pass, outermost first: Starlette's error middleware (500 `internal_error`) →
`AuthMiddleware` (401, and the rate limiter's place) → `BodyLimitMiddleware` (413) →
`IdempotencyMiddleware` (replays) → FastAPI's exception handlers (the error envelope) → routes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI

from server.auth import AuthMiddleware
from server.body_limit import BodyLimitMiddleware
from server.db import Database
from server.events import EventSink, NullEventSink
from server.handlers import install_error_handlers
from server.idempotency import IdempotencyMiddleware
from server.openapi import TrackerAPI
from server.routes import router
from server.store import Store
from server.timestamps import Clock, utc_now

API_PREFIX = "/v1"
OPENAPI_PATH = f"{API_PREFIX}/openapi.json"


def create_app(
    db_path: str | Path,
    window_seconds: float = 60,
    clock: Clock | None = None,
    events: EventSink | None = None,
) -> FastAPI:
    """Build the service over the database at `db_path` (created and migrated if needed).

    `window_seconds` is the length of a rate-limit "minute" (CONTRACT time scale), kept on
    `app.state.window_seconds` for the limiter; `clock` returns aware UTC datetimes and defaults
    to the wall clock; `events` receives every committed change (default: nowhere).
    """
    if window_seconds <= 0:
        raise ValueError("window_seconds must be positive")
    store = Store(Database(db_path), clock or utc_now, events or NullEventSink())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        store.db.close()

    app = TrackerAPI(
        title="Issue Tracking Service",
        version="1.0.0",
        description="The reference implementation of the tracker API (SPEC.md and CONTRACT.md).",
        openapi_url=OPENAPI_PATH,
        docs_url=None,
        redoc_url=None,
        redirect_slashes=False,
        lifespan=lifespan,
    )
    app.state.store = store
    app.state.window_seconds = window_seconds
    install_error_handlers(app)
    app.include_router(router, prefix=API_PREFIX)
    app.add_middleware(IdempotencyMiddleware, store=store)
    app.add_middleware(BodyLimitMiddleware)
    app.add_middleware(AuthMiddleware, store=store, prefix=API_PREFIX, public_paths={OPENAPI_PATH})
    return app
