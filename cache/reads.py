"""What the screens and the command line read: the effective view, the server copy with the
outbox's pending writes laid over it (cache.overlay), never waiting on the network.

Each read runs in one read transaction, so its queries see one state of the cache;
`snapshot` stretches that over several reads. The list's reads import cache.query where they
run: it brings the filters, the search and the orderings (ten modules), which a command that
reads one issue (`issues show`, `outbox`) never uses.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from cache import outbox, overlay, searched, views
from cache.db import Connector
from cache.errors import AmbiguousIssueError, CountStopped
from cache.models import (
    IssueDetail,
    IssueFilter,
    IssueRow,
    IssueSort,
    ProjectRow,
    UserRow,
    WorkspaceRow,
)
from cache.overlay import Overlay
from issuefields import Field

STOP_CHECK_STEPS = 20_000
"""SQLite's virtual machine steps between two questions to a count's `stop` (well under a
millisecond of work, for a call that costs a fraction of a microsecond)."""


class Reads:
    """`Cache.reads`: the issue list, one issue, the values pickers offer, and what a user
    typed to name an issue."""

    def __init__(self, connector: Connector) -> None:
        self._db = connector

    def _overlay(self) -> Overlay:
        return overlay.current(self._db.state())

    def window(
        self, filter: IssueFilter, sort: IssueSort, offset: int, limit: int
    ) -> list[IssueRow]:
        """Rows `[offset, offset + limit)` of the effective issue list; those the server's
        search brought in ahead of the backfill say so (`IssueRow.searched`)."""
        from cache import query

        with self._db.read() as conn:
            rows = query.window(query.prepare(self._db.state(), filter), sort, offset, limit)
            marked = searched.among(conn, (row.id for row in rows))
        if not marked:
            return rows
        return [row.replace(searched=True) if row.id in marked else row for row in rows]

    def count(
        self,
        filter: IssueFilter,
        sort: IssueSort | None = None,
        *,
        stop: Callable[[], bool] | None = None,
    ) -> int:
        """How many issues `filter` shows; `sort` names the order of the window a caller
        reads next in the same snapshot, which lets a search serve both from one pass.
        `stop` is asked every few thousand steps of SQLite: once it says True the count is
        abandoned (`CountStopped`), so a count nobody waits for frees the core at once."""
        from cache import query

        with self._db.read() as conn:
            if stop is None:
                return query.count(query.prepare(self._db.state(), filter), sort)
            conn.set_progress_handler(lambda: int(stop()), STOP_CHECK_STEPS)
            try:
                return query.count(query.prepare(self._db.state(), filter), sort)
            except sqlite3.Error as error:
                # An interrupted write to a TEMP table rolls the transaction back, and with it
                # what this thread's memo says those tables hold.
                self._db.state().memo().clear()
                if stop():
                    raise CountStopped("the count was no longer wanted") from error
                raise
            finally:
                conn.set_progress_handler(None, 0)

    def position(
        self, filter: IssueFilter, sort: IssueSort, issue_id: str, *, near: int | None = None
    ) -> int | None:
        """The offset at which `window` shows the issue (a local id is followed to the server
        id once its create has landed), or None when the filter does not show it. Costs
        about what a window at that offset costs, less when `near` (where it was last seen)
        says which end of the list it is closer to."""
        from cache import query

        with self._db.read():
            return query.position(query.prepare(self._db.state(), filter), sort, issue_id, near)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Make the reads inside (on this thread) see one state of the cache: a count, a
        position and a window that agree, however many writes commit meanwhile."""
        with self._db.read():
            yield

    def issue(self, issue_id: str) -> IssueDetail | None:
        """One issue with its comments, pending entries and open conflicts; local ids of
        records whose create has landed are followed to the server id."""
        with self._db.read() as conn:
            return views.issue_detail(conn, self._overlay(), outbox.resolve_id(conn, issue_id))

    def distinct_values(self, field: Field) -> list[str | None]:
        with self._db.read() as conn:
            return views.distinct_values(conn, self._overlay(), field)

    def projects(self) -> list[ProjectRow]:
        with self._db.read() as conn:
            return views.projects(conn, self._overlay())

    def workspace(self) -> WorkspaceRow | None:
        """The key's workspace, a queued rename shown at once; None before it was read."""
        with self._db.read() as conn:
            return views.workspace(conn, self._overlay())

    def users(self) -> list[UserRow]:
        with self._db.read() as conn:
            return views.users(conn)

    def resolve_issue(self, ref: str) -> str | None:
        """The id of the issue a user means: `#42` or `42` (the number the server shows), or
        an id, server or local (followed to the server id once its create landed). None when
        no issue of the effective view matches; `AmbiguousIssueError` when digits are one
        issue's number and another's id. The one place every command and screen turns what a
        user typed into an issue."""
        with self._db.read() as conn:
            found = views.resolve_issue_ref(conn, self._overlay(), ref)
        if len(found) > 1:
            raise AmbiguousIssueError(ref, found)
        return found[0] if found else None
