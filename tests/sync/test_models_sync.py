"""Models accept what real servers send, and lose nothing of it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from sync.errors import ErrorBody
from sync.models import (
    BulkCreate,
    BulkDelete,
    BulkUpdate,
    Comment,
    Issue,
    Me,
    Project,
    Tombstone,
    parse_bulk,
    parse_page,
)
from sync.timeutil import format_timestamp, parse_http_date, parse_timestamp

FULL_ISSUE = {
    "id": "iss_1",
    "number": 42,
    "title": "Crash on start",
    "description": "",
    "status": "in_progress",
    "priority": "high",
    "assignee": None,
    "project_id": "prj_1",
    "labels": ["bug"],
    "created_at": "2026-11-21T15:33:11.561385Z",
    "updated_at": "2026-11-21T15:33:12.000001Z",
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-21T15:33:11.561385Z", datetime(2026, 11, 21, 15, 33, 11, 561385, UTC)),
        ("2026-11-21T15:33:11Z", datetime(2026, 11, 21, 15, 33, 11, tzinfo=UTC)),
        ("2026-11-21T15:33:11z", datetime(2026, 11, 21, 15, 33, 11, tzinfo=UTC)),
        ("2026-11-21T15:33:11.5Z", datetime(2026, 11, 21, 15, 33, 11, 500000, UTC)),
        ("2026-11-21T15:33:11.123456789Z", datetime(2026, 11, 21, 15, 33, 11, 123456, UTC)),
        ("2026-11-21T17:33:11+02:00", datetime(2026, 11, 21, 15, 33, 11, tzinfo=UTC)),
        ("2026-11-21T10:33:11-05:00", datetime(2026, 11, 21, 15, 33, 11, tzinfo=UTC)),
        ("2026-11-21T15:33:11", datetime(2026, 11, 21, 15, 33, 11, tzinfo=UTC)),
        ("2026-11-21 15:33:11.25", datetime(2026, 11, 21, 15, 33, 11, 250000, UTC)),
    ],
)
def test_timestamps_of_any_precision_and_zone_read_as_aware_utc(
    text: str, expected: datetime
) -> None:
    parsed = parse_timestamp(text)
    assert parsed == expected
    assert parsed.utcoffset() is not None and parsed.utcoffset().total_seconds() == 0  # type: ignore[union-attr]


@pytest.mark.parametrize("text", ["", "yesterday", "2026-13-01T00:00:00Z", "15:33"])
def test_a_non_timestamp_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        parse_timestamp(text)


@given(st.datetimes(timezones=st.just(UTC)))
def test_formatted_timestamps_read_back_unchanged(moment: datetime) -> None:
    assert parse_timestamp(format_timestamp(moment)) == moment


def test_a_naive_datetime_is_formatted_as_utc_not_local_time() -> None:
    assert format_timestamp(datetime(2026, 1, 2, 3, 4, 5)) == "2026-01-02T03:04:05.000000Z"


def test_http_dates_read_and_garbage_gives_none() -> None:
    assert (
        parse_http_date("Sun, 22 Nov 2026 03:00:00 GMT")
        == datetime(2026, 11, 22, 3, 0, tzinfo=UTC).timestamp()
    )
    assert parse_http_date("not a date") is None
    assert parse_http_date("") is None


def test_an_issue_keeps_unknown_members_and_the_raw_dict() -> None:
    raw = FULL_ISSUE | {"sprint": {"id": "spr_9"}, "estimate": 3}
    issue = Issue.model_validate(raw)
    assert issue.model_extra == {"sprint": {"id": "spr_9"}, "estimate": 3}
    assert issue.raw == raw
    assert json.loads(json.dumps(issue.raw)) == raw


def test_the_raw_dict_keeps_the_servers_own_timestamp_string() -> None:
    issue = Issue.model_validate(FULL_ISSUE | {"updated_at": "2026-11-21T15:33:12Z"})
    assert issue.raw["updated_at"] == "2026-11-21T15:33:12Z"
    assert issue.updated_at == datetime(2026, 11, 21, 15, 33, 12, tzinfo=UTC)


def test_nested_and_directly_built_records_keep_their_raw_dicts_too() -> None:
    me = Me.model_validate({"user": {"id": "usr_1", "name": "Ada", "pronouns": "she"}})
    assert me.user is not None and me.user.raw == {"id": "usr_1", "name": "Ada", "pronouns": "she"}
    assert Issue(id="iss_1", title="Typed in").raw == {"id": "iss_1", "title": "Typed in"}
    page = parse_page({"data": [FULL_ISSUE, {"id": "x", "deleted": True}]}, Issue)
    assert [item.raw for item in page.items] == [FULL_ISSUE, {"id": "x", "deleted": True}]


def test_the_raw_dict_cannot_be_changed_through_raw() -> None:
    issue = Issue.model_validate(FULL_ISSUE)
    issue.raw["title"] = "changed"
    assert issue.raw["title"] == "Crash on start"


def test_unknown_status_and_priority_values_stay_plain_strings() -> None:
    issue = Issue.model_validate(FULL_ISSUE | {"status": "blocked", "priority": "p0"})
    assert (issue.status, issue.priority) == ("blocked", "p0")
    known = Issue.model_validate(FULL_ISSUE)
    assert known.status == FULL_ISSUE["status"]


def test_a_minimal_issue_from_a_spec_only_server_is_accepted() -> None:
    issue = Issue.model_validate({"id": "7", "title": "Only published fields"})
    assert issue.updated_at is None
    assert issue.labels == []
    assert issue.project_id is None


def test_numeric_ids_are_kept_as_opaque_strings() -> None:
    issue = Issue.model_validate({"id": 7, "title": "t", "assignee": 12})
    assert (issue.id, issue.assignee) == ("7", "12")


@pytest.mark.parametrize("number", ["forty-two", "7", 1e30, 42.5, True, [1], {"n": 1}])
def test_a_number_that_is_not_an_integer_leaves_the_issue_without_one(number: object) -> None:
    """Such an issue was refused, so skipped from its page and never stored; it only labels
    the issue, which is kept with the value as sent."""
    issue = Issue.model_validate({"id": "i", "number": number})
    assert issue.number is None and issue.raw["number"] == number


def test_a_number_of_any_size_is_read() -> None:
    assert Issue.model_validate({"id": "i", "number": -(2**70)}).number == -(2**70)


def test_null_labels_mean_no_labels() -> None:
    assert Issue.model_validate({"id": "i", "labels": None}).labels == []


def test_models_dump_timestamps_as_utc_strings_for_json() -> None:
    dumped = Issue.model_validate(FULL_ISSUE | {"updated_at": "2026-11-21T17:33:11+02:00"})
    assert dumped.model_dump(mode="json")["updated_at"] == "2026-11-21T15:33:11.000000Z"


@pytest.mark.parametrize(
    "raw",
    [
        {"title": "no id"},
        {"id": ""},
        {"id": "i", "updated_at": "last tuesday"},
        {"id": "i", "title": {"nested": True}},
    ],
)
def test_records_that_break_the_rules_are_rejected(raw: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Issue.model_validate(raw)


def test_other_records_parse() -> None:
    project = Project.model_validate({"id": "prj_1", "key": "CORE", "name": "Core"})
    comment = Comment.model_validate({"id": "cmt_1", "issue_id": "iss_1", "body": "hi"})
    assert (project.key, comment.issue_id) == ("CORE", "iss_1")


def test_me_takes_the_plan_from_the_top_or_the_workspace() -> None:
    top = Me.model_validate({"plan": "pro", "permissions": ["issues:read"]})
    nested = Me.model_validate({"workspace": {"id": "wsp_1", "plan": "enterprise"}})
    assert (top.effective_plan, nested.effective_plan) == ("pro", "enterprise")
    assert Me.model_validate({}).effective_plan is None


def test_a_page_keeps_server_order_with_tombstones_and_skips_bad_records() -> None:
    payload = {
        "data": [
            FULL_ISSUE,
            {"id": "iss_2", "deleted": True, "updated_at": "2026-11-21T15:40:00Z"},
            {"id": "iss_3", "updated_at": "garbage"},
            "not an object",
            {"id": "iss_4", "title": "fine", "deleted": False},
        ],
        "pagination": {"page": 1, "per_page": 25, "total": 5},
    }
    page = parse_page(payload, Issue)
    assert [item.id for item in page.items] == ["iss_1", "iss_2", "iss_4"]
    assert [item.id for item in page.data] == ["iss_1", "iss_4"]
    assert [type(item) for item in page.tombstones] == [Tombstone]
    assert [(skip.index, skip.id) for skip in page.skipped] == [(2, "iss_3"), (3, None)]
    assert "updated_at" in page.skipped[0].reason
    assert "not an object" in page.skipped[1].reason
    assert page.received == 5
    assert page.pagination.total == 5


def test_a_page_without_pagination_still_parses() -> None:
    page = parse_page({"data": []}, Issue)
    assert page.pagination.total is None


@pytest.mark.parametrize("payload", [[], {"items": []}, {"data": {}}, None, "data"])
def test_something_that_is_not_an_envelope_is_a_value_error(payload: object) -> None:
    with pytest.raises(ValueError):
        parse_page(payload, Issue)


def test_bulk_operations_serialise_as_contract_says() -> None:
    assert BulkCreate({"title": "t"}).to_json() == {"op": "create", "fields": {"title": "t"}}
    assert BulkUpdate("iss_1", {"status": "done"}).to_json() == {
        "op": "update",
        "id": "iss_1",
        "changes": {"status": "done"},
    }
    assert BulkDelete("iss_1").to_json() == {"op": "delete", "id": "iss_1"}


def test_bulk_results_mix_successes_and_failures() -> None:
    results = parse_bulk(
        {
            "data": [
                {"index": 0, "status": 200, "issue": FULL_ISSUE},
                {"index": 1, "status": 404, "error": {"code": "not_found", "message": "gone"}},
            ]
        }
    )
    assert results[0].ok and results[0].issue is not None and results[0].issue.id == "iss_1"
    assert not results[1].ok
    assert results[1].error == ErrorBody(code="not_found", message="gone")


@pytest.mark.parametrize(
    "payload",
    [{"data": [{"status": 200}]}, {"data": ["x"]}, {"results": []}, {"data": [{"index": 0}]}],
)
def test_a_bulk_answer_of_another_shape_is_a_value_error(payload: object) -> None:
    with pytest.raises(ValueError):
        parse_bulk(payload)
