"""What this process knows about the limits in force, and the checks that follow from it.

Starts from the published tables (docs/api.md#plans-and-their-limits; Free until told otherwise: the
most cautious guess), learns the plan from `/me` or from `X-RateLimit-Limit`, and corrects itself
from every response: a window the server says is spent is blocked until its reset, a window with N
left allows N more, and `Retry-After` blocks for exactly its wait plus jitter. No I/O and no waiting
here: `limiter` does that. Local times throughout, server times converted with the measured clock
offset.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum, StrEnum

from sync.ratelimit.clock import ClockOffset
from sync.ratelimit.headers import ResponseMeta
from sync.ratelimit.learned import KEY_SCOPE, Learned
from sync.ratelimit.log import LogCheck
from sync.ratelimit.plans import (
    ENDPOINT_LIMITS,
    FREE,
    MINUTES_PER_DAY,
    PLANS,
    Bucket,
    Plan,
    plan_named,
    plan_with_limit,
)

BACKGROUND_LOG_BUCKET = "background"
"""Log bucket of background requests, so every process can count the background share."""

BACKGROUND_SHARE = 0.5
"""Background work may spend at most this share of the daily limit; the rest is the user's."""

USER_HEADROOM = 0.1
"""Share of each minute's limit (at least one request) background work leaves to the user."""

MAX_OBSERVATIONS = 16

RESET_RESOLUTION = 2.0
"""Seconds of error in "how far away is this reset": `Date` and `X-RateLimit-Reset` are both
whole seconds. A header names the day window only when its reset is further than two windows
plus this, so a minute window scaled to a second or two is never taken for the day's."""


class RequestClass(IntEnum):
    """Who is waiting: the user (an action on screen) goes before background polling."""

    USER = 0
    BACKGROUND = 1


class PlanSource(StrEnum):
    """Where the current plan came from; `/me` outranks an inference from headers, and both
    outrank what an earlier process stored (`STORED`: any header figure replaces it)."""

    DEFAULT = "default"
    STORED = "stored"
    HEADERS = "headers"
    ME = "me"


@dataclass(frozen=True)
class Constraint:
    """A check for the log, and when it stops mattering.

    `until` None: a sliding window (`since` moves with the clock). Otherwise a server-stated
    fixed window, lifted at `until` (local time) however full it is.
    """

    check: LogCheck
    until: float | None = None
    span: float | None = None
    """A sliding window's length without the margin (None for a fixed window): how long an
    entry counts once the server is known to have counted it (`sync.ratelimit.answered`)."""


