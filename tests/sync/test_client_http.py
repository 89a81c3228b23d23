"""The API client against protocol edge cases: errors, broken networks, broken bodies, secrets."""

from __future__ import annotations

import traceback
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from email.utils import format_datetime
from types import TracebackType

import httpx
import pytest
from pytest_httpx import HTTPXMock

from accounts.secret import Secret
from sync.client import ApiClient
from sync.errors import (
    ApiError,
    Forbidden,
    IdempotencyKeyReused,
    InvalidRequest,
    InvalidTransition,
    NetworkError,
    NotFound,
    PayloadTooLarge,
    PreconditionFailed,
    ProtocolError,
    RateLimited,
    ServerError,
    SyncError,
    Unauthorized,
    UnexpectedStatus,
)
from sync.ratelimit import Bucket, RateLimiter

BASE_URL = "https://tracker.test/v1"
API_KEY = "trk_SECRETsecretSECRETsecretSECRETsecret00"

ISSUE = {"id": "iss_1", "title": "t", "updated_at": "2026-11-21T15:33:11.561385Z"}
SERVER_NOW = datetime(2026, 11, 22, 3, 0, tzinfo=UTC)
DATE = format_datetime(SERVER_NOW, usegmt=True)


def envelope(code: str, message: str, **extra: object) -> dict[str, object]:
    return {"error": {"code": code, "message": message, **extra}}


def test_the_client_fixture_uses_these_constants(base_url: str, api_key: str) -> None:
    assert (base_url, api_key) == (BASE_URL, API_KEY)


