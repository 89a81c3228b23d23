"""Feature detection against a server with every optional feature, one with only the published
API (docs/api.md#guaranteed), and odd ones between."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pytest_httpx import HTTPXMock

from sync.client import ApiClient
from sync.errors import Unauthorized
from sync.features import ServerFeatures, is_keyset_ordered
from sync.models import Issue
from sync.probe import detect_features

BASE = "https://tracker.test/v1"
ISSUES = [
    {"id": "iss_1", "title": "a", "updated_at": "2026-11-21T15:00:00.000001Z"},
    {"id": "iss_2", "deleted": True, "updated_at": "2026-11-21T15:00:00.000002Z"},
    {"id": "iss_3", "title": "c", "updated_at": "2026-11-21T15:00:01.000000Z"},
]


def listing(
    records: list[dict[str, Any]], per_page: int | None = 100, total: int | None = None
) -> dict[str, Any]:
    pagination: dict[str, Any] = {"page": 1, "total": len(records) if total is None else total}
    if per_page is not None:
        pagination["per_page"] = per_page
    return {"data": records, "pagination": pagination}


def error(status_code: int, code: str, message: str) -> dict[str, Any]:
    return {"status_code": status_code, "json": {"error": {"code": code, "message": message}}}


def url(pattern: str) -> re.Pattern[str]:
    return re.compile(re.escape(BASE) + pattern)


PARAMETERS = ("updated_after", "include_deleted", "per_page")


def list_attempt(mock: HTTPXMock, *present: str, **answer: Any) -> None:
    """Answer the list probe that has exactly these of the probe's parameters."""
    ahead = "".join(
        f"(?=.*{name}=)" if name in present else f"(?!.*{name}=)" for name in PARAMETERS
    )
    mock.add_response(method="GET", url=url(rf"/issues(\?|$){ahead}.*"), **answer)


ALL = PARAMETERS


def other_probes(
    mock: HTTPXMock,
    *,
    bulk: dict[str, Any],
    comments: dict[str, Any],
    users: dict[str, Any],
) -> None:
    mock.add_response(method="POST", url=f"{BASE}/issues/bulk", **bulk)
    mock.add_response(method="GET", url=url(r"/comments\?.*"), **comments)
    mock.add_response(method="GET", url=url(r"/users\?.*"), **users)


