"""Storing keyset pages on a thread of its own, in groups, while the loop fetches the next page.

A keyset query depends on the page before it, so only one request can be ahead; what can run
beside it is storing what was read. SQLite releases the GIL while it works, so the writer's
inserts, FTS terms and commit overlap the next request's round trip and parsing.

Pages are stored `GROUP_PAGES` at a time, in one transaction with the cursor of the group's
last page: a commit rewrites every index and FTS page the transaction touched, and per page
of 100 those commits cost more than the inserts (SYNC.md 5 still holds: a cursor is saved
with the records it follows). Pages read but not yet stored when a request fails are stored
before the error propagates, so an interrupted pull resumes after the last page it read.

Into an empty table, the pass is a cold load (`Cache.begin_bulk_load`): the indexes that a
load in sync order would scatter its rows over are stand-ins until the pass ends, when they
are built once, on this thread, before the checkpoint; that happens on errors too, and a
pass killed before it leaves a record from which the next pull builds them.

Requests go on while a group is written; a full group waits only for the one before it, so
what is committed never trails what was read by more than two groups. (The rate limiter's
log is a file of its own, cache.requestlog, so logging a request never waits for the group.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from types import TracebackType

from cache import ApplyResult, Cursor
from sync.models import Record, Tombstone
from sync.pull.context import ResourceRun

GROUP_PAGES = 10
"""Pages per transaction: at 100 records a page, a tenth of the commits for about a third
less CPU in the writer (measured on 60,000 stored issues)."""


@dataclass(frozen=True)
class _Page:
    items: Sequence[Record | Tombstone]
    cursor: Cursor | None
    total: int | None


class PageWriter:
    """One resource's page writer: `submit` every page as it is read."""

    def __init__(self, run: ResourceRun) -> None:
        self._run = run
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pull-writer")
        self._writing: asyncio.Future[ApplyResult] | None = None
        self._waiting: list[_Page] = []
        self._written: list[_Page] = []
        self._bulk_load = False

    async def __aenter__(self) -> PageWriter:
        cache = self._run.session.cache
        loop = asyncio.get_running_loop()
        cache.bulk_writes(True)
        try:
            await loop.run_in_executor(self._pool, cache.bulk_writes, True)
            self._bulk_load = await loop.run_in_executor(
                self._pool, cache.begin_bulk_load, self._run.resource
            )
        except BaseException:
            self._pool.shutdown(wait=True)
            cache.bulk_writes(False)
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
        already being written and the index build. Should the build itself fail, the next
        pull of this resource does it (`Cache.finish_bulk_load`)."""
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
            if self._bulk_load:
                self._pool.submit(cache.finish_bulk_load, self._run.resource)
            self._pool.submit(cache.checkpoint)
            self._pool.shutdown(wait=True)
            cache.bulk_writes(False)
            if self._writing is not None and self._writing.done() and not self._writing.cancelled():
                self._writing.exception()  # retrieved, so asyncio does not log it again

    async def _finish_bulk_load(self) -> None:
        if self._bulk_load:
            cache, resource = self._run.session.cache, self._run.resource
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(self._pool, cache.finish_bulk_load, resource)
            self._bulk_load = False

    async def submit(
        self,
        items: Sequence[Record | Tombstone],
        cursor: Cursor | None,
        total: int | None,
        *,
        last: bool,
    ) -> None:
        """Queue a page and the cursor after it; a full group (or the last page) starts being
        written once the group before it has committed."""
        self._waiting.append(_Page(items, cursor, total))
        if last or len(self._waiting) >= GROUP_PAGES:
            await self.drain()
            self._write()

    async def drain(self) -> None:
        """Wait for the group in flight to commit, then count it and report its progress."""
        if self._writing is None:
            return
        result = await self._writing
        self._writing = None
        pages, self._written = self._written, []
        self._run.count(result)
        for page in pages:  # progress is told page by page, as every strategy does
            self._run.count_page(len(page.items))
            self._run.tell(page.total)

    async def _store_rest(self) -> None:
        await self.drain()
        self._write()
        await self.drain()

    def _write(self) -> None:
        if not self._waiting:
            return
        run = self._run
        pages, self._waiting = self._waiting, []
        self._written = pages
        cursor = next((page.cursor for page in reversed(pages) if page.cursor is not None), None)
        self._writing = asyncio.get_running_loop().run_in_executor(
            self._pool,
            lambda: run.session.cache.apply_page(
                run.resource, [item.raw for page in pages for item in page.items], cursor
            ),
        )
