"""A list reads every query on one thread of its own, which ends with the list: the cache keeps
what a search has worked out per thread, and each thread of a pool built it again (issue 18)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from tui_support import AppFactory, FakeIssueSource, settle

from cache import IssueRow
from tracker_tui.data.source import IssueQuery

SIZE = (120, 36)


class ThreadsSeen(FakeIssueSource):
    """Records the threads that count and that read a query's first rows."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.threads: list[threading.Thread] = []

    def count(self, query: IssueQuery, stop: Callable[[], bool] | None = None) -> int:
        self.threads.append(threading.current_thread())
        return super().count(query, stop)

    def window(self, query: IssueQuery, offset: int, limit: int) -> list[IssueRow]:
        if offset == 0:
            self.threads.append(threading.current_thread())
        return super().window(query, offset, limit)


async def test_every_query_of_a_list_is_read_on_one_thread_that_ends_with_it(
    app_factory: AppFactory,
) -> None:
    source = ThreadsSeen(5_000)
    app = app_factory(source)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("/", *"crash", "escape")
        await settle(pilot)
        for key in ("m", "m", "F", "s", "s"):
            await pilot.press(key)
        await settle(pilot)
        readers = set(source.threads)
        assert len(source.threads) > 12
        assert len(readers) == 1
        (reader,) = readers
        assert reader.name.startswith("issue-list-reader")
        assert reader.is_alive()
    reader.join(timeout=10)
    assert not reader.is_alive()
