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

from cache import Cache, Cursor, Resource
from sync.backfill_progress import (
    FLOOR,
    BackfillProgress,
    pending,
    progress,
    save_progress,
)

__all__ = ["BackfillProgress", "pending", "progress", "save_progress"]

BACKFILL = "backfill"
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
