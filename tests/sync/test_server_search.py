"""Search during the backfill (docs/sync.md#head-first): the server's `GET /search` is asked
once the typing pauses, only while the cache is incomplete, and its hits are stored so the
list's own search finds issues the backfill has not reached."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import httpx
from test_pull_head import ISSUES
from test_pull_support import FAST_RETRY, served, session_on

from cache import Cache, IssueFilter, IssueSort
from sync.backfill_progress import pending
from sync.pull import backfill_state, pull
from sync.pull.engine import backfill_step
from sync.server_search import ServerHits, ServerSearch, free_words, search_server

WORD = "zanzibarquux"


class Searches(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.queries: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/search"):
            self.queries.append(request.url.params["q"])
        return await self.inner.handle_async_request(request)


async def test_a_search_during_the_backfill_finds_old_issues_on_the_server(
    tmp_path: Path, cache: Cache
) -> None:
    async with served(tmp_path, ISSUES) as service:
        async with session_on(service, cache) as session:
            await pull(session, head_first=True, finish_backfill=False)
        assert pending(cache)
        old = [
            str(row[0])
            for row in service.sql("SELECT id FROM issues ORDER BY updated_at LIMIT 400")
            if cache.reads.issue(str(row[0])) is None
        ][:2]
        for key in old:  # a word only these old issues hold; their updated_at unchanged
            service.sql("UPDATE issues SET title = title || ' ' || ? WHERE id = ?", (WORD, key))
        wire = Searches(service.transport())
        heard: list[ServerHits] = []
        async with session_on(service, cache, transport=wire) as session:
            search = ServerSearch(session, heard.append, debounce=0.05)
            for typed in ("za", "zanz", "zanzibar", WORD):  # typed in a burst
                search.typed(typed)
            search.typed(f"status:todo {WORD}")  # the same words: no second request
            while not heard:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.1)
            search.cancel()
            assert wire.queries == [WORD]
            assert set(heard[0].ids) == set(old) and heard[0].new == 2
            await pull(session, retry=FAST_RETRY)  # the backfill to its end
            assert not pending(cache)
            search.typed("another word")
            await asyncio.sleep(0.1)
        assert wire.queries == [WORD]  # nothing asked once the cache holds every issue
    assert all(cache.reads.issue(key) is not None for key in old)


def one_request() -> Callable[[], bool]:
    """A backfill step's `should_yield` that lets one request through."""
    calls = iter([False])
    return lambda: next(calls, True)


def marked(cache: Cache) -> set[str]:
    """Ids the list shows as the server search's (read as the list reads its rows)."""
    rows = cache.reads.window(IssueFilter(), IssueSort(), 0, 10_000)
    return {row.id for row in rows if row.searched}


async def test_hits_stay_marked_until_the_backfill_reaches_them(
    tmp_path: Path, cache: Cache
) -> None:
    """The list marks an issue from the server's search until a pull stores it: each step of
    the backfill unmarks the hits its page reached and leaves the ones above its cursor."""
    async with served(tmp_path, ISSUES) as service, session_on(service, cache) as session:
        await pull(session, head_first=True, finish_backfill=False)
        held = cache.reads.window(IssueFilter(), IssueSort(), 0, 10)
        rows = service.sql("SELECT id, updated_at FROM issues ORDER BY updated_at, id")
        missing = [str(key) for key, _ in rows if cache.reads.issue(str(key)) is None]
        hits = [missing[150], missing[450]]  # two backfill pages apart
        known = next(row.id for row in held)
        for key in [*hits, known]:
            service.sql("UPDATE issues SET title = title || ' ' || ? WHERE id = ?", (WORD, key))
        assert marked(cache) == set()
        found = await search_server(session, WORD)
        assert set(found.ids) == {*hits, known} and found.new == 2
        assert marked(cache) == set(hits)  # the one the head held is the cache's own
        assert cache.server.searched_count() == 2
        steps = 0
        while set(hits) & marked(cache) == set(hits):
            await backfill_step(session, should_yield=one_request(), retry=FAST_RETRY)
            steps += 1
        assert marked(cache) == {hits[1]}  # reached the first, not yet the second
        cursor = backfill_state.backfill_cursor(cache)
        assert cursor is not None and steps < 8
        await pull(session, retry=FAST_RETRY)  # the backfill to its end
    assert not pending(cache)
    assert marked(cache) == set() and cache.server.searched_count() == 0


def test_only_the_free_words_of_a_query_go_to_the_server() -> None:
    assert free_words("status:todo crash -label:ui login") == "crash login"
    assert free_words("status:todo") is None
    assert free_words("a") is None
