"""The client-side rate limiter: wait until a request fits every limit, then log it.

Goal (docs/sync.md#rate-limits): zero 429s when this client is the key's only user. Two mechanisms:

- A sliding log, shared by every process of the profile: never more than a limit in *any*
  window of its length. That is cautious against the server's fixed windows (any fixed window
  is one of the sliding ones), and needs no knowledge of where the server's windows start.
  Windows are padded by a margin for arrival delays, except where an answer already bounds
  when the server counted a request (`sync.ratelimit.answered`).
- The server's own word, from every response: `X-RateLimit-Remaining` N with a reset R allows
  N more until R; `Retry-After` (or a 429 without it) blocks until then, plus jitter.

Priorities: a user request goes before background work waiting in the same process; background
work leaves some of each minute to the user (a tenth, and as many as the user sent in the
minute's window), spends at most half of the day's limit, and under `giving_way` stops waiting
for its slot when what the user asked for wants the line (`sync.ratelimit.give_way`).
"""

from __future__ import annotations

import asyncio
import math
import random as random_module
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sync.ratelimit.answered import AnsweredLog
from sync.ratelimit.clock import ClockOffset
from sync.ratelimit.give_way import GaveWay, wait_unless
from sync.ratelimit.give_way import event as give_way_event
from sync.ratelimit.headers import ResponseMeta
from sync.ratelimit.learned import Learned
from sync.ratelimit.limits import (
    BACKGROUND_LOG_BUCKET,
    USER_HEADROOM,
    Constraint,
    Limits,
    PlanSource,
    RequestClass,
)
from sync.ratelimit.log import LogCheck, RequestLog
from sync.ratelimit.plans import Bucket, Plan, plan_named

SLIDE_EPSILON = 0.001
"""How far past an entry's window end to wake, so that the entry has surely left the window."""


@dataclass
class Waits:
    """How long this limiter held requests back, by the waits it chose (not by a wall clock,
    which a busy machine stretches): what a caller reports, and what a test can assert."""

    requests: int = 0
    """Requests let through."""
    total: float = 0.0
    """Seconds slept for the limits, all requests together."""
    first: float | None = None
    """Seconds the first request waited (None before it went): a process that forgot what it
    had learned about the server waits here for a window the log says is full."""


