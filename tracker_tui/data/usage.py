"""How much of the rate limits this profile used, per limit, and what background sync will
still spend: what `tracker-tui usage` prints and the settings screen's usage tab draws.

Everything comes from the profile's cache, offline: the request log every process of the
profile writes (each request at the moment the limiter let it through, by bucket, background
polling apart) and the limits the limiter last learned (`/me`'s plan or the rate-limit headers,
`sync.remembered`). Windows are the limiter's own: a sliding minute and a sliding day, each as
long as the server's windows (the published "per minute" and "per day":
docs/api.md#plans-and-their-limits); the server may count requests from elsewhere too, which no
log here sees.

The day's alert: once the day's use passes `alert_percent` (80 % unless the profile says
otherwise), the client says what it does about it, which is what the limiter does anyway:
background sync keeps to its half of the day's budget and slows to fit it, and stops when
that half is spent; user actions keep the other half (`sync.ratelimit.limits`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cache import Cache
from sync.ratelimit import BACKGROUND_LOG_BUCKET, ENDPOINT_LIMITS, PLANS, Plan
from sync.ratelimit.learned import KEY_SCOPE, Learned
from sync.ratelimit.limits import BACKGROUND_SHARE
from sync.ratelimit.plans import MINUTES_PER_DAY
from sync.remembered import remembered_features, remembered_limits

DEFAULT_ALERT_PERCENT = 80
ALERT_SETTING = "usage_alert_percent"
"""The profile's `ui` member that moves the alert (a whole percentage, 1 to 100)."""
REQUESTS_PER_POLL = 2
"""What the sync loop spends on one background poll (`sync.engine`: changes and deletions)."""

ENDPOINT_NAMES = {
    "issues.create": "POST /issues",
    "comments.create": "POST /comments",
    "search": "GET /search",
    "bulk": "bulk operations",
}


@dataclass(frozen=True)
class LimitUse:
    """One limit: its name, its window, what was used of it and what it allows."""

    name: str
    window: str
    used: int
    limit: int
    blocked_until: float | None = None
    """When the server said this window is spent (local time), until then."""

    @property
    def left(self) -> int:
        return max(0, self.limit - self.used)

    @property
    def share(self) -> float:
        """Used, as a share of the limit (0 to 1, capped)."""
        return min(1.0, self.used / self.limit) if self.limit > 0 else 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "window": self.window,
            "used": self.used,
            "limit": self.limit,
            "left": self.left,
            "blocked_until": self.blocked_until,
        }


@dataclass(frozen=True)
class Usage:
    """The profile's use of every limit now, and what background sync will still spend."""

    plan: str
    plan_source: str
    limits: tuple[LimitUse, ...]
    background: LimitUse
    """Background sync's share of the day's limit, and what it spent of it."""
    poll_every: float
    """Seconds between background polls at the pace that fits its share all day."""
    alert_percent: int

    @property
    def day(self) -> LimitUse:
        return next(limit for limit in self.limits if limit.window == "day")

    @property
    def background_will_spend(self) -> int:
        """What background sync will still spend in the day's window: its share left."""
        return self.background.left

    @property
    def alert(self) -> bool:
        return self.day.used * 100 >= self.alert_percent * self.day.limit > 0

    def alert_text(self) -> str | None:
        """The status bar's warning, with what the client does about it; None below it."""
        if not self.alert:
            return None
        day = self.day
        percent = math.floor(100 * day.used / day.limit)
        if self.background.left <= 0:
            doing = "background sync has stopped at its share; your actions keep the rest"
        else:
            doing = (
                f"background sync slows to fit its {self.background.left} left and stops "
                "there; your actions keep the rest"
            )
        return f"Daily API budget {percent}% used ({day.used}/{day.limit}): {doing}"

    def to_json(self) -> dict[str, Any]:
        return {
            "plan": self.plan,
            "plan_source": self.plan_source,
            "limits": [limit.to_json() for limit in self.limits],
            "background": self.background.to_json(),
            "background_will_spend": self.background_will_spend,
            "poll_every_seconds": round(self.poll_every, 1),
            "alert_percent": self.alert_percent,
            "alert": self.alert_text(),
        }


def day_used_percent(left: int | None, limit: int | None) -> int | None:
    """The day's use in whole percent, from what a status report says is left of it."""
    if left is None or limit is None or limit <= 0:
        return None
    return math.floor(100 * max(0, limit - left) / limit)


def alert_words(percent: int, *, short: bool = False) -> str:
    """What the status bar says once the day's use passes the alert, and what the client
    does about it (the limiter's rules, `sync.ratelimit.limits`)."""
    if short:
        return f"⚠ day budget {percent}% used"
    return f"⚠ day budget {percent}%: background sync slows, stops at its half; yours is kept"


def alert_percent(ui: Mapping[str, Any]) -> int:
    """The profile's alert threshold, or the default when unset or not a percentage."""
    value = ui.get(ALERT_SETTING)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 100:
        return value
    return DEFAULT_ALERT_PERCENT


def measure_usage(
    cache: Cache,
    now: float,
    *,
    window_seconds: float = 60.0,
    alert_at: int = DEFAULT_ALERT_PERCENT,
) -> Usage:
    """The profile's use of each limit at `now` (local time), from its cache alone."""
    learned = remembered_limits(cache)
    plan, source = _plan(cache, learned)
    minute_ago, day_ago = now - window_seconds, now - window_seconds * MINUTES_PER_DAY
    blocked = _blocks(learned, now)
    limits = [
        LimitUse(
            f"{plan.name} plan",
            "minute",
            len(cache.requests.request_times(minute_ago)),
            plan.per_minute,
            blocked.get(KEY_SCOPE),
        ),
        LimitUse(
            f"{plan.name} plan",
            "day",
            len(cache.requests.request_times(day_ago)),
            plan.per_day,
            blocked.get(KEY_SCOPE),
        ),
    ]
    for bucket, limit in ENDPOINT_LIMITS.items():
        used = len(cache.requests.request_times(minute_ago, bucket))
        limits.append(
            LimitUse(ENDPOINT_NAMES.get(bucket, bucket), "minute", used, limit, blocked.get(bucket))
        )
    share = math.floor(plan.per_day * BACKGROUND_SHARE)
    spent = len(cache.requests.request_times(day_ago, BACKGROUND_LOG_BUCKET))
    day = window_seconds * MINUTES_PER_DAY
    poll_every = day * REQUESTS_PER_POLL / share if share > 0 else day
    return Usage(
        plan=plan.name,
        plan_source=source,
        limits=tuple(limits),
        background=LimitUse("background sync", "day", spent, share),
        poll_every=poll_every,
        alert_percent=alert_at,
    )


def _plan(cache: Cache, learned: Learned | None) -> tuple[Plan, str]:
    """The limits the limiter last learned, else the plan `/me` named at the probe, else Free
    (what the limiter itself assumes)."""
    if learned is not None and learned.plan in PLANS:
        return Plan(learned.plan, learned.per_minute, learned.per_day), learned.source
    features = remembered_features(cache)
    named = features.plan if features else None
    if named in PLANS:
        return PLANS[named], "me"
    return PLANS["free"], "default"


def _blocks(learned: Learned | None, now: float) -> dict[str, float]:
    if learned is None:
        return {}
    return {scope: until for scope, until in learned.blocked.items() if until > now}
