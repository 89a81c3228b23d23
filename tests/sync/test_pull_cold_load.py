"""A cold pull builds its deferred indexes once, at the end; one killed midway is resumed by
the next pull, which leaves every index and the search as a pull that never stopped would."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from pathlib import Path

import pytest
from test_pull_support import (
    FAST_RETRY,
    App,
    FailingTransport,
    local_issues,
    on_list_page,
    served,
    server_issues,
    session_on,
)

from cache import Cache, CacheError, Cursor, IssueFilter, IssueSort, Resource, query
from cache.bulk_load import BULK_LOAD_INDEXES
from sync.errors import NetworkError
from sync.pull import pull
from sync.pull.stamps import EPOCH
from sync.pull.writer import GROUP_PAGES


def index_sql(path: Path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL"
        ).fetchall()
    return {str(name): str(sql) for name, sql in rows}


def bulk_state(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT key FROM sync_state WHERE key LIKE 'bulk_load:%'").fetchall()
    return [str(row[0]) for row in rows]


def matching(cache: Cache, word: str) -> int:
    """Issues holding `word` in their title, description or a comment, read from the stored
    records without FTS: what a search for the word must count."""
    pattern = re.compile(rf"\b{word}\b", re.IGNORECASE)
    with sqlite3.connect(cache.path) as conn:
        texts = {
            str(key): f"{title} {description}"
            for key, title, description in conn.execute("SELECT id, title, description FROM issues")
        }
        for issue_id, body in conn.execute("SELECT issue_id, body FROM comments"):
            if issue_id in texts:
                texts[issue_id] += f" {body}"
    return sum(bool(pattern.search(text)) for text in texts.values())


def assert_whole(cache: Cache, real: dict[str, str]) -> None:
    """Every index as the schema defines it, no load left open, search exact."""
    assert index_sql(cache.path) == real
    assert bulk_state(cache.path) == []
    assert cache.integrity_check() == ["ok"]
    db = cache.reads._db
    with db.read():
        plans = query.plans(query.prepare(db.state(), IssueFilter()), IssueSort("title", False))
    assert not any("TEMP B-TREE" in line for line in plans), plans
    for word in ("crash", "export"):
        expected = matching(cache, word)
        assert expected > 0
        assert cache.reads.count(IssueFilter(text=f"{word} ")) == expected


async def test_a_cold_pull_defers_the_scattered_indexes_and_builds_them_at_its_end(
    tmp_path: Path, cache: Cache
) -> None:
    real = index_sql(cache.path)
    during: list[dict[str, str]] = []
    rows_seen: list[int] = []

    async def look(served_count: int) -> None:
        """Two groups are queued by now, and the load goes on; the writer's thread may still
        be behind (it may trail by `BEHIND` groups), so the server waits here for the first
        group's commit, as long as a slow machine needs, before reading through the stand-ins."""
        if served_count == 2 + 2 * GROUP_PAGES:
            during.append(index_sql(cache.path))
            with Cache.open(cache.path) as reader:
                for _ in range(3000):
                    rows = reader.reads.window(IssueFilter(), IssueSort("title"), 0, 50)
                    if rows:
                        break
                    await asyncio.sleep(0.01)
                rows_seen.append(len(rows))

    def wrap(app: App) -> App:
        return on_list_page(app, "/issues", look)

    async with served(tmp_path, 2300, wrap=wrap) as service:
        async with session_on(service, cache) as session:
            await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    swapped = {name for name in real if during[0].get(name) != real[name]}
    assert swapped == {name for name in BULK_LOAD_INDEXES if name.startswith("issues_")}
    assert rows_seen == [50]  # read through the stand-ins while the load went on
    assert_whole(cache, real)


async def test_a_cold_pull_cut_off_by_the_network_still_builds_its_indexes(
    tmp_path: Path, cache: Cache
) -> None:
    real = index_sql(cache.path)
    async with served(tmp_path, 1200) as service:
        failing = FailingTransport(service.transport(), "/issues", allowed=5)
        async with session_on(service, cache, transport=failing) as session:
            with pytest.raises(NetworkError):
                await pull(session, retry=FAST_RETRY)
        assert 0 < len(local_issues(cache)) < 1200
        assert index_sql(cache.path) == real
        assert bulk_state(cache.path) == []
        async with session_on(service, cache) as session:
            await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    assert_whole(cache, real)


async def test_a_cold_load_killed_midway_is_resumed_and_leaves_everything_whole(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cache.db"
    async with served(tmp_path, 1200) as service:
        async with service.api() as api:
            first = await api.get(
                "/issues",
                params={"per_page": 100, "updated_after": EPOCH, "include_deleted": "true"},
            )
        page = first.json()["data"]
        with Cache.open(path) as killed:  # what a kill leaves: a group stored, the load open
            real = index_sql(path)
            assert killed.server.begin_bulk_load(Resource.ISSUES)
            last = page[-1]
            cursor = Cursor(last["updated_at"], frozenset({last["id"]}))
            killed.server.apply_page(Resource.ISSUES, page, cursor)
        assert index_sql(path) != real
        with Cache.open(path) as cache:
            async with session_on(service, cache) as session:
                report = await pull(session, retry=FAST_RETRY)
            assert report.resources["issues"].inserted == 1200 - 100  # resumed, not redone
            assert local_issues(cache) == await server_issues(service)
            assert_whole(cache, real)


async def test_a_refused_index_build_is_done_by_the_next_pull(tmp_path: Path, cache: Cache) -> None:
    real = index_sql(cache.path)
    async with served(tmp_path, 300) as service:
        with sqlite3.connect(cache.path) as conn:  # the build fails: the load's record stays
            conn.execute(
                "CREATE TRIGGER refuse BEFORE DELETE ON sync_state "
                "WHEN OLD.key LIKE 'bulk_load:%' BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
            )
        async with session_on(service, cache) as session:
            with pytest.raises(CacheError, match="disk says no"):
                await pull(session, retry=FAST_RETRY)
        assert bulk_state(cache.path) == ["bulk_load:issues"]
        with sqlite3.connect(cache.path) as conn:
            conn.execute("DROP TRIGGER refuse")
        async with session_on(service, cache) as session:
            await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    assert_whole(cache, real)
