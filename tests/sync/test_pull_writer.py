"""Keyset pages stored on the writer's thread: in order, with their cursor, never far behind."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from test_pull_support import (
    FAST_RETRY,
    App,
    local_issues,
    on_list_page,
    served,
    server_issues,
    session_on,
)

from cache import (
    ApplyResult,
    Cache,
    CacheError,
    IssueFilter,
    IssueSort,
    Prepared,
    Resource,
    ServerCopy,
    anchor_file,
    anchors,
)
from issuefields import SORT_KEYS
from sync.pull import PullReport, pull
from sync.pull.writer import BEHIND, GROUP_PAGES


def committed(cache: Cache) -> tuple[int, str | None, str | None]:
    """What another connection sees: issues stored, the newest of them, the issues cursor."""
    with sqlite3.connect(cache.path) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM issues), "
            "(SELECT max(coalesce(json_extract(extra, '$.updated_at'), updated_at)) FROM issues), "
            "(SELECT updated_at FROM cursors WHERE key = 'issues')"
        ).fetchone()
    return int(row[0]), row[1], row[2]


async def test_groups_of_pages_commit_in_order_with_their_cursor_while_paging_goes_on(
    tmp_path: Path, cache: Cache
) -> None:
    """Request k goes out once the groups of pages up to k-2-(BEHIND-1)*GROUP_PAGES have
    committed: the pull waits only while BEHIND groups are unwritten. Whatever another
    connection sees is whole pages with the cursor that follows them."""
    seen: list[tuple[int, int, str | None, str | None]] = []
    counting = False

    async def look(served_count: int) -> None:
        del served_count  # the probe's requests count too: number the pull's own
        if counting:
            seen.append((len(seen) + 1, *committed(cache)))

    def wrap(app: App) -> App:
        return on_list_page(app, "/issues", look)

    async with served(tmp_path, 2100, wrap=wrap) as service:
        async with session_on(service, cache):
            pass  # features probed before counting: the pull below sends only list requests
        counting = True
        async with session_on(service, cache) as session:
            report = await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)

    def after(pages: int) -> int:
        """Issues stored after `pages` pages: each page after the first starts with the last
        record of the one before (the overlap re-read)."""
        return 0 if pages <= 0 else 100 + 99 * (pages - 1)

    def grouped(pages: int) -> int:
        return max(0, pages) // GROUP_PAGES * GROUP_PAGES

    assert len(seen) == 23  # 22 pages and the count check
    for request, stored, newest, cursor in seen[:22]:
        lag = (BEHIND - 1) * GROUP_PAGES
        assert after(grouped(request - 2 - lag)) <= stored <= after(grouped(request - 1))
        assert cursor == newest  # pages and the cursor after them, in one transaction
    assert seen[-1][1] == 2100
    assert report.resources["issues"].pages == 22
    assert report.resources["issues"].received == 2100 + 21  # each later page re-reads one
    assert report.resources["issues"].inserted == 2100


async def refuse_one_then_resume(
    tmp_path: Path, cache: Cache, total: int, *, before_resuming: Callable[[], None]
) -> tuple[int, PullReport]:
    """Pull `total` issues into a cache that refuses the 1,201st (in the second group of
    pages): check what was committed, then resume with the refusal lifted. Returns how many
    issues the failed pull stored and the resuming pull's report."""
    async with served(tmp_path, total) as service:
        order = sorted((stamp, key) for key, stamp in (await server_issues(service)).items())
        doomed = order[1200][1]
        with sqlite3.connect(cache.path) as conn:
            conn.execute(
                "CREATE TRIGGER refuse BEFORE INSERT ON issues "
                f"WHEN NEW.id = '{doomed}' BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
            )
        async with session_on(service, cache) as session:
            with pytest.raises(CacheError, match="disk says no"):
                await pull(session, retry=FAST_RETRY)
        stored, newest, cursor = committed(cache)
        assert 100 <= stored < 1200  # the groups before the refused one, each with its cursor
        assert newest == cursor == order[stored - 1][0]
        with sqlite3.connect(cache.path) as conn:
            conn.execute("DROP TRIGGER refuse")
        before_resuming()
        async with session_on(service, cache) as session:
            report = await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    return stored, report


async def test_a_failed_write_stops_the_pull_and_the_next_resumes_after_the_last_commit(
    tmp_path: Path, cache: Cache
) -> None:
    stored, report = await refuse_one_then_resume(
        tmp_path, cache, 1500, before_resuming=lambda: None
    )
    issues = report.resources["issues"]
    assert issues.inserted == 1500 - stored and issues.requests <= 7
    assert cache.server.cursor(Resource.ISSUES) is not None