class Limits:
    """The limits in force for one key, as far as this process knows them."""

    def __init__(
        self,
        *,
        window: float = 60.0,
        margin: float = 1.0,
        jitter: float = 1.0,
        random: Callable[[], float],
        offset: ClockOffset | None = None,
    ) -> None:
        self.window = window
        self.day = window * MINUTES_PER_DAY
        self.offset = offset or ClockOffset()
        self.plan: Plan = FREE
        self.plan_source = PlanSource.DEFAULT
        self._origin = PlanSource.DEFAULT
        """Where the plan was first learned, kept through `STORED` for the next store."""
        self.per_minute = FREE.per_minute
        self.per_day = FREE.per_day
        self.margin = margin
        self._jitter = jitter
        self._random = random
        self._observations: list[Constraint] = []
        self._blocks: dict[str | None, float] = {}
        self.day_reset: float | None = None
        """When the server's day window ends (local time), once a header described it."""

    @property
    def background_budget(self) -> int:
        """Requests background work may send per day: half of the daily limit, rounded down."""
        return math.floor(self.per_day * BACKGROUND_SHARE)

    def set_plan(self, plan: Plan, source: PlanSource) -> None:
        """Adopt a plan's limits, replacing any learned from headers."""
        self.plan, self.plan_source = plan, source
        if source is not PlanSource.STORED:
            self._origin = source
        self.per_minute, self.per_day = plan.per_minute, plan.per_day

    def learned(self, now: float) -> Learned:
        """What to store for the next process: the limits in force and the blocks not over."""
        blocked = {
            KEY_SCOPE if scope is None else scope: until
            for scope, until in sorted(self._blocks.items(), key=lambda item: item[0] or "")
            if until > now
        }
        day_reset = self.day_reset if self.day_reset is not None and self.day_reset > now else None
        return Learned(
            self.plan.name, self.per_minute, self.per_day, self._origin, blocked, day_reset
        )

    def restore(self, learned: Learned, now: float) -> None:
        """Start from what an earlier process stored, as `STORED`: the first answer's headers
        replace it (a lower figure at once). Figures above the published ones for the plan are not
        taken: a damaged or forged store must not make this process send faster than the plan."""
        plan = plan_named(learned.plan)
        if plan is None:
            return
        self.set_plan(plan, PlanSource.STORED)
        known = {source.value for source in PlanSource} - {PlanSource.STORED.value}
        if learned.source in known:
            self._origin = PlanSource(learned.source)
        self.per_minute = min(plan.per_minute, learned.per_minute)
        self.per_day = min(plan.per_day, learned.per_day)
        if learned.day_reset is not None and now < learned.day_reset <= now + self.day:
            self.day_reset = learned.day_reset
        for scope, until in learned.blocked.items():
            lasting = now < until <= now + self.day + self.window
            if lasting and (scope == KEY_SCOPE or scope in ENDPOINT_LIMITS):
                self._block(None if scope == KEY_SCOPE else scope, until)

    def blocked_until(self, bucket: str) -> float:
        """Local time before which nothing of `bucket` may be sent (a 429, a spent window)."""
        return max(self._blocks.get(None, 0.0), self._blocks.get(bucket, 0.0))

    def constraints(
        self, bucket: Bucket, request_class: RequestClass, now: float, users: int = 0
    ) -> list[Constraint]:
        """Every check a request of `bucket` must pass at `now`.

        Sliding windows are `margin` longer than the server's: requests are logged when let
        through but counted when they arrive, and arrival delays vary. Each carries its `span`,
        so that the limiter can end the padding early for requests answered since.

        Background work leaves the user the minute's headroom and, on top, as many requests
        as the user's `users` in the minute's window: a user at work goes on at that pace, and
        their next requests must not wait for the window to slide past background requests.
        """
        background = request_class is RequestClass.BACKGROUND
        minute = self.per_minute
        if background:
            minute -= max(1, math.floor(minute * USER_HEADROOM)) + users
        minute_ago, day_ago = now - self.window - self.margin, now - self.day - self.margin
        found = [
            Constraint(LogCheck(minute_ago, minute, None), span=self.window),
            Constraint(LogCheck(day_ago, self.per_day, None), span=self.day),
        ]
        if bucket in ENDPOINT_LIMITS:
            check = LogCheck(minute_ago, ENDPOINT_LIMITS[bucket], bucket)
            found.append(Constraint(check, span=self.window))
        if background:
            check = LogCheck(day_ago, self.background_budget, BACKGROUND_LOG_BUCKET)
            found.append(Constraint(check, span=self.day))
        self._observations = [
            c for c in self._observations if c.until is not None and c.until > now
        ]
        found.extend(c for c in self._observations if c.check.bucket in (None, bucket))
        return found

    def observe(self, meta: ResponseMeta, now: float) -> None:
        """Learn from one response (any status) received at local time `now`."""
        if meta.date is not None:
            self.offset.add(meta.date, received_at=now, sent_at=meta.sent_at)
        rate = meta.rate
        self._bound_offset(meta, now)
        scope = self._scope(meta)
        reset: float | None = None
        if rate is not None and rate.reset is not None:
            local = self.offset.to_local(rate.reset)
            if now < local <= now + self.day + self.window:
                reset = local
        if rate is not None and rate.limit is not None and scope is None and reset is not None:
            per_day = reset - now > 2 * self.window + RESET_RESOLUTION
            self._learn(rate.limit, per_day=per_day)
            if per_day and rate.limit >= self.per_minute:
                self._day_ends(reset)
        remaining = None if rate is None else rate.remaining
        if meta.retry_after is not None:
            self._block(scope, now + meta.retry_after + self._random_jitter())
        elif remaining == 0 and reset is not None:
            self._block(scope, reset + self._reset_pad() + self._random_jitter())
        elif meta.status == 429:
            wait = (reset + self.margin) if reset is not None else now + self.window
            self._block(scope, wait + self._random_jitter())
        elif remaining is not None and reset is not None:
            self._remember(scope, meta.sent_at, remaining, reset + self._reset_pad(), now)

    def _day_ends(self, reset: float) -> None:
        """Keep the day window's end; the same end read again through a slightly different
        clock offset is no news (each news is stored: `RateLimiter.on_learned`)."""
        if self.day_reset is None or abs(reset - self.day_reset) > self.window:
            self.day_reset = reset

    def _reset_pad(self) -> float:
        """How long after a window's reset (as converted to local time) it surely has passed
        on the server: the margin, or less when the window bounds show that the measured
        clock offset cannot be overstated by as much. Arrival delays only make a request
        count later, so they need no padding here; 429s keep the full margin."""
        overstated = self.offset.overstated
        return self.margin if overstated is None else min(self.margin, overstated)

    def _bound_offset(self, meta: ResponseMeta, now: float) -> None:
        """Bound the clock offset by the minute window a response was counted in (see
        `ClockOffset`). Windows start at whole minutes (docs/api.md#rate-limit-windows), so a reset
        names a window's end exactly when the window is a whole number of seconds; otherwise it may
        be rounded, and the response teaches nothing. Headers with the day's limit, or a limit that
        is no minute limit, describe some other window."""
        rate = meta.rate
        if rate is None or rate.reset is None or rate.limit is None or meta.sent_at is None:
            return
        minute_limits = {self.per_minute, *ENDPOINT_LIMITS.values()}
        if rate.limit == self.per_day or rate.limit not in minute_limits:
            return
        if float(self.window).is_integer():
            self.offset.bound(rate.reset - self.window, rate.reset, meta.sent_at, now)

    def _scope(self, meta: ResponseMeta) -> str | None:
        """The bucket a response's headers describe: its endpoint's, or (None) the whole key's.

        Headers describe the most constrained limit, so they speak for the endpoint only when
        their limit is the endpoint's and cannot also be the plan's minute limit.
        """
        endpoint = ENDPOINT_LIMITS.get(meta.bucket)
        limit = None if meta.rate is None else meta.rate.limit
        if endpoint is not None and limit == endpoint and limit != self.per_minute:
            return meta.bucket
        return None

    def _learn(self, limit: int, *, per_day: bool) -> None:
        """Take the key's limit from a header describing a minute (or day) window.

        A plan is adopted when the figure names one plan unambiguously, and over `/me` only when
        it is the smaller (a downgrade shows first in the headers). A window near midnight can
        look like a minute, so a minute figure that is also some plan's day figure (Free's
        1,000 is Enterprise's minute) teaches nothing. Other figures only ever lower a limit,
        and a "day" figure below the minute limit is a misread minute window, so it is ignored.
        """
        if limit <= 0:
            return
        ambiguous = not per_day and any(plan.per_day == limit for plan in PLANS.values())
        plan = None if ambiguous else plan_with_limit(limit, per_day=per_day)
        if plan is not None:
            if self.plan_source is not PlanSource.ME or plan.per_minute < self.plan.per_minute:
                self.set_plan(plan, PlanSource.HEADERS)
        elif per_day and limit >= self.per_minute:
            self.per_day = min(self.per_day, limit)
        elif not ambiguous:
            self.per_minute = min(self.per_minute, limit)

    def _remember(
        self, scope: str | None, sent_at: float | None, remaining: int, until: float, now: float
    ) -> None:
        """Keep "N left until R" as a check: at most N more requests logged since this one.

        The request that got the answer is itself in the log and already counted by the
        server, hence N + 1 from its send time. Counting everything logged since then is
        cautious: requests overtaken in flight may be counted twice, never missed.
        """
        since, limit = (now, remaining) if sent_at is None else (sent_at, remaining + 1)
        self._observations.append(Constraint(LogCheck(since, limit, scope), until))
        del self._observations[:-MAX_OBSERVATIONS]

    def _block(self, scope: str | None, until: float) -> None:
        self._blocks[scope] = max(self._blocks.get(scope, 0.0), until)

    def _random_jitter(self) -> float:
        return self._jitter * self._random()
