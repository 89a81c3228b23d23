"""The search syntax taken apart (cache.search_syntax): qualifiers, phrases, exclusions,
numbers, and a bad value named with the allowed ones."""

from __future__ import annotations

import pytest

from cache.search_syntax import Search, describe, parse


def test_qualifiers_phrases_exclusions_and_words_are_taken_apart() -> None:
    found = parse('login "dark mode" -safari status:todo,In-Progress priority:High label:bug')
    assert found.words == ("login",)
    assert found.phrases == ("dark mode",)
    assert found.excluded == ("safari",)
    assert found.values("status") == ("todo", "in_progress")
    assert found.values("priority") == ("high",)
    assert found.values("label") == ("bug",)
    assert found.problems == ()
    assert describe(found) == [
        "status: todo, in_progress",
        "priority: high",
        "label: bug",
        "“dark mode”",
        "-safari",
    ]


def test_assignee_project_and_repeated_qualifiers_keep_what_was_typed() -> None:
    found = parse("assignee:me assignee:grace project:WEB project:none status:done status:todo")
    assert found.values("assignee") == ("me", "grace")
    assert found.values("project") == ("WEB", "none")
    assert found.values("status") == ("done", "todo")
    assert found.words == ()


@pytest.mark.parametrize(
    ("typed", "named"),
    [
        ("status:tood", "status:tood is not a status; use one of backlog, todo, in_progress"),
        ("priority:hgh", "priority:hgh is not a priority; use one of urgent, high"),
        ("status:", "status: needs a value, e.g. status:todo"),
        ("-status:done", "-status: is not supported"),
        ("stauts:todo", "stauts: is not a qualifier; did you mean status:?"),
    ],
)
def test_a_bad_qualifier_is_named_with_what_is_allowed(typed: str, named: str) -> None:
    found = parse(typed)
    assert any(problem.startswith(named) for problem in found.problems), found.problems
    assert found.values("status") == () and found.values("priority") == ()


def test_a_number_alone_is_an_issue_number() -> None:
    assert parse("#123") == Search(number=123, exact_number=True)
    assert parse(" 123 ") == Search(words=("123",), number=123)
    assert parse("123 login").number is None


def test_the_last_word_typed_stays_a_prefix_and_an_open_quote_is_a_phrase() -> None:
    assert parse("status:todo logi").text == "logi"
    assert parse("logi ").text == "logi "
    assert parse('"dark mo').phrases == ("dark mo",)
    assert parse("-").excluded == ()
    assert parse("plain words only").is_plain
    assert not parse("-word").is_plain
