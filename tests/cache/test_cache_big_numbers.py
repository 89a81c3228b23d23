"""Integers beyond SQLite's 64 bits in a server record (docs/sync.md#records-the-cache-cannot-hold):
stored with their page, read back exact, sorted among the numbers, found by what a user types.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cache_factories import issue

from cache import Cache, IssueFilter, IssueSort, Resource, bulk_load

ISSUE = Resource.ISSUES
HUGE = {3: 2**70, 5: -(2**70), 7: 2**63, 8: 2**70 + 1, 9: -(2**63) - 1}
"""Issue n -> the number it is sent with (2**63 - 1 and -(2**63) are the last SQLite holds)."""


def numbered(n: int) -> dict[str, object]:
    return issue(n, number=HUGE.get(n, n))


@pytest.mark.parametrize("size", [10, 120], ids=["page", "big page"])
def test_a_page_with_numbers_beyond_sqlite_is_stored_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    """The page raised OverflowError and stored nothing (the pull failed on it at every
    pull). Now every record is stored, each read back with its exact number, and the list
    sorts them where their numbers put them. A big page (its indexes built after its
    inserts, cache.bulk_load) too."""
    monkeypatch.setattr(bulk_load, "BIG_PAGE_ROWS", 100)
    with Cache.open(tmp_path / "cache.db") as cache:
        result = cache.server.apply_page(ISSUE, [numbered(n) for n in range(1, size + 1)])
        assert result.inserted == size
        assert cache.reads.count(IssueFilter()) == size
        for n, sent in HUGE.items():
            record = cache.server.server_record(ISSUE, f"iss_{n:06d}")
            assert record is not None and record["number"] == sent
            assert type(record["number"]) is int
        rows = cache.reads.window(IssueFilter(), IssueSort("number", False), 0, size)
        numbers = [cache.server.server_record(ISSUE, row.id)["number"] for row in rows]
        assert numbers[:2] == [-(2**70), -(2**63) - 1]
        assert sorted(numbers[-3:]) == [2**63, 2**70, 2**70 + 1]
        assert numbers[2:-3] == sorted(numbers[2:-3])
        assert {row.id: row.number for row in rows}["iss_000003"] is None  # shown by its id
        assert cache.integrity_check() == ["ok"]


def test_the_same_page_again_changes_nothing(cache: Cache) -> None:
    """A record whose number the column holds as a float is the same record when it comes
    again (the overlap of the next query re-reads it): unchanged, not rewritten."""
    page = [numbered(n) for n in range(1, 10)]
    cache.server.apply_page(ISSUE, page)
    again = cache.server.apply_page(ISSUE, page)
    assert (again.inserted, again.updated, again.unchanged) == (0, 0, 9)


def test_a_number_beyond_sqlite_is_found_by_what_a_user_types(cache: Cache) -> None:
    """`#<number>` and the search box's number bound the typed integer: OverflowError for any
    number past 64 bits, held or not. Now the issue with that exact number is found, and its
    neighbour that shares the float its column holds (2**70 and 2**70 + 1) is not taken
    for it."""
    cache.server.apply_page(ISSUE, [numbered(n) for n in range(1, 10)])
    assert cache.reads.resolve_issue(f"#{2**70}") == "iss_000003"
    assert cache.reads.resolve_issue(f"{2**70 + 1}") == "iss_000008"
    assert cache.reads.resolve_issue(f"#{2**63}") == "iss_000007"
    assert cache.reads.resolve_issue(f"#{2**70 + 2}") is None
    assert cache.reads.resolve_issue("#" + "9" * 40) is None
    found = cache.reads.window(IssueFilter(text=f"#{2**63}"), IssueSort("number", False), 0, 5)
    assert [row.id for row in found] == ["iss_000007"]
    assert cache.reads.count(IssueFilter(text="#" + "9" * 40)) == 0
