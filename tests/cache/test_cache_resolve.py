"""`Cache.resolve_issue`: the one place `42`, `#42` and an id become an issue (issue 14, defect
12), and the priority order that "priority ▼" means (defect 11)."""

from __future__ import annotations

import pytest
from cache_factories import issue

from cache import (
    AmbiguousIssueError,
    Cache,
    IssueFilter,
    IssueSort,
    Resource,
)


def test_numbers_ids_and_local_ids_name_the_issue_shown(cache: Cache) -> None:
    cache.apply_page(Resource.ISSUES, [issue(n) for n in (1, 2, 3, 42)])
    cache.delete(Resource.ISSUES, "iss_000003")
    local = cache.create(Resource.ISSUES, {"title": "Offline, no number yet"})
    found = {
        ref: cache.resolve_issue(ref)
        for ref in ("42", "#42", " #42 ", "iss_000002", "#3", "3", local, "#99", "nope", "#x")
    }
    assert found == {
        "42": "iss_000042",
        "#42": "iss_000042",
        " #42 ": "iss_000042",
        "iss_000002": "iss_000002",
        "#3": None,
        "3": None,
        local: local,
        "#99": None,
        "nope": None,
        "#x": None,
    }


def test_a_local_id_is_followed_once_its_create_landed(cache: Cache) -> None:
    local = cache.create(Resource.ISSUES, {"title": "Made offline"})
    [entry] = cache.outbox()
    cache.mark_sending(entry.id)
    cache.mark_done(entry.id, issue(7, title="Made offline"))
    assert cache.resolve_issue(local) == "iss_000007"
    assert cache.resolve_issue("#7") == "iss_000007"


def test_digits_that_are_a_number_and_another_issues_id_are_refused(cache: Cache) -> None:
    """A SPEC-only server may use numeric ids: `5` must not silently pick one of two."""
    cache.apply_page(Resource.ISSUES, [issue(5, id="12"), issue(12, id="900")])
    assert cache.resolve_issue("#12") == "900"
    assert cache.resolve_issue("5") == "12"
    with pytest.raises(AmbiguousIssueError) as refused:
        cache.resolve_issue("12")
    assert refused.value.ids == ["900", "12"]


@pytest.mark.parametrize("descending", [True, False])
def test_descending_priority_is_urgent_first(cache: Cache, descending: bool) -> None:
    priorities = ["none", "urgent", "p0", "low", "high", "medium"]
    cache.apply_page(Resource.ISSUES, [issue(n + 1, priority=p) for n, p in enumerate(priorities)])
    cache.update(Resource.ISSUES, "iss_000005", {"priority": "urgent"})
    rows = cache.window(IssueFilter(), IssueSort("priority", descending), 0, 10)
    shown = [row.priority for row in rows]
    urgent_first = ["urgent", "urgent", "medium", "low", "none", "p0"]
    assert shown == (urgent_first if descending else urgent_first[::-1])