class RateLimiter:
    """Lets requests through at a pace no limit objects to; one per process and key.

    `clock` is the local wall clock (it must match that of the other processes sharing `log`),
    `sleep` waits that many seconds, `random` gives [0, 1): all injectable so tests simulate
    hours in milliseconds. `window_seconds` is the length of a rate-limit "minute" (the reference
    service can run faster for tests: docs/service.md#window-scaling); a day is 1,440 of them.
    `margin` (default a 60th of a window: 1 s) pads every window and reset against latency and clock
    error; `jitter` (the same default) is the most a wait after a 429 or a spent window adds, so
    that processes blocked together do not all retry at the same instant.
    """

    def __init__(
        self,
        log: RequestLog,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        random: Callable[[], float] = random_module.random,
        window_seconds: float = 60.0,
        margin: float | None = None,
        jitter: float | None = None,
        plan: str | None = None,
    ) -> None:
        self._log = log
        self._clock = clock
        self._sleep = sleep
        self._random = random
        self._limits = Limits(
            window=window_seconds,
            margin=window_seconds / 60 if margin is None else margin,
            jitter=window_seconds / 60 if jitter is None else jitter,
            random=random,
        )
        self._answered = AnsweredLog(keep=self._limits.window + self._limits.margin)
        self._users_waiting = 0
        self._users_idle = asyncio.Event()
        self._users_idle.set()
        self._last_prune = float("-inf")
        self.waits = Waits()
        self.on_learned: Callable[[Learned], None] | None = None
        """Called with what is worth remembering each time it changes (a plan, a limit, a
        spent window): the session stores it for the next process."""
        self._told = self._limits.learned(clock())
        self.set_plan(plan)

    def __repr__(self) -> str:
        return f"RateLimiter(plan={self.plan.name!r}, source={self._limits.plan_source.value!r})"

    @property
    def plan(self) -> Plan:
        """The plan whose limits are in force (Free until `/me` or a header says otherwise)."""
        return self._limits.plan

    @property
    def offset(self) -> ClockOffset:
        """The measured offset of the server's clock."""
        return self._limits.offset

    def server_now(self) -> float:
        """The server's clock, estimated from the `Date` headers seen so far."""
        return self._limits.offset.to_server(self._clock())

    def set_plan(self, name: str | None) -> bool:
        """Adopt the plan `/me` names; False (and no change) for a plan that is not published."""
        plan = plan_named(name)
        if plan is not None:
            self._limits.set_plan(plan, PlanSource.ME)
            self._tell(self._clock())
        return plan is not None

    def learned(self) -> Learned:
        """What this process knows about the limits, as the next one should start from it."""
        return self._limits.learned(self._clock())

    def restore(self, learned: Learned) -> None:
        """Start from what an earlier process learned (`Limits.restore`), before any request."""
        now = self._clock()
        self._limits.restore(learned, now)
        self._told = self._limits.learned(now)

    def on_response(self, meta: ResponseMeta) -> None:
        """Learn from a response, whatever its status; call it as soon as the response arrives."""
        now = self._clock()
        self._limits.observe(meta, now)
        self._answered.answered(meta.sent_at, now)
        self._tell(now)

    def _tell(self, now: float) -> None:
        """Hand `on_learned` what changed; blocks that merely ran out are no change."""
        learned, told = self._limits.learned(now), self._told
        moved = _figures(learned) != _figures(told)
        blocked = any(told.blocked.get(scope) != until for scope, until in learned.blocked.items())
        if not (moved or blocked):
            return
        self._told = learned
        if self.on_learned is not None:
            self.on_learned(learned)

    def poll_interval(self, requests_per_poll: int = 1) -> float:
        """Seconds between background polls so that they fit the background budget all day.

        interval = day / (background budget / requests per poll), the day being 1,440 windows.
        On Free: 86,400 s / (500 / 1) = 172.8 s; a poll that also checks for deletions costs 2
        requests, hence 345.6 s.
        """
        budget = self._limits.background_budget
        if budget <= 0:
            return self._limits.day
        return self._limits.day * max(1, requests_per_poll) / budget

    def budget(self) -> tuple[int, int]:
        """Requests left (minute, day) for this key, by the shared log: what a status bar shows.

        The log counts every process of the profile, so this is the room left to all of them;
        the server may count requests from elsewhere too, which the limiter learns on response.
        """
        now, limits = self._clock(), self._limits
        minute = len(self._log.request_times(now - limits.window))
        day = len(self._log.request_times(now - limits.day))
        return max(0, limits.per_minute - minute), max(0, limits.per_day - day)

    @property
    def window_seconds(self) -> float:
        """The length of a rate-limit minute (scaled for tests)."""
        return self._limits.window

    @property
    def day_seconds(self) -> float:
        """The length of the limiter's day: 1,440 windows."""
        return self._limits.day

    def now(self) -> float:
        """The local clock the limiter reads (injected by tests)."""
        return self._clock()

    def background_budget(self) -> int:
        """Background requests allowed in any day (docs/sync.md#rate-limits)."""
        return self._limits.background_budget

    def background_per_minute(self) -> int:
        """Background requests allowed in any minute: the plan's, less the user's headroom."""
        minute = self._limits.per_minute
        return minute - max(1, math.floor(minute * USER_HEADROOM))

    def background_left(self) -> int:
        """Background requests that fit in the day's sliding window now, by the shared log:
        what is left of the background budget, and of the day's limit itself."""
        now, limits = self._clock(), self._limits
        since = now - limits.day - limits.margin
        spent = len(self._log.request_times(since, BACKGROUND_LOG_BUCKET))
        everything = len(self._log.request_times(since))
        return max(0, min(limits.background_budget - spent, limits.per_day - everything))

    def background_free_at(self, needed: int) -> float:
        """Local time at which `needed` background requests fit the day's budget again: when
        enough of the oldest background requests have left the sliding day (the day's limit
        itself is left to `acquire`, since the user's requests move it)."""
        now, limits = self._clock(), self._limits
        since = now - limits.day - limits.margin
        times = self._log.request_times(since, BACKGROUND_LOG_BUCKET)
        excess = len(times) - (limits.background_budget - needed)
        if excess <= 0:
            return now
        if excess > len(times):
            return now + limits.day
        return times[excess - 1] + limits.day + limits.margin + SLIDE_EPSILON

    async def acquire(self, bucket: str, request_class: RequestClass = RequestClass.USER) -> float:
        """Wait until a request of `bucket` fits every limit, log it, return its local time.

        Background work is polling (`other` requests): anything else from the background
        would escape the background budget, so it is refused with `ValueError`. A background
        request under `giving_way(event)` raises `GaveWay`, unsent, once `event` is set while
        it waits (sync.ratelimit.give_way).
        """
        kind = Bucket(bucket)
        if request_class is RequestClass.BACKGROUND and kind is not Bucket.OTHER:
            raise ValueError(f"background requests must be in bucket 'other', not {kind.value!r}")
        log_bucket = (
            BACKGROUND_LOG_BUCKET if request_class is RequestClass.BACKGROUND else kind.value
        )
        slept = 0.0
        background = request_class is RequestClass.BACKGROUND
        wanted = give_way_event() if background else None
        if request_class is RequestClass.USER:
            self._users_waiting += 1
            self._users_idle.clear()
        try:
            while True:
                if wanted is not None and wanted.is_set():
                    raise GaveWay
                if background and self._users_waiting:
                    await wait_unless(self._users_idle.wait(), wanted)
                    continue
                now = self._clock()
                users = self._users_in_minute(now) if background else 0
                constraints = self._limits.constraints(kind, request_class, now, users)
                wait = self._limits.blocked_until(kind) - now
                if wait <= 0:
                    if self._reserve(now, log_bucket, constraints):
                        self._answered.prune(now)
                        self._answered.sent(now, log_bucket)
                        self._prune(now)
                        self._count(slept)
                        return now
                    wait = self._wait(constraints, now)
                    if wait <= 0:
                        wait = self._limits.window / 1000 * (1 + self._random())
                wait = min(wait, self._limits.window)
                slept += wait
                await wait_unless(self._sleep(wait), wanted)
        finally:
            if request_class is RequestClass.USER:
                self._users_waiting -= 1
                if not self._users_waiting:
                    self._users_idle.set()

    def _users_in_minute(self, now: float) -> int:
        """The user's requests in the minute's sliding window (every process's, by the log)."""
        since = now - self._limits.window - self._limits.margin
        everything = len(self._log.request_times(since))
        return everything - len(self._log.request_times(since, BACKGROUND_LOG_BUCKET))

    def not_sent(
        self, at: float, bucket: str, request_class: RequestClass = RequestClass.USER
    ) -> None:
        """The request `acquire(bucket, request_class)` let through at `at` certainly never reached
        the server (the connection was refused, the name did not resolve): the server did not
        count it, so its slot goes back to the shared log. Otherwise every request tried while
        the server is down spends the budget the user needs when it returns. A request whose
        fate is unknown (sent, no answer) keeps its slot: the server may have counted it."""
        kind = Bucket(bucket)
        log_bucket = (
            BACKGROUND_LOG_BUCKET if request_class is RequestClass.BACKGROUND else kind.value
        )
        self._answered.forget(at)
        self._log.release_request(at, log_bucket)

    def _count(self, slept: float) -> None:
        waits = self.waits
        if waits.first is None:
            waits.first = slept
        waits.requests += 1
        waits.total += slept

    def _reserve(self, now: float, log_bucket: str, constraints: list[Constraint]) -> bool:
        """Log a request if the constraints allow it: as they stand first (one transaction,
        the usual case, far from any limit), and only when that is refused, with the own
        entries known to be out of the server's window let off (`_check`), which reads the
        log for each minute window."""
        plain = [constraint.check for constraint in constraints]
        if self._log.reserve_request(now, log_bucket, plain):
            return True
        checks = [self._check(constraint, now) for constraint in constraints]
        return checks != plain and self._log.reserve_request(now, log_bucket, checks)

    def _check(self, constraint: Constraint, now: float) -> LogCheck:
        """The log check of a constraint, allowing one more request for each own entry the
        check counts that is known to be out of the server's window (`answered`). Once any
        answer is known, that costs a read of the log per minute window."""
        check = constraint.check
        if constraint.span is None or not self._answered.helps(constraint.span):
            return check
        times = self._log.request_times(check.since, check.bucket)
        released = self._answered.released(times, check.bucket, constraint.span, now)
        if not released:
            return check
        return LogCheck(check.since, check.limit + released, check.bucket)

    def _wait(self, constraints: list[Constraint], now: float) -> float:
        """Seconds until every constraint could pass, judging by the log as it is now.

        Asked only after the log refused a request, so the usual request reads nothing here; a
        zero means another process took the slot first.
        """
        return max((self._wait_one(constraint, now) for constraint in constraints), default=0.0)

    def _wait_one(self, constraint: Constraint, now: float) -> float:
        check = constraint.check
        times = self._log.request_times(check.since, check.bucket)
        excess = len(times) - check.limit + 1
        if excess <= 0:
            return 0.0
        if constraint.until is not None:
            return constraint.until - now
        if check.limit <= 0:
            return self._limits.window
        if constraint.span is None or not self._answered.helps(constraint.span):
            return times[excess - 1] - check.since + SLIDE_EPSILON
        ends = self._answered.ends(times, check.bucket, constraint.span, now - check.since)
        return ends[excess - 1] - now + SLIDE_EPSILON

    def _prune(self, now: float) -> None:
        """Drop entries no window can still count, at most once a window."""
        if now - self._last_prune >= self._limits.window:
            self._last_prune = now
            self._log.prune_requests(now - self._limits.day - self._limits.window)


def _figures(learned: Learned) -> tuple[str, int, int, str, float | None]:
    return learned.plan, learned.per_minute, learned.per_day, learned.source, learned.day_reset
