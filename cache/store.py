"""`Cache`: the one object the TUI and the sync engine hold, one per profile.

It owns the transactions; the modules it calls own the SQL. Reads run in one read transaction
(a consistent snapshot across their queries); writes in one `BEGIN IMMEDIATE` transaction,
committed with `synchronous=FULL` when they carry user intent (outbox writes), since an edit
exists nowhere else. Thread and process rules are in cache.db.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from cache import (
    drafts,
    outbox,
    overlay,
    query,
    records,
    requestlog,
    schema,
    syncstate,
    views,
)
from cache.db import CACHE_SIZE_KIB, Connector, translated
from cache.errors import AmbiguousIssueError, CorruptCacheError
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
    ProjectRow,
    Resource,
    UserRow,
    WorkspaceRow,
)
from cache.overlay import Overlay
from cache.paths import (
    COMPANION_SUFFIXES,
    ensure_private_dir,
    ensure_private_file,
    profile_path,
)
from cache.records import Prepared
from cache.resources import SPECS
from cache.writes import OutboxWrites
from issuefields import Field


def open_cache(profile: str, *, root: Path | None = None) -> Cache:
    """The profile's cache under `root`, else `$TRACKER_HOME/data`, else the platform's user
    data directory (created 0700)."""
    path = profile_path(profile, root)
    ensure_private_dir(path.parent)
    return Cache.open(path)


def _open_request_log(path: Path) -> Connector:
    """The request log's file, replaced when damaged: it holds no edits and no server data,
    only recent request times, which the server's rate-limit headers stand in for meanwhile."""
    try:
        return _request_log(path)
    except CorruptCacheError:
        for stale in (path, *(Path(f"{path}{suffix}") for suffix in COMPANION_SUFFIXES)):
            stale.unlink(missing_ok=True)
    return _request_log(path)


