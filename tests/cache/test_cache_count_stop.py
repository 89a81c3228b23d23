"""A count its caller stops wanting is abandoned inside SQLite, and leaves nothing wrong behind
for the reads after it on the same thread."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from cache_factories import Record, issue

from cache import Cache, IssueFilter, IssueSort
from cache.errors import CountStopped

AddIssues = Callable[..., list[Record]]
MANY = 6000


def test_a_stopped_count_raises_and_the_next_reads_are_right(
    cache: Cache, add_issues: AddIssues
) -> None:
    """Enough issues for the count to take more than `STOP_CHECK_STEPS` steps of SQLite."""
    add_issues(
        *(
            issue(n, title=f"Socket error {n}", description="the socket closes early")
            for n in range(1, MANY + 1)
        ),
        *(issue(n, title=f"Dark mode {n}") for n in range(MANY + 1, MANY + 101)),
    )
    search = IssueFilter(text="sock")
    asked: list[bool] = []

    def stop() -> bool:
        asked.append(True)
        return True

    with pytest.raises(CountStopped):
        cache.reads.count(search, stop=stop)
    assert asked
    assert cache.reads.count(search) == MANY
    rows = cache.reads.window(search, IssueSort(), 0, 50)
    assert [row.id for row in rows] == [f"iss_{n:06d}" for n in range(MANY, MANY - 50, -1)]
    assert cache.reads.count(IssueFilter(text="dark")) == 100


def test_a_count_still_wanted_is_exact(cache: Cache, add_issues: AddIssues) -> None:
    add_issues(*(issue(n, title=f"Socket error {n}") for n in range(1, 201)))
    assert cache.reads.count(IssueFilter(text="sock"), stop=lambda: False) == 200
