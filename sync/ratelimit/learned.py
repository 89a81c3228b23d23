"""What one process learned about a key's limits, kept for the next process (issue 15).

A server with only the published API names its plan only in `X-RateLimit-Limit`, so a process that
starts from nothing assumes Free's 60 a minute until its first answer. Meanwhile the request
log, shared by every process of the profile, may already hold more than 60 requests of the last
minute (a Pro key's pace), and the first request waited for most of a window. So what was
learned (the plan and where it came from, the limits in force, and windows known to be spent
until a reset) is stored beside the server's features and taken up by the next process before
its first request. It is a starting point only: the next answer's headers correct it, and a
lower limit wins at once (`sync.ratelimit.limits.Limits`).

Blocks are local times: the processes sharing a cache share a machine, hence a clock.
"""

from __future__ import annotations

import json
import math
from typing import Any

from issuefields.frozen import Frozen

LEARNED_VERSION = 1
KEY_SCOPE = ""
"""The scope of a block on the whole key (in memory: None); other scopes are endpoint buckets."""


class Learned(Frozen):
    """The limits in force for a key, as far as a process knew them when it stored this."""

    _fields = ("plan", "per_minute", "per_day", "source", "blocked", "day_reset")
    __slots__ = _fields
    plan: str
    per_minute: int
    per_day: int
    source: str
    """Where the plan came from: `me`, `headers`, or `default` (nothing said yet)."""
    blocked: dict[str, float]
    """Scope (`KEY_SCOPE` or a bucket) -> local time before which nothing of it may go."""
    day_reset: float | None
    """Local time at which the server's day window ends, when a response's headers described
    that window (its `X-RateLimit-Reset`): the usage view counts the server's day from it.
    Nothing paces by it; absent from stores written before it existed."""

    def __init__(
        self,
        plan: str,
        per_minute: int,
        per_day: int,
        source: str = "default",
        blocked: dict[str, float] | None = None,
        day_reset: float | None = None,
    ) -> None:
        self._init(plan, per_minute, per_day, source, {} if blocked is None else blocked, day_reset)

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "version": LEARNED_VERSION,
            "plan": self.plan,
            "per_minute": self.per_minute,
            "per_day": self.per_day,
            "source": self.source,
            "blocked": self.blocked,
        }
        if self.day_reset is not None:
            data["day_reset"] = self.day_reset
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Learned:
        """Read stored limits; `ValueError` when unreadable, of another version or absurd (the
        caller then starts from the published tables, as with nothing stored)."""
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("version") != LEARNED_VERSION:
            raise ValueError("stored limits are unreadable or of another version")
        plan, source = data.get("plan"), data.get("source")
        per_minute, per_day = data.get("per_minute"), data.get("per_day")
        if not isinstance(plan, str) or not isinstance(source, str):
            raise ValueError("stored limits name no plan")
        reset = data.get("day_reset")
        day_reset = (
            float(reset) if isinstance(reset, int | float) and math.isfinite(reset) else None
        )
        return cls(
            plan,
            _count(per_minute),
            _count(per_day),
            source,
            _blocks(data.get("blocked")),
            None if isinstance(reset, bool) else day_reset,
        )


def _count(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    raise ValueError("stored limits are not positive whole numbers")


def _blocks(value: Any) -> dict[str, float]:
    if not isinstance(value, dict):
        raise ValueError("stored blocks are not a mapping")
    found: dict[str, float] = {}
    for scope, until in value.items():
        number = until if isinstance(until, int | float) and not isinstance(until, bool) else None
        if not isinstance(scope, str) or number is None or not math.isfinite(number):
            raise ValueError("a stored block is not a time")
        found[scope] = float(number)
    return found
