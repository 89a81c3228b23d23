"""What the pull writes: the server's records, a page at a time, with the cursor that
follows each page, and the sweeps that find records deleted on the server. The pull is the
server copy's only writer; the outbox never writes here but through a landed write
(cache.sending).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from cache import bulk_load, changelog, records, searched, syncstate
from cache.db import CACHE_SIZE_KIB, Connector, translated
from cache.models import ApplyResult, Cursor, JsonObject, Resource
from cache.records import Prepared
from cache.resources import SPECS


class ServerCopy:
    """`Cache.server`: store and sweep server records; count and read them unmerged."""

    def __init__(self, connector: Connector, clock: Callable[[], float] = time.time) -> None:
        self._db = connector
        self._clock = clock

    def apply_page(
        self,
        resource: Resource,
        page: Sequence[Mapping[str, Any]],
        cursor: Cursor | None = None,
        *,
        scope: str = "",
        news: bool = False,
        from_search: bool = False,
    ) -> ApplyResult:
        """Store a page of server records (tombstones `{"id", "deleted": true, "updated_at"}`
        included) and, when given, the cursor that follows it, in one transaction. What
        changed in the issues that concern the user goes to the change log (cache.changelog);
        `news`: records new to the cache are news too (an incremental pull's, not a first
        load's). `from_search`: the server's search answered the page, not a pull: the issues
        the cache did not hold are remembered as the search's alone (cache.searched), which
        a pull's page holding them ends."""
        return self.apply_prepared(
            resource,
            self.prepare(resource, page),
            cursor,
            scope=scope,
            news=news,
            from_search=from_search,
        )

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
        news: bool = False,
        from_search: bool = False,
    ) -> ApplyResult:
        """`apply_page` for records `prepare` made."""
        ids = [item.key for item in page] if resource is Resource.ISSUES else []
        with self._db.write() as conn:
            fresh = set(ids) - searched.held(conn, ids) if from_search else set()
            seen = changelog.watch(resource, page, news=news)
            result = records.apply_page(conn, SPECS[resource], page, seen)
            changelog.note(conn, seen, self._clock())
            if from_search:
                searched.note(conn, sorted(fresh))
            elif ids:
                searched.reached(conn, ids)
            if cursor is not None:
                syncstate.set_cursor(conn, syncstate.cursor_key(resource, scope), cursor)
        return result

    def keep_anchors(self) -> bool:
        """Lay the unfiltered list's anchors, or bring those the file keeps to the issues
        table as it is, and keep them in the file (cache.anchor_keeping), so that a new
        process reads a deep window without walking to it first. The pull calls it at the end
        of its pass over the issues. Laid in a read transaction, saved in a short write one;
        True when it wrote."""
        from cache import anchor_keeping

        with self._db.read() as conn:
            kept = anchor_keeping.brought(conn)
        if kept is None:
            return False
        with self._db.write() as conn:
            return anchor_keeping.save(conn, kept)

    def searched_reached(self) -> None:
        """The backfill met its floor: every issue the search brought in is the cache's own."""
        with self._db.write() as conn:
            searched.clear(conn)

    def searched_count(self) -> int:
        """Issues the server's search brought in that no pull has reached yet."""
        with self._db.read() as conn:
            return searched.count(conn)

    def begin_bulk_load(self, resource: Resource) -> bool:
        """Start a cold load of an empty table: its indexes are built once at the end
        (`bulk_load.begin_bulk_load`); True when the table is in that state."""
        with self._db.write() as conn:
            return bulk_load.begin_bulk_load(conn, SPECS[resource])

    def finish_bulk_load(self, resource: Resource) -> bool:
        """Build the indexes of a cold load that began (in this run or one that was killed);
        False when there was none. Idempotent, and safe while another process loads."""
        with self._db.write() as conn:
            return bulk_load.finish_bulk_load(conn, SPECS[resource])

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

    def cursor(self, resource: Resource, *, scope: str = "") -> Cursor | None:
        """Where the next incremental pull of `resource` (of one issue's comments: `scope`)
        starts; `apply_page` moves it."""
        with self._db.read() as conn:
            return syncstate.get_cursor(conn, syncstate.cursor_key(resource, scope))

    def clear_cursor(self, resource: Resource, *, scope: str) -> None:
        """Forget the cursor of `scope` (a backfill that met its floor: sync.pull.backfill_state);
        the incremental pull's own cursor is never cleared but by a reset."""
        if not scope:
            raise ValueError("the incremental cursor is cleared only with the server copy")
        with self._db.write() as conn:
            syncstate.set_cursor(conn, syncstate.cursor_key(resource, scope), None)

    def last_full_sweep(self, resource: Resource) -> float | None:
        """When `delete_missing` last swept `resource`."""
        with self._db.read() as conn:
            return syncstate.last_full_sweep(conn, resource.value)
