"""The application factory: the API under `/v1` over one SQLite file.

Requests pass, outermost first: Starlette's error middleware (500 `internal_error`) →
`AuthMiddleware` (401, rate limits: 429 and the `X-RateLimit-*` headers) → `BodyLimitMiddleware`
(413) → `IdempotencyMiddleware` (replays) → FastAPI's exception handlers (the error envelope) →
routes.

Everything lives in the one database file: records, rate-limit counters (`server.ratelimit`)
and the webhook queue (`server.webhook_queue`), so a restart loses neither counts nor pending
deliveries. The app owns a `WebhookDispatcher`, started and stopped by its lifespan.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI

from server.auth import AuthMiddleware
from server.body_limit import BodyLimitMiddleware
from server.db import Database
from server.events import EventSink, FanOutSink
from server.handlers import install_error_handlers
from server.idempotency import IdempotencyMiddleware
from server.openapi import TrackerAPI
from server.ratelimit import RateLimiter
from server.routes import router
from server.store import Store
from server.timestamps import Clock, utc_now
from server.webhook_delivery import WebhookDispatcher

API_PREFIX = "/v1"
OPENAPI_PATH = f"{API_PREFIX}/openapi.json"


def create_app(
    db_path: str | Path,
    window_seconds: float = 60,
    clock: Clock | None = None,
    events: EventSink | None = None,
    *,
    limiter: RateLimiter | None = None,
    allow_private_webhooks: bool = False,
) -> FastAPI:
    """Build the service over the database at `db_path` (created and migrated if needed).

    `window_seconds` is the length of a rate-limit "minute" (docs/service.md#window-scaling); it
    scales the limiter's windows and the webhook retry schedule alike. `clock` returns aware UTC
    datetimes and defaults to the wall clock. Every committed change goes to the app's webhook
    dispatcher and, when given, to `events` as well. `limiter` replaces the one built over
    `db_path`; `allow_private_webhooks` lets webhooks call non-loopback hosts.
    """
    if window_seconds <= 0:
        raise ValueError("window_seconds must be positive")
    now = clock or utc_now
    webhooks = WebhookDispatcher(
        db_path, window_seconds=window_seconds, clock=now, allow_private=allow_private_webhooks
    )
    sink: EventSink = webhooks if events is None else FanOutSink(webhooks, events)
    store = Store(Database(db_path), now, sink)
    limiter = limiter or RateLimiter(db_path, window_seconds=window_seconds, clock=now)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await webhooks.start()
        try:
            yield
        finally:
            await webhooks.stop()
            store.db.close()
            limiter.close()

    app = TrackerAPI(
        title="Issue Tracking Service",
        version="1.0.0",
        description=(
            "The reference implementation of the tracker API: the published API, and the "
            "optional features and known values the tracker-tui client uses when a server has them."
        ),
        openapi_url=OPENAPI_PATH,
        docs_url=None,
        redoc_url=None,
        redirect_slashes=False,
        lifespan=lifespan,
    )
    app.state.store = store
    app.state.window_seconds = window_seconds
    app.state.limiter = limiter
    app.state.webhooks = webhooks
    install_error_handlers(app)
    app.include_router(router, prefix=API_PREFIX)
    app.add_middleware(IdempotencyMiddleware, store=store)
    app.add_middleware(BodyLimitMiddleware)
    app.add_middleware(
        AuthMiddleware,
        store=store,
        limiter=limiter,
        prefix=API_PREFIX,
        public_paths={OPENAPI_PATH},
    )
    return app
