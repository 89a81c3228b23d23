"""Full-text search over titles, descriptions and comments, as the user types it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from cache_factories import Record, comment, issue, stamp

from cache import Cache, IssueFilter, IssueSort, Resource

AddIssues = Callable[..., list[Record]]


def found(cache: Cache, text: str) -> list[str]:
    flt = IssueFilter(text=text)
    rows = [row.id for row in cache.window(flt, IssueSort(), 0, 100)]
    assert cache.count(flt) == len(rows)
    return sorted(rows)


@pytest.fixture
def corpus(cache: Cache, add_issues: AddIssues) -> Cache:
    add_issues(
        issue(1, title="Login button broken", description="The socket closes early"),
        issue(2, title="Dark mode", description="Add a theme toggle to settings"),
        issue(3, title="Café crashes", description="Ünïcode handling in the parser"),
        issue(4, title="Socket timeout", description="connection drops"),
    )
    cache.apply_page(Resource.COMMENTS, [comment(1, "iss_000002", "reported by the QA team")])
    return cache


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("socket", [1, 4]),
        ("SOCKET timeout", [4]),
        ("sock", [1, 4]),
        ("soc", [1, 4]),
        ("so", []),
        ("sock ", []),
        ("theme", [2]),
        ("qa team", [2]),
        ("cafe", [3]),
        ("unicode parser", [3]),
        ("dark toggle", [2]),
        ("dark qa", []),
        ("login butt", [1]),
        ("log butt", []),
        ("", [1, 2, 3, 4]),
        ("?!", [1, 2, 3, 4]),
    ],
)
def test_words_match_whole_and_the_last_one_as_a_prefix(
    corpus: Cache, text: str, ids: list[int]
) -> None:
    assert found(corpus, text) == [f"iss_{n:06d}" for n in ids]


def test_search_follows_updates_and_deletes(corpus: Cache) -> None:
    corpus.apply_page(Resource.ISSUES, [issue(4, title="Retry budget", updated_at=stamp(90))])
    corpus.apply_page(
        Resource.ISSUES, [{"id": "iss_000001", "deleted": True, "updated_at": stamp(91)}]
    )
    assert found(corpus, "socket") == []
    assert found(corpus, "budget") == ["iss_000004"]
    corpus.apply_page(
        Resource.COMMENTS, [comment(1, "iss_000002", "nothing", updated_at=stamp(92))]
    )
    assert found(corpus, "qa") == []
    assert corpus.integrity_check() == ["ok"]


def test_local_edits_and_comments_are_searchable_at_once(corpus: Cache) -> None:
    corpus.update(Resource.ISSUES, "iss_000004", {"title": "Renamed entirely"})
    corpus.create(Resource.COMMENTS, {"issue_id": "iss_000001", "body": "zebra stripes"})
    local = corpus.create(Resource.ISSUES, {"title": "Offline zebra"})
    assert found(corpus, "timeout") == []
    assert found(corpus, "renamed") == ["iss_000004"]
    assert found(corpus, "zebra") == sorted(["iss_000001", local])
    corpus.delete(Resource.ISSUES, "iss_000002")
    assert found(corpus, "theme") == []


@pytest.mark.parametrize(
    "text",
    [
        '"',
        '""',
        "*",
        "NEAR",
        "NEAR(",
        "(",
        ")",
        "a AND",
        "OR b",
        "NOT",
        "-x",
        "^x",
        "x:y",
        "'",
        "\\",
        "a\u19b0b",
        "日本語",
        "\x00",
        "   ",
    ],
)
def test_any_typed_text_is_safe(corpus: Cache, text: str) -> None:
    for typed in (text, f"socket {text}", f"{text} sock"):
        found(corpus, typed)


def test_non_latin_text_is_found(cache: Cache, add_issues: AddIssues) -> None:
    add_issues(issue(1, title="日本語 テスト"), issue(2, title="Привет мир"))
    assert found(cache, "привет") == ["iss_000002"]
    assert found(cache, "日本語") == ["iss_000001"]
