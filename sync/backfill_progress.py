"""What the screens and `tracker-tui status` show of a backfill (docs/sync.md#head-first),
apart from the pull itself so that reading it loads nothing of the network's.
"""

from __future__ import annotations

from datetime import datetime

from cache import Cache, Resource
from cache.models import JsonValue
from issuefields.frozen import Frozen

BACKFILL_SHARE = 0.8
"""Share of the background budget the backfill may spend in a day; polls keep the rest."""
FLOOR = "floor"
"""Scope of the head's floor in the cursor table: while it exists, a backfill is pending."""
PROGRESS_KEY = "pull_backfill:issues"
"""State key of the backfill's progress (`BackfillProgress`)."""


def pending(cache: Cache) -> bool:
    """Whether a backfill is still to finish (a head-first start that has not met its floor)."""
    return cache.server.cursor(Resource.ISSUES, scope=FLOOR) is not None


class BackfillProgress(Frozen):
    """What the sync panel, the status bar and `tracker-tui status` show of a backfill."""

    _fields = (
        "expected",
        "received",
        "requests",
        "head",
        "views",
        "paused_until",
        "finish_at",
        "done",
    )
    __slots__ = _fields
    expected: int | None
    """Records the backfill reads in all, from the first query's `pagination.total`."""
    received: int
    requests: int
    head: int | None
    """Records the head stored above the floor (keyset order), for the last page's size."""
    views: str
    """The user's default views: `pending`, `done`, or `unsupported` by the server."""
    paused_until: float | None
    """Local Unix time at which a backfill stopped by the day's budget resumes."""
    finish_at: float | None
    """Local Unix time the backfill is estimated to finish, given the plan."""
    done: bool

    def __init__(
        self,
        expected: int | None = None,
        received: int = 0,
        requests: int = 0,
        head: int | None = None,
        views: str = "pending",
        paused_until: float | None = None,
        finish_at: float | None = None,
        done: bool = False,
    ) -> None:
        self._init(expected, received, requests, head, views, paused_until, finish_at, done)

    def to_json(self) -> JsonValue:
        return {
            "expected": self.expected,
            "received": self.received,
            "requests": self.requests,
            "head": self.head,
            "views": self.views,
            "paused_until": self.paused_until,
            "finish_at": self.finish_at,
            "done": self.done,
        }

    @classmethod
    def from_json(cls, value: JsonValue) -> BackfillProgress | None:
        if not isinstance(value, dict):
            return None
        expected, received, requests = (value.get(k) for k in ("expected", "received", "requests"))
        views, paused, finish = (value.get(k) for k in ("views", "paused_until", "finish_at"))
        head = value.get("head")
        return cls(
            expected=expected if isinstance(expected, int) else None,
            received=received if isinstance(received, int) else 0,
            requests=requests if isinstance(requests, int) else 0,
            head=head if isinstance(head, int) else None,
            views=views if isinstance(views, str) else "pending",
            paused_until=float(paused) if isinstance(paused, int | float) else None,
            finish_at=float(finish) if isinstance(finish, int | float) else None,
            done=value.get("done") is True,
        )

    @property
    def fraction(self) -> float | None:
        if self.done:
            return 1.0
        if not self.expected:
            return None
        return min(1.0, self.received / self.expected)


def progress(cache: Cache) -> BackfillProgress | None:
    """The backfill's progress as last stored; None when no head-first start ever ran."""
    return BackfillProgress.from_json(cache.state.get(PROGRESS_KEY))


def save_progress(cache: Cache, value: BackfillProgress) -> None:
    cache.state.set(PROGRESS_KEY, value.to_json())


def backfill_text(backfill: BackfillProgress | None, *, long: bool = False) -> str | None:
    """ "backfill 12,300 of 98,000", "backfill paused until 09:12 (today's budget is spent)";
    `long` adds the estimated finish. None when no backfill is pending. Times are local."""
    if backfill is None or backfill.done:
        return None
    counted = f"{backfill.received:,}"
    if backfill.expected is not None:
        counted += f" of {max(backfill.expected, backfill.received):,}"
    if backfill.paused_until is not None:
        until = _clock_time(backfill.paused_until)
        return f"backfill {counted} paused until {until} (today's budget is spent)"
    text = f"backfill {counted}"
    if long and backfill.finish_at is not None:
        text += f", done about {_clock_time(backfill.finish_at)}"
    return text


def _clock_time(at: float) -> str:
    """A local time of day, with the date when it is not today."""
    moment = datetime.fromtimestamp(at)
    if moment.date() == datetime.now().date():
        return moment.strftime("%H:%M")
    return moment.strftime("%a %d %b %H:%M")