async def test_a_full_contract_server_shows_every_feature_in_five_requests(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    httpx_mock.add_response(url=f"{BASE}/me", json={"plan": "pro", "permissions": []})
    list_attempt(httpx_mock, *ALL, json=listing(ISSUES), headers={"ETag": '"l1"'})
    other_probes(
        httpx_mock,
        bulk={"json": {"data": [{"index": 0, "status": 404, "error": {"code": "not_found"}}]}},
        comments={"json": listing([])},
        users={"json": listing([{"id": "usr_1"}])},
    )
    features = await detect_features(client)
    assert features == ServerFeatures(
        me=True,
        updated_after=True,
        tombstones=True,
        keyset_order=True,
        etag=True,
        bulk=True,
        comments_list=True,
        users_list=True,
        idempotency=None,
        page_size=100,
        plan="pro",
        detected_at=features.detected_at,
        requests=5,
    )
    bulk_request = httpx_mock.get_request(method="POST")
    assert bulk_request is not None
    assert json.loads(bulk_request.content) == {
        "operations": [{"op": "update", "id": "iss_feature_probe", "changes": {}}]
    }
    comments_request = httpx_mock.get_request(url=url(r"/comments\?.*"))
    assert comments_request is not None and comments_request.url.params["issue_id"] == "iss_1"


async def test_a_spec_only_server_degrades_every_extension(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    newest_first = [ISSUES[2], ISSUES[0]]
    httpx_mock.add_response(url=f"{BASE}/me", **error(404, "not_found", "no route"))
    refusal = error(400, "invalid_request", "unknown parameter include_deleted")
    list_attempt(httpx_mock, *ALL, **refusal)
    list_attempt(httpx_mock, "updated_after", "include_deleted", **refusal)
    list_attempt(httpx_mock, "updated_after", json=listing(newest_first, per_page=25))
    httpx_mock.add_response(url=f"{BASE}/issues/iss_3", json=ISSUES[2])
    other_probes(
        httpx_mock,
        bulk={"status_code": 405, "json": {"detail": "Method Not Allowed"}},
        comments={"status_code": 404, "text": "Not Found"},
        users={"status_code": 404, "text": "Not Found"},
    )
    features = await detect_features(client)
    assert (features.me, features.tombstones, features.keyset_order) == (False, False, False)
    assert (features.etag, features.bulk, features.comments_list, features.users_list) == (
        False,
        False,
        False,
        False,
    )
    assert features.updated_after is True
    assert features.page_size == 25  # the server's default page, as it says
    assert features.plan is None
    assert features.requests == 8


async def test_updated_after_in_iso_8601_refused_means_no_keyset_paging(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    httpx_mock.add_response(url=f"{BASE}/me", **error(404, "not_found", "no"))
    refusal = error(400, "invalid_request", "updated_after: bad format")
    list_attempt(httpx_mock, *ALL, **refusal)
    list_attempt(httpx_mock, "updated_after", "include_deleted", **refusal)
    list_attempt(httpx_mock, "updated_after", **refusal)
    list_attempt(httpx_mock, json=listing([]))
    other_probes(
        httpx_mock,
        bulk=error(404, "x", "x"),
        comments=error(404, "x", "x"),
        users=error(404, "x", "x"),
    )
    features = await detect_features(client)
    assert (features.updated_after, features.keyset_order, features.tombstones) == (
        False,
        False,
        None,
    )
    assert features.etag is None  # nothing to GET
    assert features.requests == 8


async def test_a_server_refusing_a_page_of_100_keeps_every_other_answer(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    httpx_mock.add_response(url=f"{BASE}/me", json={})
    list_attempt(httpx_mock, *ALL, **error(400, "invalid_request", "per_page: at most 50"))
    list_attempt(httpx_mock, "updated_after", "include_deleted", json=listing(ISSUES, per_page=50))
    httpx_mock.add_response(url=f"{BASE}/issues/iss_1", json=ISSUES[0])
    other_probes(
        httpx_mock,
        bulk={"json": {"data": []}},
        comments={"json": listing([])},
        users={"json": listing([])},
    )
    features = await detect_features(client)
    assert (features.updated_after, features.tombstones, features.keyset_order) == (True,) * 3
    assert features.page_size == 50
    assert features.requests == 7


@pytest.mark.parametrize(
    ("answer", "page_size"),
    [
        (listing(ISSUES * 17, per_page=50, total=51), 50),
        (
            listing(
                [dict(ISSUES[0], id=f"iss_{n:03}") for n in range(50)], per_page=None, total=120
            ),
            50,
        ),
        (listing(ISSUES, per_page=None), 100),
    ],
    ids=["says 50", "silently sends 50", "small workspace"],
)
async def test_a_server_capping_page_size_is_noticed(
    client: ApiClient, httpx_mock: HTTPXMock, answer: dict[str, Any], page_size: int
) -> None:
    httpx_mock.add_response(url=f"{BASE}/me", json={})
    list_attempt(httpx_mock, *ALL, json=answer, headers={"ETag": "x"})
    other_probes(
        httpx_mock,
        bulk={"json": {"data": []}},
        comments={"json": listing([])},
        users={"json": listing([])},
    )
    assert (await detect_features(client)).page_size == page_size


async def test_include_deleted_accepted_without_tombstones_is_undecided(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    httpx_mock.add_response(url=f"{BASE}/me", json={})
    list_attempt(httpx_mock, *ALL, json=listing([ISSUES[0]]))
    httpx_mock.add_response(url=f"{BASE}/issues/iss_1", json=ISSUES[0], headers={"ETag": '"1"'})
    other_probes(
        httpx_mock,
        bulk={"json": {"data": []}},
        comments={"json": listing([])},
        users={"json": listing([])},
    )
    features = await detect_features(client)
    assert (features.tombstones, features.keyset_order, features.etag) == (None, None, True)


async def test_refusals_that_prove_nothing_leave_features_undecided(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    httpx_mock.add_response(url=f"{BASE}/me", **error(403, "forbidden", "no"))
    list_attempt(httpx_mock, *ALL, **error(403, "forbidden", "lacks issues:read"))
    other_probes(
        httpx_mock,
        bulk=error(403, "forbidden", "lacks issues:write"),
        comments=error(400, "invalid_request", "issue_id is required"),
        users=error(500, "internal_error", "oops"),
    )
    features = await detect_features(client)
    assert (features.me, features.updated_after, features.keyset_order, features.bulk) == (
        None,
    ) * 4
    assert features.users_list is None
    assert features.comments_list is True  # it exists: it only wanted an issue_id
    assert "issue_id" not in httpx_mock.get_request(url=url(r"/comments\?.*")).url.params  # type: ignore[union-attr]


async def test_a_bulk_path_routed_to_issue_creation_is_not_bulk(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    httpx_mock.add_response(url=f"{BASE}/me", text="<html>app</html>")
    list_attempt(httpx_mock, *ALL, json=listing([]))
    other_probes(
        httpx_mock,
        bulk=error(400, "invalid_request", "The `title` field is required"),
        comments={"json": listing([])},
        users={"json": listing([])},
    )
    features = await detect_features(client)
    assert features.bulk is False
    assert features.me is False  # a 200 that is not JSON is no /me


async def test_a_bad_key_stops_detection(client: ApiClient, httpx_mock: HTTPXMock) -> None:
    httpx_mock.add_response(url=f"{BASE}/me", **error(401, "unauthorized", "bad key"))
    with pytest.raises(Unauthorized):
        await detect_features(client)


def issue(identifier: str, updated_at: str | None) -> Issue:
    return Issue.model_validate({"id": identifier, "updated_at": updated_at})


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        ([], None),
        ([("a", "2026-01-01T00:00:00Z")], None),
        ([("a", "2026-01-01T00:00:00Z"), ("b", "2026-01-01T00:00:01Z")], True),
        ([("a", "2026-01-01T00:00:00Z"), ("b", "2026-01-01T00:00:00Z")], True),  # whole-second tie
        ([("b", "2026-01-01T00:00:00Z"), ("a", "2026-01-01T00:00:00Z")], False),
        ([("a", "2026-01-01T00:00:01Z"), ("b", "2026-01-01T00:00:00Z")], False),  # newest first
        ([("a", "2026-01-01T00:00:00Z"), ("b", None)], False),
        ([("a", "2026-01-01T00:00:00+01:00"), ("b", "2026-01-01T00:00:00Z")], True),
    ],
)
def test_keyset_order_is_updated_at_then_id_ascending(
    records: list[tuple[str, str | None]], expected: bool | None
) -> None:
    assert is_keyset_ordered([issue(i, u) for i, u in records]) is expected


def test_features_survive_a_round_trip_through_json() -> None:
    features = ServerFeatures(
        me=True, bulk=False, page_size=50, plan="free", detected_at=1.5, requests=6
    )
    assert ServerFeatures.from_json(features.to_json()) == features
    assert (
        ServerFeatures.from_json(features.replace(idempotency=True).to_json()).idempotency is True
    )


def test_stored_features_with_unknown_members_still_load() -> None:
    stored = json.loads(ServerFeatures(me=True).to_json()) | {"webhooks_v2": True}
    assert ServerFeatures.from_json(json.dumps(stored)).me is True


@pytest.mark.parametrize(
    "stored",
    [
        "not json",
        "[]",
        '{"version": 0}',
        '{"version": 1, "me": "yes"}',
        '{"version": 1, "requests": true}',
    ],
)
def test_unusable_stored_features_are_a_value_error(stored: str) -> None:
    with pytest.raises(ValueError):
        ServerFeatures.from_json(stored)
