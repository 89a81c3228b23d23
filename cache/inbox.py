"""`Cache.inbox`: the change log as the inbox reads it (cache.changelog): what changed in the
issues that concern the user, which of it was read, and marking it read."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from cache import changelog
from cache.changelog import Change
from cache.db import Connector

SHOWN = 500
"""Entries the inbox reads at most at a time (of `changelog.KEEP_ENTRIES` kept)."""


class Inbox:
    """`Cache.inbox`: read the change log and keep its read state."""

    def __init__(self, connector: Connector, clock: Callable[[], float] = time.time) -> None:
        self._db = connector
        self._clock = clock

    def changes(self, *, unread_only: bool = True, limit: int = SHOWN) -> list[Change]:
        """Entries, newest first: the unread ones, or all those kept."""
        with self._db.read() as conn:
            return changelog.entries(conn, unread_only=unread_only, limit=limit)

    def after(self, change_id: int) -> list[Change]:
        """Entries made after `change_id`, oldest first (`latest` is where to start)."""
        with self._db.read() as conn:
            return changelog.after(conn, change_id)

    def latest(self) -> int:
        """The id of the newest entry (0 when there is none)."""
        with self._db.read() as conn:
            return changelog.latest(conn)

    def unread(self) -> tuple[int, int]:
        """How many entries are unread, and on how many issues."""
        with self._db.read() as conn:
            return changelog.unread(conn)

    def mark_read(self, issue_ids: Sequence[str] | None = None, *, up_to: int | None = None) -> int:
        """Mark the entries of these issues (of every issue: None) read, only those up to the
        entry `up_to` when given, so what arrived after the user looked stays unread."""
        with self._db.write() as conn:
            return changelog.mark_read(conn, issue_ids, up_to)

    def prune(self) -> int:
        """Drop what the log no longer keeps (done by every write that logs; see
        `changelog.prune`)."""
        with self._db.write() as conn:
            return changelog.prune(conn, self._clock())
