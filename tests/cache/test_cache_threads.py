"""Several threads share one Cache: each gets its own connection, nothing trips over another."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing
from pathlib import Path

from cache_factories import issue

from cache import Cache, CacheClosedError, IssueFilter, IssueSort, LogCheck, Resource
from cache.db import Connector


def test_threads_read_and_write_at_once(cache: Cache) -> None:
    cache.server.apply_page(Resource.ISSUES, [issue(n) for n in range(1, 51)])
    errors: list[BaseException] = []
    reserved: list[bool] = []

    def writer(offset: int) -> None:
        for n in range(1 + offset, 51, 4):
            cache.outbox.update(Resource.ISSUES, f"iss_{n:06d}", {"title": f"t{n}"})
            reserved.append(
                cache.requests.reserve_request(float(n), "x", [LogCheck(0.0, 30, None)])
            )

    def reader() -> None:
        for _ in range(30):
            rows = cache.reads.window(IssueFilter(), IssueSort(), 0, 100)
            assert len(rows) == 50
            assert cache.reads.count(IssueFilter(text="t1")) >= 0

    def guarded(target: object, *args: int) -> threading.Thread:
        def run() -> None:
            try:
                target(*args)  # type: ignore[operator]
            except BaseException as error:
                errors.append(error)

        return threading.Thread(target=run)

    threads = [guarded(writer, k) for k in range(4)] + [guarded(reader) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sum(reserved) == 30
    titles = {row.title for row in cache.reads.window(IssueFilter(), IssueSort(), 0, 100)}
    assert titles == {f"t{n}" for n in range(1, 51)}
    assert len(cache.outbox.entries()) == 50


def test_close_ends_every_threads_connection(cache: Cache) -> None:
    ready, closed, done = threading.Event(), threading.Event(), threading.Event()
    outcome: list[BaseException | None] = []

    def worker() -> None:
        cache.reads.count(IssueFilter())
        ready.set()
        closed.wait(5)
        try:
            cache.reads.count(IssueFilter())
            outcome.append(None)
        except CacheClosedError as error:
            outcome.append(error)
        done.set()

    thread = threading.Thread(target=worker)
    thread.start()
    ready.wait(5)
    cache.close()
    closed.set()
    thread.join(5)
    assert done.is_set() and isinstance(outcome[0], CacheClosedError)


def test_close_leaves_a_running_threads_transaction_to_end(tmp_path: Path) -> None:
    """The app quitting while the engine writes a page: its connection is not closed under
    it (that crashed the process); the page commits, and its next call hears it is closed."""
    connector = Connector(tmp_path / "cache.db")
    with connector.write() as conn:
        conn.execute("CREATE TABLE pages (n INTEGER)")
    inside, closed = threading.Event(), threading.Event()
    outcome: list[BaseException | None] = []

    def engine() -> None:
        try:
            with connector.write() as conn:
                conn.execute("INSERT INTO pages VALUES (1)")
                inside.set()
                closed.wait(5)
                conn.execute("INSERT INTO pages VALUES (2)")
            connector.conn()
            outcome.append(None)
        except BaseException as error:
            outcome.append(error)

    thread = threading.Thread(target=engine)
    thread.start()
    assert inside.wait(5)
    connector.close()
    closed.set()
    thread.join(5)
    assert len(outcome) == 1 and isinstance(outcome[0], CacheClosedError)
    with closing(sqlite3.connect(tmp_path / "cache.db")) as check:
        assert [n for (n,) in check.execute("SELECT n FROM pages ORDER BY n")] == [1, 2]
