"""Storing keyset pages on a thread of its own, in groups, while the loop fetches the next page.

A keyset query depends on the page before it, so only one request can be ahead; what can run
beside it is storing what was read. SQLite releases the GIL while it works, so the writer's
inserts, FTS terms and commit overlap the next request's round trip and parsing.

Pages are stored `GROUP_PAGES` at a time, in one transaction with the cursor of the group's
last page: a commit rewrites every index and FTS page the transaction touched, and per page
of 100 those commits cost more than the inserts (docs/sync.md#cursors still holds: a cursor is
saved with the records it follows). Pages read but not yet stored when a request fails are stored
before the error propagates, so an interrupted pull resumes after the last page it read.

Into an empty table, the pass is a cold load (`Cache.server.begin_bulk_load`): the indexes that a
load in sync order would scatter its rows over are stand-ins until the pass ends, when they
are built once, on this thread, before the checkpoint; that happens on errors too, and a
pass killed before it leaves a record from which the next pull builds them.

A pass over the issues that ends well then keeps the unfiltered list's anchors in the file
(`Cache.server.keep_anchors`: at a million issues 0.34-0.57 s of CPU when laid afresh, 13-56 ms
when moved by one changed issue), so that the next process reads a deep window without walking
to it.

Requests go on while groups are written: a full group is queued for the writer at once, and
the pull waits only when `BEHIND` groups are still unwritten, so what is committed never
trails what was read by more than that. A group usually takes a third of the time its pages
take to fetch, but one commit in about seven also checkpoints the WAL (64 MB of it, fsynced),
which takes longer than the next group's pages: with one group of slack the pull stalled on
each. (The rate limiter's log is a file of its own, cache.requestlog, so logging a request
never waits for the writer.)
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from types import TracebackType

from cache import ApplyResult, CacheError, Cursor, Prepared, Resource, ServerCopy
from sync.models import Record, Tombstone
from sync.pull.context import ResourceRun

GROUP_PAGES = 10
"""Pages per transaction: at 100 records a page, a tenth of the commits for about a third
less CPU in the writer (measured on 60,000 stored issues)."""
BEHIND = 4
"""Groups read but not yet committed before the pull waits for the oldest: enough to ride out
a checkpoint (measured on a cold sync of 100,000 issues: groups of 1,000 took 50-140 ms, the
ones that checkpointed 290-350 ms, against 120-180 ms to fetch a group's pages)."""


@dataclass(frozen=True)
class _Page:
    records: Sequence[Prepared]
    cursor: Cursor | None
    fresh: int
    """Records of the page new to the pass (not re-read by a query's overlap), for progress."""
    expected: int | None
    """The pass's estimated total of new records as of this page, for progress."""


class PageWriter:
    """One resource's page writer: `submit` every page as it is read."""

    def __init__(self, run: ResourceRun) -> None:
        self._run = run
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pull-writer")
        self._writing: deque[tuple[asyncio.Future[ApplyResult], list[_Page]]] = deque()
        self._waiting: list[_Page] = []
        self._failed = False
        """Set on the writer's thread when a group fails; later groups are then not stored."""
        self._bulk_load = False

    async def __aenter__(self) -> PageWriter:
        cache = self._run.session.cache
        loop = asyncio.get_running_loop()
        cache.server.bulk_writes(True)
        try:
            await loop.run_in_executor(self._pool, cache.server.bulk_writes, True)
            self._bulk_load = await loop.run_in_executor(
                self._pool, cache.server.begin_bulk_load, self._run.resource
            )
        except BaseException:
            self._pool.shutdown(wait=True)
            cache.server.bulk_writes(False)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Store what was read (it is sound: each group carries its own cursor), build the
        indexes of a cold load, then checkpoint. Cancelled, the loop only waits for the group
        already being written (the queued ones are dropped, in order) and the index build.
        Should the build itself fail, the next pull of this resource does it
        (`Cache.server.finish_bulk_load`)."""
        cache = self._run.session.cache
        try:
            if exc_type is None:
                await self._store_rest()
                await self._finish_bulk_load()
            elif issubclass(exc_type, Exception):
                with suppress(Exception):  # the error already propagating says more
                    await self._store_rest()
                with suppress(Exception):
                    await self._finish_bulk_load()
        finally:
            if exc_type is not None and not issubclass(exc_type, Exception):
                for writing, _ in self._writing:
                    writing.cancel()  # those not started yet: the one being written goes on
            if self._bulk_load:
                self._pool.submit(cache.server.finish_bulk_load, self._run.resource)
            if exc_type is None and self._run.resource is Resource.ISSUES:
                self._pool.submit(cache.server.keep_anchors)
            self._pool.submit(cache.server.checkpoint)
            self._pool.submit(cache.server.bulk_writes, False)
            self._pool.shutdown(wait=True)
            cache.server.bulk_writes(False)
            for writing, _ in self._writing:
                if writing.done() and not writing.cancelled():
                    writing.exception()  # retrieved, so asyncio does not log it again

    async def _finish_bulk_load(self) -> None:
        if self._bulk_load:
            cache, resource = self._run.session.cache, self._run.resource
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(self._pool, cache.server.finish_bulk_load, resource)
            self._bulk_load = False

    async def submit(
        self,
        items: Sequence[Record | Tombstone],
        cursor: Cursor | None,
        fresh: int,
        expected: int | None,
        *,
        last: bool,
    ) -> None:
        """Prepare a page (on this thread: see `cache.Prepared`) and queue it with the cursor
        after it; a full group (or the last page) goes to the writer, and this waits for the
        oldest group while `BEHIND` of them are unwritten."""
        records = ServerCopy.prepare(self._run.resource, [item.raw for item in items])
        self._waiting.append(_Page(records, cursor, fresh, expected))
        if last or len(self._waiting) >= GROUP_PAGES:
            self._write()
            while len(self._writing) >= BEHIND:
                await self._settle()

    async def drain(self) -> None:
        """Wait for every queued group to commit."""
        while self._writing:
            await self._settle()

    async def _settle(self) -> None:
        """Wait for the oldest group to commit (raising if it failed)."""
        writing, _ = self._writing[0]
        try:
            await asyncio.shield(writing)
        finally:
            if writing.done():
                self._writing.popleft()

    def _written(self, pages: list[_Page], writing: asyncio.Future[ApplyResult]) -> None:
        """A group committed: count it and report its progress at once, page by page as every
        strategy does, rather than when the pull next waits for the writer (which left the
        progress up to four groups behind, and still through a long wait for the rate
        limit). Groups commit in order, one thread writing, so their reports are in order."""
        if writing.cancelled() or writing.exception() is not None:
            return
        self._run.count(writing.result())
        for page in pages:
            self._run.count_page(len(page.records), page.fresh)
            self._run.tell(expected=page.expected)

    async def _store_rest(self) -> None:
        self._write()
        await self.drain()

    def _write(self) -> None:
        if not self._waiting:
            return
        pages, self._waiting = self._waiting, []
        writing = asyncio.get_running_loop().run_in_executor(self._pool, self._apply, pages)
        writing.add_done_callback(partial(self._written, pages))
        self._writing.append((writing, pages))

    def _apply(self, pages: list[_Page]) -> ApplyResult:
        """On the writer's thread, in order: store a group unless one before it failed (its
        cursor would then skip the failed group's records)."""
        if self._failed:
            raise CacheError("not stored: an earlier group of pages failed")
        cursor = next((page.cursor for page in reversed(pages) if page.cursor is not None), None)
        records = [record for page in pages for record in page.records]
        try:
            return self._run.session.cache.server.apply_prepared(
                self._run.resource, records, cursor, news=self._run.news
            )
        except BaseException:
            self._failed = True
            raise
