"""Searches with qualifiers, phrases, exclusions, numbers and labels, on server rows and on
issues changed locally, by the same rules: windows and counts agree with each other in
every order."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from cache_factories import Record, comment, issue

from cache import Cache, IssueFilter, IssueSort, Resource
from issuefields import SORT_KEYS

AddIssues = Callable[..., list[Record]]


def found(cache: Cache, text: str, **changes: object) -> list[int]:
    """The numbers of the issues a search shows, checking count and every order agree."""
    flt = IssueFilter(text=text, me="usr_ada", **changes)  # type: ignore[arg-type]
    rows = cache.reads.window(flt, IssueSort(), 0, 100)
    assert cache.reads.count(flt) == len(rows)
    numbers = sorted(int(row.cells["number"] or 0) for row in rows)
    for key in SORT_KEYS:
        for descending in (False, True):
            other = cache.reads.window(flt, IssueSort(key, descending), 0, 100)
            assert sorted(int(row.cells["number"] or 0) for row in other) == numbers
    return numbers


@pytest.fixture
def corpus(cache: Cache, add_issues: AddIssues) -> Cache:
    cache.server.apply_page(
        Resource.USERS,
        [
            {"id": "usr_ada", "name": "Ada Lovelace", "email": None},
            {"id": "usr_grace", "name": "Grace Hopper", "email": None},
        ],
    )
    cache.server.apply_page(
        Resource.PROJECTS,
        [{"id": "prj_web", "key": "WEB", "name": "Website", "description": "", "state": None}],
    )
    add_issues(
        issue(1, title="Login button broken", labels=["bug"], status="todo", priority="high"),
        issue(2, title="Dark mode toggle", description="mode dark everywhere", labels=["ux"]),
        issue(3, title="Crash on login", labels=["ui-bug"], assignee="usr_ada", status="done"),
        issue(4, title="Socket timeout", assignee="usr_grace", project_id="prj_web"),
        issue(5, title="Login in dark mode", priority="urgent", project_id="prj_web"),
        issue(123, title="Release notes", description="see 42"),
        issue(42, title="Answer everything"),
    )
    cache.server.apply_page(
        Resource.COMMENTS, [comment(1, "iss_000004", "only on Safari, in dark mode")]
    )
    return cache


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("status:todo", [1, 2, 4, 5, 42, 123]),
        ("status:done", [3]),
        ("priority:urgent,high", [1, 5]),
        ("assignee:me", [3]),
        ("assignee:grace", [4]),
        ("assignee:none", [1, 2, 5, 42, 123]),
        ("project:web", [4, 5]),
        ("project:nope", []),
        ("label:bug", [1]),
        ("label:BUG login", [1]),
        ("login", [1, 3, 5]),
        ("login -dark", [1, 3]),
        ("-login", [2, 4, 42, 123]),
        ('"dark mode"', [2, 4, 5]),
        ('"mode dark"', [2]),
        ('"dark mode" -safari', [2, 5]),
        ("bug", [1, 3]),
        ("crash bug", [3]),
        ("#123", [123]),
        ("123", [123]),
        ("42", [42, 123]),
        ("status:tood login", [1, 3, 5]),
    ],
)
def test_search_syntax_on_server_rows(corpus: Cache, text: str, numbers: list[int]) -> None:
    assert found(corpus, text) == numbers


def test_a_qualifier_and_the_filter_picker_both_hold(corpus: Cache) -> None:
    assert found(corpus, "priority:high", priority=frozenset({"high", "urgent"})) == [1]
    assert found(corpus, "priority:low", priority=frozenset({"high"})) == []


def test_local_edits_are_searched_by_the_same_rules(corpus: Cache) -> None:
    corpus.outbox.update(Resource.ISSUES, "iss_000042", {"title": "Dark mode at night"})
    corpus.outbox.update(Resource.ISSUES, "iss_000001", {"labels": []})
    corpus.outbox.update(Resource.ISSUES, "iss_000004", {"labels": ["bug"], "status": "done"})
    corpus.outbox.create(Resource.COMMENTS, {"issue_id": "iss_000002", "body": "safari too"})
    assert found(corpus, '"dark mode"') == [2, 4, 5, 42]
    assert found(corpus, '"dark mode" -safari') == [5, 42]
    assert found(corpus, "bug") == [3, 4]
    assert found(corpus, "status:done bug") == [3, 4]
    assert found(corpus, "#42") == [42]
    assert found(corpus, "-dark") == [1, 3, 123]
