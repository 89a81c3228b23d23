"""Where a head-first start stands (docs/sync.md#head-first): the cursors of its three parts,
and the progress the sync panel shows.

One cursor design covers the three parts of the issues' pull:

- the **incremental cursor** (the resource's own, `scope` ""): set by the head to its newest
  record, moved by every pull after it, as on any warm cache;
- the **floor** (scope `floor`): the head's oldest record (keyset order) or the start of its
  window (page walking). Everything at or above it is the head's, or the incremental pull's
  once edited; while it exists the backfill is not finished;
- the **backfill cursor** (scope `backfill`): the last record the backfill stored, oldest
  first, saved with its page. The backfill ends where it meets the floor.

All three live in the cache's cursor table, so a reset of the server copy wipes them together
and the next start is cold again. A record edited during the backfill leaves the backfill's
range for the incremental pull's (its `updated_at` moves above the floor), so it is read by one
of them whichever side of the backfill cursor it was on. Page walking cannot read oldest first:
its backfill walks the whole list, its position kept in the state store (`WALK_KEY`).
"""

from __future__ import annotations

from dataclasses import dataclass

from cache import Cache, Cursor, Resource
from cache.models import JsonValue

FLOOR = "floor"
BACKFILL = "backfill"
PROGRESS_KEY = "pull_backfill:issues"
"""State key of the backfill's progress (`BackfillProgress`), for the sync panel and status."""
WALK_KEY = "pull_backfill_walk:issues"
"""State key of a page-walking backfill's position: `{"page", "total"}`."""


def floor(cache: Cache) -> Cursor | None:
    """The head's floor: None when no backfill is pending."""
    return cache.server.cursor(Resource.ISSUES, scope=FLOOR)


def set_floor(cache: Cache, cursor: Cursor | None) -> None:
    """Set the floor (before the head's records and cursor: a start killed in between is
    cold again, never a warm cache with nothing below its head), or clear it (the backfill
    met it)."""
    if cursor is None:
        cache.server.clear_cursor(Resource.ISSUES, scope=FLOOR)
        return
    cache.server.apply_page(Resource.ISSUES, [], cursor, scope=FLOOR)


def backfill_cursor(cache: Cache) -> Cursor | None:
    return cache.server.cursor(Resource.ISSUES, scope=BACKFILL)


def pending(cache: Cache) -> bool:
    """Whether a backfill is still to finish (a head-first start that has not met its floor)."""
    return floor(cache) is not None


@dataclass(frozen=True)
class BackfillProgress:
    """What the sync panel, the status bar and `tracker-tui status` show of a backfill."""

    expected: int | None = None
    """Records the backfill reads in all, from the first query's `pagination.total`."""
    received: int = 0
    requests: int = 0
    head: int | None = None
    """Records the head stored above the floor (keyset order), for the last page's size."""
    views: str = "pending"
    """The user's default views: `pending`, `done`, or `unsupported` by the server."""
    paused_until: float | None = None
    """Local Unix time at which a backfill stopped by the day's budget resumes."""
    finish_at: float | None = None
    """Local Unix time the backfill is estimated to finish, given the plan."""
    done: bool = False

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
