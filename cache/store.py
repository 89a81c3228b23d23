"""`Cache`: the one object the TUI and the sync engine hold, one per profile.

It owns the transactions; the modules it calls own the SQL. Reads run in one read transaction
(a consistent snapshot across their queries); writes in one `BEGIN IMMEDIATE` transaction,
committed with `synchronous=FULL` when they carry user intent (outbox writes), since an edit
exists nowhere else. Thread and process rules are in cache.db.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from cache import (
    outbox,
    overlay,
    query,
    records,
    requestlog,
    schema,
    syncstate,
    views,
)
from cache.db import Connector, translated
from cache.models import (
    ApplyResult,
    CommentRow,
    Cursor,
    IssueDetail,
    IssueFilter,
    IssueRow,
    IssueSort,
    JsonObject,
    JsonValue,
    LogCheck,
    PickerField,
    ProjectRow,
    Resource,
    UserRow,
    WorkspaceRow,
)
from cache.overlay import Overlay
from cache.paths import ensure_private_dir, ensure_private_file, profile_path
from cache.resources import SPECS
from cache.writes import OutboxWrites


def open_cache(profile: str, *, root: Path | None = None) -> Cache:
    """The profile's cache under `root`, else `$TRACKER_HOME/data`, else the platform's user
    data directory (created 0700)."""
    path = profile_path(profile, root)
    ensure_private_dir(path.parent)
    return Cache.open(path)


class Cache(OutboxWrites):
    """A profile's local store: server copy, sync state, outbox, request log, search.
    Construct it with `open_cache` or `Cache.open`; the outbox half of the API is in
    cache.writes."""

    @classmethod
    def open(cls, path: Path, *, clock: Callable[[], float] = time.time) -> Cache:
        """Open (creating if needed) an explicit cache file and bring its schema up to date."""
        if not path.parent.exists():
            ensure_private_dir(path.parent)
        ensure_private_file(path)
        connector = Connector(path)
        try:
            with translated():
                schema.migrate(connector.conn())
        except BaseException:
            connector.close()
            raise
        return cls(connector, clock)

    @property
    def path(self) -> Path:
        return self._db.path

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Cache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def integrity_check(self) -> list[str]:
        """`PRAGMA integrity_check` plus FTS5's check that each index matches its table:
        `["ok"]` when all is well, else the problems found. Reads the whole file: slow."""
        with self._db.write() as conn:
            found = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
            for table in ("issues_fts", "comments_fts"):
                try:
                    conn.execute(
                        f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)"
                    )
                except sqlite3.DatabaseError as error:
                    found = [*(f for f in found if f != "ok"), f"{table}: {error}"]
        return found

    # -- server copy (the sync engine is its only writer) ------------------------------------

    def apply_page(
        self,
        resource: Resource,
        page: Sequence[Mapping[str, Any]],
        cursor: Cursor | None = None,
        *,
        scope: str = "",
    ) -> ApplyResult:
        """Store a page of server records (tombstones `{"id", "deleted": true, "updated_at"}`
        included) and, when given, the cursor that follows it, in one transaction."""
        with self._db.write() as conn:
            result = records.apply_page(conn, SPECS[resource], page)
            if cursor is not None:
                syncstate.set_cursor(conn, syncstate.cursor_key(resource, scope), cursor)
        return result

    def delete_missing(
        self,
        resource: Resource,
        ids_seen: Iterable[str],
        *,
        issue_id: str | None = None,
        swept_at: float | None = None,
    ) -> int:
        """After a full id sweep (of one issue's comments when `issue_id` is given), drop the
        records it did not see; records the sweep time when `swept_at` is given."""
        with self._db.write() as conn:
            gone = records.delete_missing(conn, SPECS[resource], ids_seen, issue_id)
            if swept_at is not None:
                syncstate.set_last_full_sweep(conn, resource.value, swept_at)
        return gone

    def local_count(self, resource: Resource, *, issue_id: str | None = None) -> int:
        """Server records held (to compare with `pagination.total`)."""
        with self._db.read() as conn:
            return records.local_count(conn, SPECS[resource], issue_id)

    def server_record(self, resource: Resource, record_id: str) -> JsonObject | None:
        """The server's copy of one record, without local edits."""
        with self._db.read() as conn:
            return records.server_record(conn, SPECS[resource], record_id)

    def reset_server_copy(self) -> None:
        """Wipe server rows, FTS and cursors for a full re-pull; the outbox is untouched."""
        with self._db.write() as conn:
            records.reset_server_copy(conn)

    # -- sync state -------------------------------------------------------------------------

    def get_state(self, key: str) -> JsonValue:
        with self._db.read() as conn:
            return syncstate.get_state(conn, key)

    def set_state(self, key: str, value: JsonValue) -> None:
        """Store a JSON value under `key`; `None` removes it."""
        with self._db.write() as conn:
            syncstate.set_state(conn, key, value)

    def set_clock_offset(self, seconds: float) -> None:
        """Server clock minus local clock, as measured from `Date` headers."""
        self.set_state(syncstate.CLOCK_OFFSET_KEY, seconds)

    def clock_offset(self) -> float:
        with self._db.read() as conn:
            return syncstate.clock_offset(conn)

    def get_cursor(self, resource: Resource, *, scope: str = "") -> Cursor | None:
        with self._db.read() as conn:
            return syncstate.get_cursor(conn, syncstate.cursor_key(resource, scope))

    def set_cursor(self, resource: Resource, cursor: Cursor | None, *, scope: str = "") -> None:
        with self._db.write() as conn:
            syncstate.set_cursor(conn, syncstate.cursor_key(resource, scope), cursor)

    def last_full_sweep(self, resource: Resource) -> float | None:
        with self._db.read() as conn:
            return syncstate.last_full_sweep(conn, resource.value)

    def set_last_full_sweep(self, resource: Resource, at: float) -> None:
        with self._db.write() as conn:
            syncstate.set_last_full_sweep(conn, resource.value, at)

    # -- request log --------------------------------------------------------------------------

    def reserve_request(self, at: float, bucket: str, checks: Sequence[LogCheck]) -> bool:
        """Atomically: if every check passes, log `(at, bucket)` and return True."""
        with self._db.write() as conn:
            return requestlog.reserve(conn, at, bucket, checks)

    def request_times(self, since: float, bucket: str | None = None) -> list[float]:
        """Logged request times at or after `since`, ascending."""
        with self._db.read() as conn:
            return requestlog.times(conn, since, bucket)

    def prune_requests(self, before: float) -> int:
        with self._db.write() as conn:
            return requestlog.prune(conn, before)

    # -- the effective view (what the TUI draws) ---------------------------------------------

    def _overlay(self) -> Overlay:
        return overlay.current(self._db.state())

    def window(
        self, filter: IssueFilter, sort: IssueSort, offset: int, limit: int
    ) -> list[IssueRow]:
        """Rows `[offset, offset + limit)` of the effective issue list."""
        with self._db.read():
            return query.window(query.prepare(self._db.state(), filter), sort, offset, limit)

    def count(self, filter: IssueFilter) -> int:
        with self._db.read():
            return query.count(query.prepare(self._db.state(), filter))

    def query_plans(self, filter: IssueFilter, sort: IssueSort) -> list[str]:
        """EXPLAIN QUERY PLAN of the window and count queries (diagnostics and tests)."""
        with self._db.read():
            return query.plans(query.prepare(self._db.state(), filter), sort)

    def issue(self, issue_id: str) -> IssueDetail | None:
        """One issue with its comments, pending entries and open conflicts; local ids of
        records whose create has landed are followed to the server id."""
        with self._db.read() as conn:
            return views.issue_detail(conn, self._overlay(), outbox.resolve_id(conn, issue_id))

    def comments(self, issue_id: str) -> list[CommentRow]:
        with self._db.read() as conn:
            return views.comments(conn, self._overlay(), outbox.resolve_id(conn, issue_id))

    def distinct_values(self, field: PickerField) -> list[str | None]:
        with self._db.read() as conn:
            return views.distinct_values(conn, self._overlay(), field)

    def projects(self) -> list[ProjectRow]:
        with self._db.read() as conn:
            return views.projects(conn, self._overlay())

    def users(self) -> list[UserRow]:
        with self._db.read() as conn:
            return views.users(conn)

    def workspace(self) -> WorkspaceRow | None:
        with self._db.read() as conn:
            return views.workspace(conn)