def _request_log(path: Path) -> Connector:
    ensure_private_file(path)
    requests = Connector(path)
    try:
        with translated():
            requestlog.create(requests.conn())
    except BaseException:
        requests.close()
        raise
    return requests


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
            requests = _open_request_log(requestlog.log_path(path))
        except BaseException:
            connector.close()
            raise
        return cls(connector, clock, requests=requests)

    def __init__(
        self,
        connector: Connector,
        clock: Callable[[], float] = time.time,
        *,
        requests: Connector,
    ) -> None:
        super().__init__(connector, clock)
        self._requests = requests

    @property
    def path(self) -> Path:
        return self._db.path

    @property
    def request_log_path(self) -> Path:
        """The file of the request log (see cache.requestlog), beside the cache's."""
        return self._requests.path

    def close(self) -> None:
        self._db.close()
        self._requests.close()

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
        with self._requests.read() as conn:
            log = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
        if log != ["ok"]:
            found = [*(f for f in found if f != "ok"), *(f"request log: {f}" for f in log)]
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
        return self.apply_prepared(resource, self.prepare(resource, page), cursor, scope=scope)

    @staticmethod
    def prepare(resource: Resource, page: Iterable[Mapping[str, Any]]) -> list[Prepared]:
        """What storing these server records takes, computed without the database, on any
        thread, ahead of `apply_prepared` (see `records.Prepared`). Raises
        `InvalidRecordError` for a record without a string id."""
        return records.prepare(SPECS[resource], page)

    def apply_prepared(
        self,
        resource: Resource,
        page: Sequence[Prepared],
        cursor: Cursor | None = None,
        *,
        scope: str = "",
    ) -> ApplyResult:
        """`apply_page` for records `prepare` made."""
        with self._db.write() as conn:
            result = records.apply_page(conn, SPECS[resource], page)
            if cursor is not None:
                syncstate.set_cursor(conn, syncstate.cursor_key(resource, scope), cursor)
        return result

    def begin_bulk_load(self, resource: Resource) -> bool:
        """Start a cold load of an empty table: its indexes are built once at the end
        (`records.begin_bulk_load`); True when the table is in that state."""
        with self._db.write() as conn:
            return records.begin_bulk_load(conn, SPECS[resource])

    def finish_bulk_load(self, resource: Resource) -> bool:
        """Build the indexes of a cold load that began (in this run or one that was killed);
        False when there was none. Idempotent, and safe while another process loads."""
        with self._db.write() as conn:
            return records.finish_bulk_load(conn, SPECS[resource])

    def bulk_writes(self, on: bool) -> None:
        """Let the calling thread's connection grow the WAL to `records.BULK_CHECKPOINT_PAGES`
        before it checkpoints, and its page cache to `records.BULK_CACHE_KIB` (`on`), or go
        back to SQLite's usual 1,000 pages and the cache's usual size.

        Every page of a cold sync rewrites many of the same index and FTS pages; a checkpoint
        copies each distinct page once and fsyncs, so checkpointing every 1,000 WAL frames
        cost a cold sync more than the inserts did. Any connection that commits past its own
        limit runs the checkpoint, so every connection writing to the cache during the run
        needs the setting. It belongs to the connection only (the request log's file, with its
        few small rows, keeps the usual limit). Going back shrinks the page cache again, so
        the memory is held only while the bulk run lasts."""
        pages = records.BULK_CHECKPOINT_PAGES if on else records.DEFAULT_CHECKPOINT_PAGES
        kib = records.BULK_CACHE_KIB if on else CACHE_SIZE_KIB
        with translated():
            conn = self._db.conn()
            conn.execute(f"PRAGMA wal_autocheckpoint = {pages}")
            conn.execute(f"PRAGMA cache_size = -{kib}")

    def checkpoint(self) -> None:
        """Copy the WAL back into the database as far as readers allow (never waits for them)."""
        with translated():
            self._db.conn().execute("PRAGMA wal_checkpoint(PASSIVE)")

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

    # -- drafts (cache.drafts) ----------------------------------------------------------------

    def save_draft(self, key: str, value: JsonObject) -> None:
        """Keep what the user typed under `key`, replacing the draft there. A commit in WAL
        mode survives the process being killed, which is what a draft is for; an fsync per
        keystroke pause (`durable`) would guard against power loss at a cost paid while typing."""
        with self._db.write() as conn:
            drafts.save(conn, key, value, self._clock())

    def draft(self, key: str) -> JsonObject | None:
        with self._db.read() as conn:
            return drafts.load(conn, key)

    def discard_draft(self, key: str) -> None:
        with self._db.write() as conn:
            drafts.discard(conn, key)

    # -- request log --------------------------------------------------------------------------

    def reserve_request(self, at: float, bucket: str, checks: Sequence[LogCheck]) -> bool:
        """Atomically: if every check passes, log `(at, bucket)` and return True."""
        with translated():
            return requestlog.reserve(self._requests.conn(), at, bucket, checks)

    def release_request(self, at: float, bucket: str) -> bool:
        """Atomically delete one logged `(at, bucket)`: a request that never left."""
        with translated():
            return requestlog.release(self._requests.conn(), at, bucket)

    def request_times(self, since: float, bucket: str | None = None) -> list[float]:
        """Logged request times at or after `since`, ascending."""
        with self._requests.read() as conn:
            return requestlog.times(conn, since, bucket)

    def prune_requests(self, before: float) -> int:
        with self._requests.write() as conn:
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

    def position(
        self, filter: IssueFilter, sort: IssueSort, issue_id: str, *, near: int | None = None
    ) -> int | None:
        """The offset at which `window` shows the issue (a local id is followed to the server
        id once its create has landed), or None when the filter does not show it. Costs
        about what a window at that offset costs, less when `near` (where it was last seen)
        says which end of the list it is closer to."""
        with self._db.read():
            return query.position(query.prepare(self._db.state(), filter), sort, issue_id, near)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Make the reads inside (on this thread) see one state of the cache: a count, a
        position and a window that agree, however many writes commit meanwhile."""
        with self._db.read():
            yield

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

    def distinct_values(self, field: Field) -> list[str | None]:
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

    def issue_by_number(self, number: int) -> IssueDetail | None:
        """The issue shown as `#number` (what a user types to jump to one), as `issue` gives
        it; None when no issue here has that number."""
        with self._db.read() as conn:
            overlay_now = self._overlay()
            found = views.issue_id_by_number(conn, overlay_now, number)
            return None if found is None else views.issue_detail(conn, overlay_now, found)

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
