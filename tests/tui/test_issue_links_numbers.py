"""Copying an issue's number or address when its number is beyond the cache's 64-bit integers
(docs/sync.md#records-the-cache-cannot-hold): the row holds it as a float, whose digits are
not the server's, so neither is made from it; the detail shows the exact number."""

from __future__ import annotations

from pathlib import Path

import pytest

from cache import Cache, Resource, SyncState
from cache.models import IssueRow
from tracker_tui.issue_links import IssueLinks, LinkError, copied_text

HUGE = 2**70 + 1


def row(number: object) -> IssueRow:
    return IssueRow("iss_1", {"number": number}, (), SyncState.SYNCED)  # type: ignore[dict-item]


def test_a_number_beyond_the_cache_is_neither_copied_nor_linked() -> None:
    """Copied, it read `#1.1805916207174113e+21`, and the address held those digits too."""
    links = IssueLinks("https://tracker.example/issue/{number}", "no template")
    big = row(float(HUGE))
    with pytest.raises(LinkError, match="too large"):
        copied_text(big, "number", links)
    with pytest.raises(LinkError, match="too large"):
        links.url(big)
    assert (
        IssueLinks("https://tracker.example/{id}", "-").url(big) == "https://tracker.example/iss_1"
    )
    assert copied_text(big, "id", links)[0] == "iss_1"
    assert copied_text(row(42), "number", links)[0] == "#42"


def test_the_detail_has_the_exact_number(tmp_path: Path) -> None:
    record = {"id": "iss_1", "number": HUGE, "title": "huge", "updated_at": "2026-01-01T00:00:00Z"}
    with Cache.open(tmp_path / "cache.db") as cache:
        cache.server.apply_page(Resource.ISSUES, [record])
        detail = cache.reads.issue("iss_1")
    assert detail is not None and detail.number == HUGE and detail.issue.number is None