async def test_pages_are_prepared_on_the_loops_thread_and_only_applied_on_the_writers(
    tmp_path: Path, cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer thread runs SQLite (which releases the GIL), not the Python that turns
    records into rows: that runs where the page was parsed, while the next one is fetched."""
    threads: dict[str, set[str]] = {"prepare": set(), "apply": set()}
    prepare, apply = ServerCopy.prepare, ServerCopy.apply_prepared

    def noting_prepare(resource: Resource, page: Iterable[Mapping[str, Any]]) -> list[Prepared]:
        threads["prepare"].add(threading.current_thread().name)
        return prepare(resource, page)

    def noting_apply(self: ServerCopy, *args: Any, **kwargs: Any) -> ApplyResult:
        threads["apply"].add(threading.current_thread().name)
        return apply(self, *args, **kwargs)

    monkeypatch.setattr(ServerCopy, "prepare", staticmethod(noting_prepare))
    monkeypatch.setattr(ServerCopy, "apply_prepared", noting_apply)
    async with served(tmp_path, 250) as service:
        async with session_on(service, cache) as session:
            await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    assert threads["prepare"] == {threading.current_thread().name}
    assert threads["apply"] and all(name.startswith("pull-writer") for name in threads["apply"])


async def test_fetching_goes_on_while_a_slow_group_is_written(
    tmp_path: Path, cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group that takes long to commit (one that checkpoints the WAL) holds the pull back
    only once BEHIND groups wait: the pages of two more groups are fetched meanwhile."""
    apply = ServerCopy.apply_prepared
    served_pages = 0
    first_group_done = threading.Event()
    fetched_while_writing: list[int] = []

    def slow_first_group(self: ServerCopy, *args: Any, **kwargs: Any) -> ApplyResult:
        if not first_group_done.is_set():
            started = served_pages
            deadline = time.monotonic() + 5
            while served_pages <= started + 2 * GROUP_PAGES:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.005)
            fetched_while_writing.append(served_pages - started)
            first_group_done.set()
        return apply(self, *args, **kwargs)

    async def count(served_count: int) -> None:
        nonlocal served_pages
        served_pages = served_count

    monkeypatch.setattr(ServerCopy, "apply_prepared", slow_first_group)

    def wrap(app: App) -> App:
        return on_list_page(app, "/issues", count)

    async with served(tmp_path, 6000, wrap=wrap) as service:
        async with session_on(service, cache) as session:
            await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    assert fetched_while_writing and fetched_while_writing[0] > 2 * GROUP_PAGES


async def test_groups_queued_behind_a_failed_one_are_not_stored(
    tmp_path: Path, cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Groups commit in order or not at all: one that follows a failed group would save a
    cursor past the failed group's records, and the next pull would never fetch them."""
    apply = ServerCopy.apply_prepared

    def slow(self: ServerCopy, *args: Any, **kwargs: Any) -> ApplyResult:
        time.sleep(0.2)  # so that groups queue up behind the one that fails
        return apply(self, *args, **kwargs)

    monkeypatch.setattr(ServerCopy, "apply_prepared", slow)
    await refuse_one_then_resume(
        tmp_path,
        cache,
        4000,  # two more groups queue up behind the refused one
        before_resuming=lambda: monkeypatch.setattr(ServerCopy, "apply_prepared", apply),
    )


async def test_a_pull_keeps_the_list_anchors_in_the_file_for_the_next_process(
    tmp_path: Path, cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the end of its pass over the issues (a cold load's indexes built), the pull lays
    the unfiltered list's anchors of every order and its length in the file, at the table's
    revision: a new process reads a deep window from them without walking to it."""
    monkeypatch.setattr(anchors, "SPACING", 100)
    monkeypatch.setattr(anchors, "_SHELVES", {})
    async with served(tmp_path, 1200) as service, session_on(service, cache) as session:
        await pull(session, retry=FAST_RETRY)
    with cache.reads._db.read() as conn:
        kept = anchor_file.read_all(conn)
        revision = anchors.revision(conn)
    sorts = [IssueSort(key, descending) for key in SORT_KEYS for descending in (False, True)]
    assert {at for at, _ in kept.values()} == {revision}
    assert kept.pop(anchor_file.TOTAL)[1] == 1200
    assert {name: len(value) for name, (_, value) in kept.items()} == {  # type: ignore[arg-type]
        anchor_file.name(sort): 12 for sort in sorts
    }
    anchors._SHELVES.clear()  # a new process
    walk = anchors.walk

    def no_steps(book: anchors.Book, token: anchors.Token, start: int, step: object) -> object:
        return walk(book, token, start, lambda *_: pytest.fail("walked instead of a kept anchor"))

    monkeypatch.setattr(anchors, "walk", no_steps)
    window = cache.reads.window(IssueFilter(), IssueSort("title"), 550, 50)
    every = cache.reads.window(IssueFilter(), IssueSort("title"), 0, 1200)
    assert [row.id for row in window] == [row.id for row in every[550:600]]
