"""The published limit tables (docs/api.md#plans-and-their-limits), request buckets, header parsing
and the server clock offset."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sync.ratelimit import ENDPOINT_LIMITS, PLANS, Bucket, ClockOffset, bucket_for, read_meta
from sync.ratelimit.headers import MAX_RETRY_AFTER, parse_rate_headers, parse_retry_after
from sync.ratelimit.plans import plan_named, plan_with_limit

NOW = 1_800_000_000.0


def http_date(moment: float) -> str:
    return format_datetime(datetime.fromtimestamp(moment, UTC), usegmt=True)


def test_plans_are_spec_s_table() -> None:
    assert {name: (p.per_minute, p.per_day) for name, p in PLANS.items()} == {
        "free": (60, 1_000),
        "pro": (300, 10_000),
        "enterprise": (1_000, 100_000),
    }
    assert PLANS["pro"].per_minute == 5 * PLANS["free"].per_minute


def test_endpoint_limits_are_spec_s_table() -> None:
    assert ENDPOINT_LIMITS == {"issues.create": 30, "comments.create": 60, "search": 30, "bulk": 10}


@pytest.mark.parametrize(
    ("method", "path", "bucket"),
    [
        ("POST", "/issues", Bucket.ISSUES_CREATE),
        ("post", "issues/", Bucket.ISSUES_CREATE),
        ("POST", "/issues/bulk", Bucket.BULK),
        ("POST", "/comments", Bucket.COMMENTS_CREATE),
        ("GET", "/search?q=crash", Bucket.SEARCH),
        ("GET", "/issues", Bucket.OTHER),
        ("PATCH", "/issues/iss_1", Bucket.OTHER),
        ("GET", "/comments", Bucket.OTHER),
        ("POST", "/webhooks", Bucket.OTHER),
    ],
)
def test_requests_fall_in_their_buckets(method: str, path: str, bucket: Bucket) -> None:
    assert bucket_for(method, path) is bucket


def test_plans_are_found_by_name_or_by_unambiguous_limit() -> None:
    assert plan_named(" Pro ") is PLANS["pro"]
    assert plan_named("startup") is None
    assert plan_named(None) is None
    assert plan_with_limit(300, per_day=False) is PLANS["pro"]
    assert plan_with_limit(100_000, per_day=True) is PLANS["enterprise"]
    assert plan_with_limit(45, per_day=False) is None


def headers(**values: str) -> httpx.Headers:
    return httpx.Headers({name.replace("_", "-"): value for name, value in values.items()})


@pytest.mark.parametrize(
    ("given_headers", "expected"),
    [
        ({}, None),
        (
            {
                "X_RateLimit_Limit": "60",
                "X_RateLimit_Remaining": "0",
                "X_RateLimit_Reset": "1800000060",
            },
            (60, 0, 1_800_000_060.0),
        ),
        ({"X_RateLimit_Limit": "sixty", "X_RateLimit_Remaining": "-1"}, None),
        ({"X_RateLimit_Limit": "60", "X_RateLimit_Remaining": "nan"}, (60, None, None)),
        ({"X_RateLimit_Remaining": " 12 ", "X_RateLimit_Reset": "inf"}, (None, 12, None)),
        ({"X_RateLimit_Limit": "60.0"}, (60, None, None)),
        ({"X_RateLimit_Reset": "30"}, (None, None, NOW + 30)),
        ({"X_RateLimit_Reset": "Sun, 22 Nov 2026 03:00:00 GMT"}, None),
    ],
)
def test_rate_headers_missing_or_garbage_become_none(
    given_headers: dict[str, str], expected: tuple[int | None, int | None, float | None] | None
) -> None:
    parsed = parse_rate_headers(headers(**given_headers), server_now=NOW)
    assert (None if parsed is None else (parsed.limit, parsed.remaining, parsed.reset)) == expected


@given(st.text(max_size=40))
def test_no_header_value_makes_parsing_raise(value: str) -> None:
    parse_retry_after(value, server_now=NOW)
    read_meta(
        "GET",
        "/issues",
        200,
        httpx.Headers(
            {
                "date": value.encode("utf-8", "ignore").decode("ascii", "ignore"),
                "x-ratelimit-reset": value.encode("ascii", "ignore").decode(),
            }
        ),
        body_retry_after=value,
        server_now=NOW,
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", 120.0),
        ("0", 0.0),
        (" 7 ", 7.0),
        (http_date(NOW + 90), 90.0),
        (http_date(NOW - 90), 0.0),
        ("Sun, 32 Foo 2026 99:00:00 GMT", None),
        ("-5", None),
        ("soon", None),
        (None, None),
        ("99999999", MAX_RETRY_AFTER),
    ],
)
def test_retry_after_is_seconds_or_an_http_date(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value, server_now=NOW) == expected


def test_a_retry_after_date_is_measured_against_the_responses_own_date() -> None:
    server_now = NOW - 600  # the local clock runs 10 minutes ahead of the server's
    meta = read_meta(
        "GET",
        "/issues",
        429,
        headers(Date=http_date(server_now), Retry_After=http_date(server_now + 45)),
        server_now=NOW,
    )
    assert meta.retry_after == 45.0
    assert meta.date == server_now


def test_without_a_date_a_retry_after_date_uses_the_estimated_server_time() -> None:
    meta = read_meta(
        "GET", "/issues", 429, headers(Retry_After=http_date(NOW + 45)), server_now=NOW
    )
    assert meta.retry_after == 45.0


def test_the_longer_of_body_and_header_waits_wins() -> None:
    meta = read_meta(
        "GET", "/search", 429, headers(Retry_After="10"), body_retry_after="25", server_now=NOW
    )
    assert meta.retry_after == 25.0
    assert meta.bucket is Bucket.SEARCH


def test_meta_keeps_etag_date_and_send_time() -> None:
    meta = read_meta(
        "PATCH",
        "/issues/iss_1",
        200,
        headers(ETag='W/"3"', Date=http_date(NOW)),
        sent_at=NOW - 1,
        server_now=NOW,
    )
    assert (meta.etag, meta.date, meta.sent_at, meta.rate) == ('W/"3"', NOW, NOW - 1, None)


def test_garbage_date_is_ignored() -> None:
    assert read_meta("GET", "/me", 200, headers(Date="yesterday"), server_now=NOW).date is None


@pytest.mark.parametrize("skew", [-600.0, -3.0, 0.0, 2.5, 600.0])
def test_clock_offset_from_whole_second_dates_is_within_a_second(skew: float) -> None:
    offset = ClockOffset()
    for step in range(10):
        local = NOW + step * 7.3
        server = local + skew
        offset.add(float(int(server)), received_at=local)
    assert abs(offset.seconds - skew) <= 0.5 + 1e-9
    assert abs(offset.to_local(offset.to_server(NOW)) - NOW) < 1e-6


def test_clock_offset_is_a_median_so_one_stale_date_does_not_move_it() -> None:
    offset = ClockOffset()
    for step in range(6):
        offset.add(NOW + step, received_at=NOW + step - 0.5)
    offset.add(NOW - 3600, received_at=NOW + 6)  # a cached response from an hour ago
    assert offset.seconds == pytest.approx(1.0)


def test_clock_offset_uses_the_middle_of_the_round_trip() -> None:
    offset = ClockOffset()
    offset.add(NOW, received_at=NOW + 4, sent_at=NOW)
    assert offset.seconds == pytest.approx(-1.5)
    assert not ClockOffset().known and ClockOffset().seconds == 0.0
