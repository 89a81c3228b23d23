"""The client's field table against the reference service's own models and workflow.

The two share no code by design (the client relies on the published contract), so this is where
a change to one without the other shows: a status, a move, a limit or a default the client
would check differently from the service that enforces it.
"""

from __future__ import annotations

from typing import Any

from issuefields import (
    COMMENT_BODY,
    EDITABLE,
    ISSUE_FIELDS,
    LABELS,
    PRIORITY,
    SORTS,
    STATUS,
    TRANSITIONS,
    Field,
    Kind,
    new_issue_defaults,
    problem,
    status_path,
)
from server import models as server_models
from server import schemas as server_schemas
from server import workflow as server_workflow


def _schema(model: Any) -> dict[str, Any]:
    schema: dict[str, Any] = model.model_json_schema()
    return schema


def _text_limits(prop: dict[str, Any]) -> tuple[int, int | None]:
    """(minLength, maxLength) of a string property, or of its non-null arm."""
    arms = prop.get("anyOf", [prop])
    [text] = [arm for arm in arms if arm.get("type") == "string"]
    return text.get("minLength", 0), text.get("maxLength")


def test_statuses_and_priorities_are_the_services_in_its_order() -> None:
    assert STATUS.values == server_models.STATUSES
    assert PRIORITY.values == server_models.PRIORITIES


def test_the_workflow_is_the_services() -> None:
    assert {status: set(moves) for status, moves in TRANSITIONS.items()} == {
        status: set(moves) for status, moves in server_workflow.TRANSITIONS.items()
    }
    assert set(TRANSITIONS) == set(STATUS.values)


def test_the_editable_fields_and_defaults_are_what_a_create_takes() -> None:
    schema = _schema(server_models.IssueCreate)
    assert {f.member for f in EDITABLE} == set(schema["properties"])
    assert [f.member for f in EDITABLE if f.check.required] == schema["required"]
    defaults = {
        name: prop["default"] for name, prop in schema["properties"].items() if "default" in prop
    }
    defaults["labels"] = []  # a default_factory: not in the schema
    assert new_issue_defaults() == defaults


def test_the_limits_are_the_services() -> None:
    properties = _schema(server_models.IssueCreate)["properties"]
    for f in EDITABLE:
        prop = properties[f.member]
        if f.kind in (Kind.TEXT, Kind.MARKDOWN):
            low, high = _text_limits(prop)
            assert (low > 0, high) == (f.check.required, f.check.max_chars), f.member
        elif f.kind is Kind.LABELS:
            assert prop["maxItems"] == f.check.max_items
            assert _text_limits(prop["items"])[1] == f.check.max_chars
        elif f.kind is Kind.CHOICE:
            assert tuple(prop["enum"]) == f.values, f.member
    body = _schema(server_models.CommentCreate)["properties"]["body"]
    assert _text_limits(body) == (1, COMMENT_BODY.check.max_chars)


def test_every_field_is_a_member_of_the_services_issues() -> None:
    members = set(_schema(server_schemas.Issue)["properties"]) - {"id"}
    assert {f.member for f in ISSUE_FIELDS} == members


def test_every_sort_orders_a_listed_field() -> None:
    assert all(sort.field in ISSUE_FIELDS for sort in SORTS)
    assert len({sort.key for sort in SORTS}) == len(SORTS)


def test_problems_read_as_sentences_at_the_limits() -> None:
    title = next(f for f in EDITABLE if f.kind is Kind.TEXT)
    assert problem(title, "  ") == "A title is required."
    assert problem(title, " " + "x" * 255 + " ") is None
    assert problem(title, "x" * 256) == "At most 255 characters (256 now)."
    assert problem(LABELS, ["a"] * 21) == "At most 20 labels (21 now)."
    assert problem(LABELS, ["x" * 51]) == "Labels have at most 50 characters: " + "x" * 20 + "…"
    assert problem(Field("f", "F", Kind.MARKDOWN), "x" * 100_000) is None


def test_a_status_goes_back_by_allowed_moves_only() -> None:
    assert status_path("in_progress", "backlog") == ("todo", "backlog")
    assert status_path("done", "done") == ()
    assert status_path("done", "invented") is None
