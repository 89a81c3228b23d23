"""Client-side rate limiting: SPEC's tables, response headers, the server clock, the limiter.

Modules, one job each: `plans` (SPEC's limit tables, request buckets), `headers` (reading
`X-RateLimit-*`, `Retry-After`, `Date`), `clock` (server clock offset), `log` (the shared log
of sent requests, as a Protocol the cache implements), `limits` (what is known about the
limits in force), `limiter` (waiting for a slot).
"""

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