async def test_requests_carry_bearer_auth_json_and_the_version_path(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    httpx_mock.add_response(status_code=201, json=ISSUE)
    await client.create_issue({"title": "t"})
    request = httpx_mock.get_requests()[0]
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["accept"] == "application/json"
    assert request.headers["user-agent"].startswith("tracker-tui/")
    assert request.url == f"{BASE_URL}/issues"


async def test_a_base_url_with_a_trailing_slash_gives_the_same_paths(
    httpx_mock: HTTPXMock,
) -> None:
    httpx_mock.add_response(json=ISSUE)
    async with ApiClient(BASE_URL + "/", Secret(API_KEY)) as client:
        await client.get_issue("iss_1")
    assert httpx_mock.get_requests()[0].url == f"{BASE_URL}/issues/iss_1"


async def test_the_key_is_not_in_the_clients_repr() -> None:
    async with ApiClient(BASE_URL, Secret(API_KEY)) as client:
        assert API_KEY not in repr(client)
        assert API_KEY not in repr(client.with_request_class(client._request_class))
        assert BASE_URL in repr(client)


async def test_every_answer_comes_with_its_meta(client: ApiClient, httpx_mock: HTTPXMock) -> None:
    httpx_mock.add_response(
        json=ISSUE,
        headers={
            "Date": DATE,
            "ETag": '"v7"',
            "X-RateLimit-Limit": "60",
            "X-RateLimit-Remaining": "59",
            "X-RateLimit-Reset": str(int(SERVER_NOW.timestamp()) + 60),
        },
    )
    answer = await client.get_issue("iss_1")
    assert answer.value.id == "iss_1"
    meta = answer.meta
    assert (meta.method, meta.path, meta.status, meta.bucket) == (
        "GET",
        "/issues/iss_1",
        200,
        "other",
    )
    assert meta.date == SERVER_NOW.timestamp()
    assert meta.etag == '"v7"'
    assert meta.rate is not None
    assert (meta.rate.limit, meta.rate.remaining) == (60, 59)
    assert meta.rate.reset == SERVER_NOW.timestamp() + 60


@pytest.mark.parametrize(
    ("status", "body", "kind", "code"),
    [
        (400, envelope("invalid_request", "title is required"), InvalidRequest, "invalid_request"),
        (
            400,
            envelope("invalid_transition", "done -> backlog"),
            InvalidTransition,
            "invalid_transition",
        ),
        (
            400,
            envelope("idempotency_key_reused", "other body"),
            IdempotencyKeyReused,
            "idempotency_key_reused",
        ),
        (401, envelope("unauthorized", "bad key"), Unauthorized, "unauthorized"),
        (403, envelope("forbidden", "missing permission issues:write"), Forbidden, "forbidden"),
        (404, envelope("not_found", "no such issue"), NotFound, "not_found"),
        (
            412,
            envelope("precondition_failed", "changed"),
            PreconditionFailed,
            "precondition_failed",
        ),
        (413, envelope("payload_too_large", "too big"), PayloadTooLarge, "payload_too_large"),
        (
            429,
            envelope("rate_limit_exceeded", "slow down", retry_after=7),
            RateLimited,
            "rate_limit_exceeded",
        ),
        (500, envelope("internal_error", "oops"), ServerError, "internal_error"),
        (503, {"detail": "maintenance"}, ServerError, "error"),
        (405, {"detail": "Method Not Allowed"}, UnexpectedStatus, "error"),
        (409, envelope("conflict", "dup"), UnexpectedStatus, "conflict"),
        (
            422,
            {"detail": [{"loc": ["body", "title"], "msg": "field required"}]},
            InvalidRequest,
            "invalid_request",
        ),
    ],
)
async def test_error_statuses_map_to_the_tree(
    client: ApiClient,
    httpx_mock: HTTPXMock,
    status: int,
    body: dict[str, object],
    kind: type[ApiError],
    code: str,
) -> None:
    httpx_mock.add_response(status_code=status, json=body)
    with pytest.raises(kind) as caught:
        await client.update_issue("iss_1", {"status": "backlog"})
    error = caught.value
    assert type(error) is kind
    assert (error.status, error.code, error.meta.status) == (status, code, status)
    assert "PATCH /issues/iss_1" in str(error)


async def test_invalid_request_details_are_kept_as_fields_and_messages(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    details = [{"field": "priority", "message": "unknown value"}, "free text"]
    httpx_mock.add_response(
        status_code=400, json=envelope("invalid_request", "bad", details=details)
    )
    with pytest.raises(InvalidRequest) as caught:
        await client.create_issue({"title": "t", "priority": "p0"})
    assert [(d.field, d.message) for d in caught.value.details] == [
        ("priority", "unknown value"),
        (None, "free text"),
    ]


async def test_fastapi_validation_details_name_their_field(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    httpx_mock.add_response(
        status_code=422, json={"detail": [{"loc": ["body", "title"], "msg": "field required"}]}
    )
    with pytest.raises(InvalidRequest) as caught:
        await client.create_issue({})
    assert [(d.field, d.message) for d in caught.value.details] == [
        ("body.title", "field required")
    ]


@pytest.mark.parametrize(
    ("error", "permission"),
    [
        (envelope("forbidden", "key lacks permission comments:write"), "comments:write"),
        (envelope("forbidden", "the admin permission is required"), "admin"),
        (envelope("forbidden", "nope", permission="webhooks:manage"), "webhooks:manage"),
        (envelope("forbidden", "ask your administrator"), None),
    ],
)
async def test_forbidden_names_the_permission_when_the_server_does(
    client: ApiClient, httpx_mock: HTTPXMock, error: dict[str, object], permission: str | None
) -> None:
    httpx_mock.add_response(status_code=403, json=error)
    with pytest.raises(Forbidden) as caught:
        await client.create_comment("iss_1", "hello")
    assert caught.value.permission == permission


@pytest.mark.parametrize(
    ("headers", "body", "retry_after"),
    [
        ({}, envelope("rate_limit_exceeded", "wait", retry_after=60), 60.0),
        ({"Retry-After": "12"}, envelope("rate_limit_exceeded", "wait"), 12.0),
        ({"Retry-After": "12"}, envelope("rate_limit_exceeded", "wait", retry_after=30), 30.0),
        (
            {
                "Date": DATE,
                "Retry-After": format_datetime(SERVER_NOW.replace(minute=2), usegmt=True),
            },
            {"error": "too many"},
            120.0,
        ),
        ({"Retry-After": "soon"}, {}, None),
        ({}, {}, None),
    ],
)
async def test_rate_limited_says_how_long_to_wait_when_the_server_does(
    client: ApiClient,
    httpx_mock: HTTPXMock,
    headers: dict[str, str],
    body: dict[str, object],
    retry_after: float | None,
) -> None:
    httpx_mock.add_response(status_code=429, json=body, headers=headers)
    with pytest.raises(RateLimited) as caught:
        await client.search("crash")
    assert caught.value.retry_after == retry_after
    assert caught.value.meta.bucket == Bucket.SEARCH


async def test_a_429_with_neither_body_nor_headers_is_still_rate_limited(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    httpx_mock.add_response(status_code=429)
    with pytest.raises(RateLimited) as caught:
        await client.list_issues()
    assert caught.value.retry_after is None
    assert caught.value.code == "rate_limit_exceeded"


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"<html><body><h1>502 Bad Gateway</h1></body></html>", "502 Bad Gateway"),
        (b"", "HTTP 502"),
        (b'{"message": "upstream down"}', "upstream down"),
        (b'{"error": "upstream down"}', "upstream down"),
        (b"\xff\xfe not utf-8", "not utf-8"),
    ],
)
async def test_an_error_body_that_is_not_the_envelope_still_reads_sensibly(
    client: ApiClient, httpx_mock: HTTPXMock, content: bytes, fragment: str
) -> None:
    httpx_mock.add_response(status_code=502, content=content)
    with pytest.raises(ServerError) as caught:
        await client.list_projects()
    assert fragment in caught.value.message


@pytest.mark.parametrize(
    ("exception", "sent"),
    [
        (httpx.ConnectError("connection refused"), False),
        (httpx.ConnectTimeout("timed out connecting"), False),
        (httpx.PoolTimeout("no connection free"), False),
        (httpx.ReadTimeout("timed out reading"), True),
        (httpx.WriteTimeout("timed out writing"), True),
        (httpx.ReadError("connection reset by peer"), True),
        (httpx.RemoteProtocolError("server disconnected without sending a response"), True),
    ],
)
async def test_network_failures_say_whether_the_request_left(
    client: ApiClient, httpx_mock: HTTPXMock, exception: Exception, sent: bool
) -> None:
    httpx_mock.add_exception(exception)
    with pytest.raises(NetworkError) as caught:
        await client.create_issue({"title": "t"}, idempotency_key="k1")
    assert caught.value.request_sent is sent
    assert type(exception).__name__ in str(caught.value)


class Body(httpx.AsyncByteStream):
    """A body read from the network as it is consumed, like a real one (not preloaded)."""

    def __init__(self, content: bytes) -> None:
        self._content = content

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._content


class ResetMidBody(httpx.AsyncByteStream):
    """A body whose connection resets after the first bytes: the server has answered."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b'{"id": "iss_1", "ti'
        raise httpx.ReadError("connection reset by peer")


async def test_a_connection_reset_mid_body_is_sent_with_unknown_outcome_and_still_metered(
    httpx_mock: HTTPXMock, limiter: RateLimiter
) -> None:
    httpx_mock.add_response(
        status_code=201, stream=ResetMidBody(), headers={"Retry-After": "30", "Date": DATE}
    )
    async with ApiClient(BASE_URL, Secret(API_KEY), limiter=limiter) as client:
        with pytest.raises(NetworkError) as caught:
            await client.create_issue({"title": "t"})
    assert caught.value.request_sent is True
    assert limiter.offset.known


@pytest.mark.parametrize(
    "content",
    [b'{"id": "iss_1", "title": "t"', b"<html>ok</html>", b"{'id': 'single quotes'}", b"\x00\x01"],
)
async def test_malformed_or_truncated_json_is_a_protocol_error(
    client: ApiClient, httpx_mock: HTTPXMock, content: bytes
) -> None:
    httpx_mock.add_response(status_code=200, content=content)
    with pytest.raises(ProtocolError) as caught:
        await client.get_issue("iss_1")
    assert caught.value.status == 200
    assert caught.value.meta is not None


async def test_integers_beyond_64_bits_are_read_exactly(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    """orjson reads such an integer as a float; a numeric id would then change."""
    big = 123456789012345678901234567890
    httpx_mock.add_response(
        status_code=200,
        content=b'{"data": [{"id": %d, "title": "t", "estimate": %d}]}' % (big, big + 1),
    )
    page = (await client.list_issues()).value
    assert page.items[0].id == str(big)
    assert page.items[0].raw["estimate"] == big + 1


async def test_a_transport_that_fails_decoding_before_the_status_leaves_the_outcome_unknown(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    # pytest-httpx decodes a preloaded body inside the transport, before `send` returns
    httpx_mock.add_response(content=b"not gzip", headers={"Content-Encoding": "gzip"})
    with pytest.raises(NetworkError) as caught:
        await client.create_issue({"title": "t"})
    assert caught.value.request_sent is True
    assert_no_key(caught.value)


async def test_a_body_that_cannot_be_decompressed_is_a_protocol_error(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    httpx_mock.add_response(
        status_code=201, stream=Body(b"not gzip"), headers={"Content-Encoding": "gzip"}
    )
    with pytest.raises(ProtocolError, match="undecodable") as caught:
        await client.create_issue({"title": "t"})
    assert caught.value.status == 201


@pytest.mark.parametrize("payload", [[ISSUE], {"title": "no id"}, "iss_1", {"id": {"nested": 1}}])
async def test_a_record_of_the_wrong_shape_is_a_protocol_error(
    client: ApiClient, httpx_mock: HTTPXMock, payload: object
) -> None:
    httpx_mock.add_response(status_code=200, json=payload)
    with pytest.raises(ProtocolError):
        await client.get_issue("iss_1")


async def test_a_list_that_is_not_an_envelope_is_a_protocol_error(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    httpx_mock.add_response(json=[ISSUE])
    with pytest.raises(ProtocolError, match="list envelope"):
        await client.list_issues()


async def test_a_list_with_one_bad_record_skips_it_and_keeps_the_rest(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    bad = {"id": "iss_2", "updated_at": "not a time"}
    httpx_mock.add_response(json={"data": [ISSUE, bad], "pagination": {"total": 2}})
    page = (await client.list_issues()).value
    assert [issue.id for issue in page.data] == ["iss_1"]
    assert [skip.id for skip in page.skipped] == ["iss_2"]


@pytest.mark.parametrize(
    ("status", "answer"), [(204, None), (200, {"deleted": True}), (200, {"ok": 1}), (202, [])]
)
async def test_a_delete_answered_without_a_record_gives_none(
    client: ApiClient, httpx_mock: HTTPXMock, status: int, answer: object
) -> None:
    httpx_mock.add_response(status_code=status, json=answer)
    response = await client.delete_issue("iss_1")
    assert response.value is None
    assert response.meta.status == status


async def test_a_redirect_is_not_followed(client: ApiClient, httpx_mock: HTTPXMock) -> None:
    httpx_mock.add_response(status_code=301, headers={"Location": "https://elsewhere.test/"})
    with pytest.raises(UnexpectedStatus):
        await client.list_issues()


# --- the key never leaks ---------------------------------------------------------------------


def chain(error: BaseException) -> Iterator[BaseException]:
    seen: BaseException | None = error
    while seen is not None:
        yield seen
        seen = seen.__cause__ or seen.__context__


def frame_locals(trace: TracebackType | None) -> Iterator[object]:
    while trace is not None:
        yield from trace.tb_frame.f_locals.values()
        trace = trace.tb_next


def safe_repr(value: object) -> str:
    """`repr`, or a stand-in when it fails (objects half built when the error struck)."""
    try:
        return repr(value)
    except Exception:  # a crash screen shrugs these off too
        return "<repr failed>"


def assert_no_key(error: BaseException) -> None:
    """What a crash screen could show: messages, reprs, formatted tracebacks, and (as rich
    tracebacks with show_locals do) the repr of every local of every frame, down the chain."""
    assert API_KEY not in "".join(traceback.format_exception(error))
    for link in chain(error):
        assert not isinstance(link, httpx.HTTPError), "an httpx error (holding headers) is chained"
        assert API_KEY not in repr(link) and API_KEY not in str(link)
        assert all(API_KEY not in repr(value) for value in vars(link).values())
        assert all(API_KEY not in safe_repr(value) for value in frame_locals(link.__traceback__))


@pytest.mark.parametrize(
    "arrange",
    [
        lambda mock: mock.add_exception(httpx.ConnectError("refused")),
        lambda mock: mock.add_exception(httpx.ReadTimeout("slow")),
        lambda mock: mock.add_response(status_code=401, text=f"bad key Bearer {API_KEY}"),
        lambda mock: mock.add_response(
            status_code=403, json=envelope("forbidden", f"key {API_KEY} lacks issues:write")
        ),
        lambda mock: mock.add_response(
            status_code=500, text=f"Traceback... Authorization: Bearer {API_KEY}"
        ),
        lambda mock: mock.add_response(status_code=200, text="{truncated"),
        lambda mock: mock.add_response(status_code=200, json={"id": None}),
    ],
)
async def test_no_error_shows_the_key(httpx_mock: HTTPXMock, arrange: object) -> None:
    assert callable(arrange)
    arrange(httpx_mock)
    async with ApiClient(BASE_URL, Secret(API_KEY)) as client:
        with pytest.raises(SyncError) as caught:
            await client.update_issue("iss_1", {"title": "x"})
    assert_no_key(caught.value)


async def test_an_echoed_key_is_redacted_from_the_servers_message(
    client: ApiClient, httpx_mock: HTTPXMock
) -> None:
    httpx_mock.add_response(
        status_code=401, json=envelope("unauthorized", f"unknown key {API_KEY}")
    )
    with pytest.raises(Unauthorized) as caught:
        await client.me()
    assert caught.value.message == "unknown key [redacted]"


@pytest.mark.parametrize(
    ("base_url", "key"),
    [
        (BASE_URL, "trk_é_non_ascii_SECRET"),
        (BASE_URL, "trk_two words SECRET"),
        (BASE_URL, "trk_line\nbreak_SECRET"),
        (BASE_URL, "   "),
        ("http://[::1", API_KEY),
    ],
)
def test_a_client_that_cannot_be_built_says_why_without_the_key(base_url: str, key: str) -> None:
    with pytest.raises(ValueError) as caught:
        ApiClient(base_url, Secret(key))
    shown = "".join(traceback.format_exception(caught.value))
    below_this_test = caught.value.__traceback__.tb_next  # type: ignore[union-attr]
    visible = [safe_repr(value) for value in frame_locals(below_this_test)] + [
        safe_repr(value)
        for link in list(chain(caught.value))[1:]
        for value in frame_locals(link.__traceback__)
    ]
    for secret in {key.strip(), "SECRET"} - {""}:
        assert secret not in shown
        assert all(secret not in text for text in visible)


def test_a_key_given_as_a_plain_string_is_refused_without_quoting_it() -> None:
    """The key travels as a `Secret` up to the client: a `str` would sit in the caller's
    frames, where a crash screen renders it."""
    with pytest.raises(TypeError) as caught:
        ApiClient(BASE_URL, API_KEY)  # type: ignore[arg-type]
    assert API_KEY not in "".join(traceback.format_exception(caught.value))


async def test_surrounding_whitespace_of_a_pasted_key_is_dropped(httpx_mock: HTTPXMock) -> None:
    httpx_mock.add_response(json={})
    async with ApiClient(BASE_URL, Secret(f"  {API_KEY}\n")) as client:
        await client.me()
    assert httpx_mock.get_requests()[0].headers["authorization"] == f"Bearer {API_KEY}"
