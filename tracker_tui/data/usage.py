"""How much of the rate limits this profile used, per limit, and what background sync will
still spend: what `tracker-tui usage` prints and the settings screen's usage tab draws.

Everything comes from the profile's cache, offline: the request log every process of the
profile writes (each request at the moment the limiter let it through, by bucket, background
polling apart) and the limits the limiter last learned (`/me`'s plan or the rate-limit headers,
`sync.remembered`). The minute is the limiter's own sliding one. The day is the server's when it
is known (`DayWindow`): from the reset of the day's window, when the headers last described it,
or from 00:00 UTC on a server with the reference service's extensions, which counts fixed UTC
days (docs/api.md#rate-limit-windows); otherwise it is the last 24 hours, and says so. The
server may count requests from elsewhere too, which no log here sees.

The day's alert (`tracker_tui.data.usage_alert`): once the day's use passes `alert_percent`
(80 % unless the profile says otherwise), the client says what it does about it, which is what
the limiter does anyway: background sync keeps to its half of the day's budget and slows to fit
it, and stops when that half is spent; user actions keep the other half
(`sync.ratelimit.limits`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cache import Cache
from sync.ratelimit import BACKGROUND_LOG_BUCKET, ENDPOINT_LIMITS, PLANS, Plan
from sync.ratelimit.learned import KEY_SCOPE, Learned
from sync.ratelimit.limits import BACKGROUND_SHARE
from sync.ratelimit.plans import MINUTES_PER_DAY
from sync.remembered import remembered_features, remembered_limits
from tracker_tui.data.usage_alert import DEFAULT_ALERT_PERCENT
from tracker_tui.data.usage_alert import alert_percent as alert_percent  # `usage` reads it here

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
class DayWindow:
    """Which "day" the day's use counts: the server's (known from the reset of its day
    window, `source` "reset_header", or from 00:00 UTC on a server known to count fixed UTC
    days, "utc_day") or, when unknown, the last 24 hours (`kind` "last_24h")."""

    kind: str
    source: str | None
    start: float
    """Local time the counted day began."""
    resets_at: float | None
    """Local time the server's day ends; None for the last 24 hours."""
    offset: float = 0.0
    """The server's clock minus ours, as last measured: times are shown in the server's."""

    @property
    def server_day(self) -> bool:
        return self.kind == "server_day"

    def describe(self, now: float) -> str:
        """For `usage`: what "day" means here, and when it resets."""
        if self.resets_at is None:
            return "day = the last 24 h (the server's day is not known to this client)"
        left = max(0, round(self.resets_at - now))
        hours, minutes = divmod(left // 60, 60)
        how = "by the reset the server sent" if self.source == "reset_header" else "UTC days"
        return (
            f"day = the server's day ({how}): since {_clock(self.start + self.offset)}, "
            f"resets at {_clock(self.resets_at + self.offset)} (in {hours} h {minutes:02d} min)"
        )

    def to_json(self) -> dict[str, Any]:
        """Times as the server's Unix times, in whole seconds (as its headers give them; the
        clock offset they went through is measured to a fraction of one)."""
        resets_at = None if self.resets_at is None else round(self.resets_at + self.offset)
        return {
            "kind": self.kind,
            "source": self.source,
            "start": round(self.start + self.offset),
            "resets_at": resets_at,
        }


def _clock(moment: float) -> str:
    return datetime.fromtimestamp(round(moment), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def day_window(
    cache: Cache, now: float, learned: Learned | None, window_seconds: float
) -> DayWindow:
    """The day the day's use is counted over at local time `now` (see the module)."""
    length = window_seconds * MINUTES_PER_DAY
    offset = cache.state.clock_offset()
    reset = None if learned is None else learned.day_reset
    if reset is not None and now < reset <= now + length:
        return DayWindow("server_day", "reset_header", reset - length, reset, offset)
    features = remembered_features(cache)
    if features is not None and features.me:
        start = math.floor((now + offset) / length) * length - offset
        return DayWindow("server_day", "utc_day", start, start + length, offset)
    return DayWindow("last_24h", None, now - length, None, offset)


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
    day_window: DayWindow
    """Which day the day's row counts (background sync's share is the limiter's last 24 h)."""

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
            "day_window": self.day_window.to_json(),
        }


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
    day = day_window(cache, now, learned, window_seconds)
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
            len(cache.requests.request_times(day.start)),
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
    length = window_seconds * MINUTES_PER_DAY
    poll_every = length * REQUESTS_PER_POLL / share if share > 0 else length
    return Usage(
        plan=plan.name,
        plan_source=source,
        limits=tuple(limits),
        background=LimitUse("background sync", "day", spent, share),
        poll_every=poll_every,
        alert_percent=alert_at,
        day_window=day,
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
