"""Client-side rate limiting: the published tables, response headers, the server clock, the limiter.

Modules, one job each: `plans` (the published limit tables, request buckets), `headers` (reading
`X-RateLimit-*`, `Retry-After`, `Date`), `clock` (server clock offset), `log` (the shared log
of sent requests, as a Protocol the cache implements), `limits` (what is known about the
limits in force), `limiter` (waiting for a slot). How they work together: docs/sync.md#rate-limits.

Each name loads its module when first used (PEP 562): `sync.errors` reads the headers
module, and the read commands import it without the limiter and asyncio behind it
(docs/architecture.md#start-up).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sync.ratelimit.clock import ClockOffset
    from sync.ratelimit.headers import RateLimitHeaders, ResponseMeta, read_meta
    from sync.ratelimit.limiter import RateLimiter, Waits
    from sync.ratelimit.limits import BACKGROUND_LOG_BUCKET, RequestClass
    from sync.ratelimit.log import LogCheck, RequestLog
    from sync.ratelimit.plans import ENDPOINT_LIMITS, PLANS, Bucket, Plan, bucket_for

__all__ = [
    "BACKGROUND_LOG_BUCKET",
    "ENDPOINT_LIMITS",
    "PLANS",
    "Bucket",
    "ClockOffset",
    "LogCheck",
    "Plan",
    "RateLimitHeaders",
    "RateLimiter",
    "RequestClass",
    "RequestLog",
    "ResponseMeta",
    "Waits",
    "bucket_for",
    "read_meta",
]

_HOMES = {
    "BACKGROUND_LOG_BUCKET": "sync.ratelimit.limits",
    "Bucket": "sync.ratelimit.plans",
    "ClockOffset": "sync.ratelimit.clock",
    "ENDPOINT_LIMITS": "sync.ratelimit.plans",
    "LogCheck": "sync.ratelimit.log",
    "PLANS": "sync.ratelimit.plans",
    "Plan": "sync.ratelimit.plans",
    "RateLimitHeaders": "sync.ratelimit.headers",
    "RateLimiter": "sync.ratelimit.limiter",
    "RequestClass": "sync.ratelimit.limits",
    "RequestLog": "sync.ratelimit.log",
    "ResponseMeta": "sync.ratelimit.headers",
    "Waits": "sync.ratelimit.limiter",
    "bucket_for": "sync.ratelimit.plans",
    "read_meta": "sync.ratelimit.headers",
}
"""The module each name of `__all__` lives in, imported on first use."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
