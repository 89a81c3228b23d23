"""The published limit tables (docs/api.md#plans-and-their-limits), and which limit a request or a
response header belongs to.

Everything here is the published API, nothing the reference service adds: any server has these
plans and per-endpoint limits, so the limiter can start from them before the server says anything.
"""

from __future__ import annotations

from enum import StrEnum

from issuefields.frozen import Frozen

MINUTES_PER_DAY = 1440


class Plan(Frozen):
    """A plan's default limits: requests per minute and per day."""

    _fields = ("name", "per_minute", "per_day")
    __slots__ = _fields
    name: str
    per_minute: int
    per_day: int

    def __init__(self, name: str, per_minute: int, per_day: int) -> None:
        self._init(name, per_minute, per_day)


FREE = Plan("free", per_minute=60, per_day=1_000)
PRO = Plan("pro", per_minute=300, per_day=10_000)
ENTERPRISE = Plan("enterprise", per_minute=1_000, per_day=100_000)
PLANS: dict[str, Plan] = {plan.name: plan for plan in (FREE, PRO, ENTERPRISE)}


class Bucket(StrEnum):
    """The groups of requests that share a limit; every request belongs to exactly one."""

    ISSUES_CREATE = "issues.create"
    COMMENTS_CREATE = "comments.create"
    SEARCH = "search"
    BULK = "bulk"
    OTHER = "other"


ENDPOINT_LIMITS: dict[str, int] = {
    Bucket.ISSUES_CREATE: 30,
    Bucket.COMMENTS_CREATE: 60,
    Bucket.SEARCH: 30,
    Bucket.BULK: 10,
}
"""Per-minute limits that apply on top of the plan's."""

_ROUTES: dict[tuple[str, str], Bucket] = {
    ("POST", "/issues"): Bucket.ISSUES_CREATE,
    ("POST", "/comments"): Bucket.COMMENTS_CREATE,
    ("GET", "/search"): Bucket.SEARCH,
    ("POST", "/issues/bulk"): Bucket.BULK,
}


def bucket_for(method: str, path: str) -> Bucket:
    """The bucket of a request, from its method and its path below the base URL."""
    route = "/" + path.split("?", 1)[0].strip("/")
    return _ROUTES.get((method.upper(), route), Bucket.OTHER)


def plan_named(name: str | None) -> Plan | None:
    """The plan a server names (`/me`), or None for a plan that is not published."""
    if name is None:
        return None
    return PLANS.get(name.strip().lower())


def plan_with_limit(limit: int, *, per_day: bool) -> Plan | None:
    """The only plan whose minute (or day) limit is `limit`, or None when none or several match.

    A header says "1,000" both for Free's day and for Enterprise's minute; only the caller knows
    which window the header describes, so it says which column to look in.
    """
    matches = [
        plan for plan in PLANS.values() if (plan.per_day if per_day else plan.per_minute) == limit
    ]
    return matches[0] if len(matches) == 1 else None
