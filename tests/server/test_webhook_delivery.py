"""Webhook signing, URL policy and delivery, against a real HTTP receiver on a loopback port."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from webhook_receiver import SECRET, Receiver, Request, receiving

from server.webhook_delivery import WebhookConfigError, WebhookDispatcher
from server.webhook_signing import sign, verify
from server.webhook_urls import WebhookURLError, check_webhook_url

START = datetime(2026, 11, 21, 15, 33, 11, tzinfo=UTC)


class FakeClock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with receiving() as listening:
        yield listening


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "tracker.db"


@pytest.fixture
async def running() -> AsyncIterator[list[WebhookDispatcher]]:
    """Dispatchers a test starts; stopped at the end even when the test fails."""
    started: list[WebhookDispatcher] = []
    yield started
    for dispatcher in started:
        await dispatcher.stop()


async def start(
    running: list[WebhookDispatcher], db_path: Path, **options: Any
) -> WebhookDispatcher:
    dispatcher = WebhookDispatcher(db_path, **options)
    await dispatcher.start()
    running.append(dispatcher)
    return dispatcher


def issue(issue_id: str = "iss_1", **fields: Any) -> dict[str, Any]:
    return {"id": issue_id, "title": "Crash on save", "status": "todo", **fields}


def arrivals(receiver: Receiver) -> list[tuple[str, int]]:
    """(record id, the ``n`` it carried) of each request, in arrival order."""
    return [(e["data"]["object"]["id"], e["data"]["object"]["n"]) for e in receiver.events()]


def timestamp(iso: str) -> datetime:
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


# Signing


def test_signature_matches_an_independently_computed_vector() -> None:
    # printf '1700000000.{"id":"evt_1"}' | openssl dgst -sha256 -hmac whsec_test
    expected = "c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925"
    assert sign(SECRET, 1_700_000_000, b'{"id":"evt_1"}') == f"t=1700000000,v1={expected}"


def test_verify_accepts_a_fresh_signature_and_rejects_tampering() -> None:
    body = b'{"id":"evt_1"}'
    header = sign(SECRET, 1_700_000_000, body)

    assert verify(SECRET, header, body, now=1_700_000_300)
    assert not verify(SECRET, header, body + b" ", now=1_700_000_000)
    assert not verify("whsec_other", header, body, now=1_700_000_000)
    assert not verify(SECRET, header, body, now=1_700_000_301), "older than five minutes"
    assert not verify(SECRET, header, body, now=1_699_999_699), "too far in the future"
    assert verify(SECRET, header, body, now=1_700_000_600, tolerance=600)


def test_verify_accepts_any_of_several_signatures() -> None:
    body = b"{}"
    good = sign(SECRET, 1_700_000_000, body).split(",")[1]
    assert verify(SECRET, f"t=1700000000,v1=deadbeef,{good}", body, now=1_700_000_000)


@pytest.mark.parametrize(
    "header",
    ["", "garbage", "t=1700000000", "v1=abc", "t=,v1=abc", "t=-5,v1=abc", "t=1,t=2,v1=abc"],
)
def test_verify_rejects_malformed_headers(header: str) -> None:
    assert not verify(SECRET, header, b"{}", now=1_700_000_000)


# URL policy


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/hook",
        "https://127.1.2.3/hook",
        "http://[::1]:9000/",
        "http://localhost:8000/hook",
        "HTTP://LOCALHOST/",
        "http://2130706433/",
        "http://[::ffff:127.0.0.1]/",
    ],
)
def test_loopback_urls_are_allowed(url: str) -> None:
    check_webhook_url(url)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://127.0.0.1/hook", "must use http or https"),
        ("127.0.0.1:8000/hook", "must use http or https"),
        ("http:///hook", "has no host"),
        ("http://127.0.0.1:99999/", "malformed"),
        ("http://10.0.0.1/hook", "not a loopback address"),
        ("http://0.0.0.0:8000/", "not a loopback address"),
        ("http://169.254.169.254/latest/meta-data", "not a loopback address"),
        ("http://[::ffff:10.0.0.1]/", "not a loopback address"),
        ("https://example.com/hook", "example.com"),
    ],
)
def test_other_urls_are_refused_by_default(url: str, reason: str) -> None:
    with pytest.raises(WebhookURLError, match=reason):
        check_webhook_url(url)


def test_allow_private_lifts_only_the_host_restriction() -> None:
    check_webhook_url("http://10.0.0.1/hook", allow_private=True)
    check_webhook_url("https://example.com/hook", allow_private=True)
    with pytest.raises(WebhookURLError, match="http or https"):
        check_webhook_url("ftp://example.com/hook", allow_private=True)
    assert issubclass(WebhookURLError, ValueError)


# Webhook records


def test_webhooks_belong_to_their_workspace(db_path: Path) -> None:
    dispatcher = WebhookDispatcher(db_path)
    added = dispatcher.add_webhook("wsp_a", "http://127.0.0.1:9/hook", ["issue.created"], SECRET)

    assert added["id"].startswith("whk_")
    assert added["secret"] == SECRET
    assert added["events"] == ["issue.created"]
    listed = dispatcher.list_webhooks("wsp_a")
    assert listed == [{k: v for k, v in added.items() if k != "secret"}]
    assert dispatcher.get_webhook("wsp_a", added["id"]) == listed[0]
    assert dispatcher.get_webhook("wsp_b", added["id"]) is None
    assert dispatcher.list_webhooks("wsp_b") == []
    assert dispatcher.update_webhook("wsp_b", added["id"], events=["*"]) is None
    assert dispatcher.delete_webhook("wsp_b", added["id"]) is None


def test_update_changes_fields_and_moves_updated_at_forward(db_path: Path) -> None:
    clock = FakeClock(START)
    dispatcher = WebhookDispatcher(db_path, clock=clock)
    added = dispatcher.add_webhook("wsp_a", "http://127.0.0.1:9/a", ["*"], SECRET)

    updated = dispatcher.update_webhook(
        "wsp_a", added["id"], url="http://localhost:9/b", events=["issue.deleted", "issue.deleted"]
    )

    assert updated is not None
    assert (updated["url"], updated["events"]) == ("http://localhost:9/b", ["issue.deleted"])
    assert updated["created_at"] == added["created_at"]
    assert updated["updated_at"] > added["updated_at"], "same clock reading, still later"
    assert "secret" not in updated


def test_delete_returns_the_webhook_and_forgets_it(db_path: Path) -> None:
    dispatcher = WebhookDispatcher(db_path)
    added = dispatcher.add_webhook("wsp_a", "http://127.0.0.1:9/hook", ["*"], SECRET)
    dispatcher.emit("wsp_a", "issue.created", issue(), None)

    deleted = dispatcher.delete_webhook("wsp_a", added["id"])

    assert deleted is not None and deleted["id"] == added["id"]
    assert dispatcher.get_webhook("wsp_a", added["id"]) is None
    assert dispatcher.deliveries(added["id"]) == []


@pytest.mark.parametrize(
    ("url", "events", "secret", "error"),
    [
        ("http://10.0.0.1/hook", ["*"], SECRET, WebhookURLError),
        ("http://127.0.0.1/hook", [], SECRET, WebhookConfigError),
        ("http://127.0.0.1/hook", ["issue.archived"], SECRET, WebhookConfigError),
        ("http://127.0.0.1/hook", ["*"], "", WebhookConfigError),
    ],
)
def test_invalid_webhooks_are_refused(
    db_path: Path, url: str, events: list[str], secret: str, error: type[ValueError]
) -> None:
    dispatcher = WebhookDispatcher(db_path)
    with pytest.raises(error):
        dispatcher.add_webhook("wsp_a", url, events, secret)
    assert dispatcher.list_webhooks("wsp_a") == []


def test_emit_refuses_unknown_event_types_and_records_without_ids(db_path: Path) -> None:
    dispatcher = WebhookDispatcher(db_path)
    with pytest.raises(ValueError, match="unknown event type"):
        dispatcher.emit("wsp_a", "issue.archived", issue(), None)
    with pytest.raises(ValueError, match="id"):
        dispatcher.emit("wsp_a", "issue.created", {"title": "x"}, None)


def test_emitted_events_wait_as_pending_until_the_dispatcher_runs(db_path: Path) -> None:
    clock = FakeClock(START)
    dispatcher = WebhookDispatcher(db_path, clock=clock)
    hook = dispatcher.add_webhook("wsp_a", "http://127.0.0.1:9/hook", ["*"], SECRET)
    dispatcher.emit("wsp_a", "issue.created", issue(), None)

    [pending] = dispatcher.deliveries(hook["id"])

    assert pending["event_id"].startswith("evt_")
    assert pending == {
        "event_id": pending["event_id"],
        "event_type": "issue.created",
        "attempt": 1,
        "status": "pending",
        "response_code": None,
        "error": None,
        "scheduled_at": "2026-11-21T15:33:11.000000Z",
        "attempted_at": None,
        "completed_at": None,
    }


# Delivery


async def test_events_arrive_signed_with_the_contract_body(
    db_path: Path, receiver: Receiver, running: list[WebhookDispatcher]
) -> None:
    clock = FakeClock(START)
    receiver.now = lambda: clock.now.timestamp()
    dispatcher = await start(running, db_path, clock=clock)
    hook = dispatcher.add_webhook("wsp_a", receiver.url(), ["*"], SECRET)

    dispatcher.emit("wsp_a", "issue.created", issue(), None)
    dispatcher.emit("wsp_a", "issue.updated", issue(status="done"), {"status": "todo"})
    await dispatcher.drain(timeout=10)

    created, updated = receiver.requests
    for request, event_type in ((created, "issue.created"), (updated, "issue.updated")):
        assert request.signed
        assert request.headers["x-tracker-event"] == event_type
        assert request.headers["x-tracker-delivery"] == request.event["id"]
        assert request.headers["content-type"] == "application/json"
        assert request.event["id"].startswith("evt_")
    assert created.event == {
        "id": created.event["id"],
        "type": "issue.created",
        "created_at": "2026-11-21T15:33:11.000000Z",
        "workspace_id": "wsp_a",
        "data": {"object": issue(), "previous": {}},
    }
    assert updated.event["data"] == {
        "object": issue(status="done"),
        "previous": {"status": "todo"},
    }
    attempts = dispatcher.deliveries(hook["id"])
    assert [(a["status"], a["response_code"], a["attempt"]) for a in attempts] == [
        ("succeeded", 200, 1),
        ("succeeded", 200, 1),
    ]
    assert [a["event_id"] for a in attempts] == [created.event["id"], updated.event["id"]]


async def test_failures_are_retried_on_the_scaled_schedule(
    db_path: Path, receiver: Receiver, running: list[WebhookDispatcher]
) -> None:
    async def fail_three_times(request: Request) -> int:
        return 500 if len(receiver.requests) <= 3 else 200

    receiver.answer = fail_three_times
    # Twenty times faster: retries after 0.05, 0.25, 1.25 s, and a 0.5 s timeout, which leaves
    # a loaded machine room to answer (a timeout would be retried and spoil the count).
    dispatcher = await start(running, db_path, window_seconds=3)
    hook = dispatcher.add_webhook("wsp_a", receiver.url(), ["*"], SECRET)

    dispatcher.emit("wsp_a", "issue.created", issue(), None)
    await receiver.wait_for(4)
    await dispatcher.drain(timeout=10)

    attempts = dispatcher.deliveries(hook["id"])
    assert [(a["attempt"], a["status"], a["response_code"]) for a in attempts] == [
        (1, "retrying", 500),
        (2, "retrying", 500),
        (3, "retrying", 500),
        (4, "succeeded", 200),
    ]
    scheduled_delays = [
        timestamp(later["scheduled_at"]) - timestamp(earlier["completed_at"])
        for earlier, later in pairwise(attempts)
    ]
    assert scheduled_delays == [timedelta(seconds=s) for s in (0.05, 0.25, 1.25)]
    gaps = [b.arrived - a.arrived for a, b in pairwise(receiver.requests)]
    assert [gap >= delay for gap, delay in zip(gaps, (0.05, 0.25, 1.25), strict=True)] == [True] * 3
    assert len({r.headers["x-tracker-delivery"] for r in receiver.requests}) == 1
    assert len({r.body for r in receiver.requests}) == 1
    assert all(r.signed for r in receiver.requests)
    assert len(receiver.requests) == 4


async def test_the_scaled_timeout_has_a_one_second_floor(
    db_path: Path, receiver: Receiver, running: list[WebhookDispatcher]
) -> None:
    clock = FakeClock(START)
    receiver.now = lambda: clock.now.timestamp()
    never = asyncio.Event()

    async def hang_the_first_time(request: Request) -> int:
        if len(receiver.requests) == 1:
            await never.wait()
        return 200

    receiver.answer = hang_the_first_time
    # At 0.6 s "minutes" the scaled timeout would be 0.1 s; the floor makes it 1 s.
    dispatcher = await start(running, db_path, window_seconds=0.6, clock=clock)
    hook = dispatcher.add_webhook("wsp_a", receiver.url(), ["*"], SECRET)

    dispatcher.emit("wsp_a", "issue.created", issue(), None)
    await dispatcher.drain(timeout=10)
    clock.advance(0.01)
    await dispatcher.drain(timeout=10)

    attempts = dispatcher.deliveries(hook["id"])
    assert [(a["status"], a["error"]) for a in attempts] == [
        ("retrying", "no response within 1 s"),
        ("succeeded", None),
    ]


async def test_a_delivery_fails_after_the_last_retry_and_the_record_moves_on(
    db_path: Path, receiver: Receiver, running: list[WebhookDispatcher]
) -> None:
    clock = FakeClock(START)
    receiver.now = lambda: clock.now.timestamp()

    async def fail_the_first_event(request: Request) -> int:
        return 500 if request.event["data"]["object"]["title"] == "first" else 200

    receiver.answer = fail_the_first_event
    dispatcher = await start(running, db_path, clock=clock)
    hook = dispatcher.add_webhook("wsp_a", receiver.url(), ["*"], SECRET)
    dispatcher.emit("wsp_a", "issue.created", issue(title="first"), None)
    dispatcher.emit("wsp_a", "issue.updated", issue(title="second"), {"title": "first"})

    await dispatcher.drain(timeout=10)
    for delay in (1, 5, 25, 125):
        clock.advance(delay - 0.000001)
        await dispatcher.drain(timeout=10)
        assert len(receiver.requests) == 1 + (1, 5, 25, 125).index(delay), "not due yet"
        clock.advance(0.000001)
        await dispatcher.drain(timeout=10)
    assert [e["data"]["object"]["title"] for e in receiver.events()] == ["first"] * 5

    clock.advance(625)
    await dispatcher.drain(timeout=10)

    assert [e["data"]["object"]["title"] for e in receiver.events()] == ["first"] * 6 + ["second"]
    assert all(r.signed for r in receiver.requests)
    attempts = dispatcher.deliveries(hook["id"])
    assert [(a["event_type"], a["attempt"], a["status"]) for a in attempts] == [
        *[("issue.created", n, "retrying") for n in range(1, 6)],
        ("issue.created", 6, "failed"),
        ("issue.updated", 1, "succeeded"),
    ]
    offsets = [timestamp(a["scheduled_at"]) - START for a in attempts[:6]]
    assert offsets == [timedelta(seconds=s) for s in (0, 1, 6, 31, 156, 781)]


async def test_events_of_one_record_wait_for_the_earlier_one_but_others_do_not(
    db_path: Path, receiver: Receiver, running: list[WebhookDispatcher]
) -> None:
    clock = FakeClock(START)
    receiver.now = lambda: clock.now.timestamp()

    failed: list[Request] = []

    async def fail_the_first_attempt_of_a0(request: Request) -> int:
        if request.event["data"]["object"] == issue("iss_a", n=0) and not failed:
            failed.append(request)
            return 500
        return 200

    receiver.answer = fail_the_first_attempt_of_a0
    dispatcher = await start(running, db_path, clock=clock)
    dispatcher.add_webhook("wsp_a", receiver.url(), ["*"], SECRET)
    for n in range(3):
        dispatcher.emit("wsp_a", "issue.updated", issue("iss_a", n=n), None)
    dispatcher.emit("wsp_a", "issue.updated", issue("iss_b", n=0), None)

    await dispatcher.drain(timeout=10)
    assert sorted(arrivals(receiver)) == [("iss_a", 0), ("iss_b", 0)]

    clock.advance(1)
    await dispatcher.drain(timeout=10)
    assert [n for record, n in arrivals(receiver) if record == "iss_a"] == [0, 0, 1, 2]


async def test_emit_from_another_thread_wakes_the_worker_and_each_record_keeps_order(
    db_path: Path, receiver: Receiver, running: list[WebhookDispatcher]
) -> None:
    dispatcher = await start(running, db_path)
    dispatcher.add_webhook("wsp_a", receiver.url(), ["*"], SECRET)
    await dispatcher.drain(timeout=10)  # the worker now sleeps until something wakes it

    def emit_from_a_request_thread() -> None:
        for n in range(10):
            for record in ("iss_a", "iss_b", "iss_c", "iss_d"):
                dispatcher.emit("wsp_a", "issue.updated", issue(record, n=n), None)

    await asyncio.to_thread(emit_from_a_request_thread)
    await receiver.wait_for(40)
    await dispatcher.drain(timeout=10)

    for record in ("iss_a", "iss_b", "iss_c", "iss_d"):
        assert [n for r, n in arrivals(receiver) if r == record] == list(range(10))
    assert len(receiver.requests) == 40


async def test_a_hanging_receiver_neither_slows_emit_nor_holds_up_other_webhooks(
    db_path: Path, receiver: Receiver, running: list[WebhookDispatcher]
) -> None:
    release = asyncio.Event()

    async def hang_on_slow(request: Request) -> int:
        if request.path == "/slow":
            await release.wait()
        return 200

    receiver.answer = hang_on_slow
    dispatcher = await start(running, db_path)  # unscaled: a 10 s timeout
    slow = dispatcher.add_webhook("wsp_a", receiver.url("/slow"), ["*"], SECRET)
    dispatcher.add_webhook("wsp_a", receiver.url("/fast"), ["issue.created"], SECRET)

    dispatcher.emit("wsp_a", "issue.created", issue("iss_0"), None)
    await receiver.wait_for(2)
    # emit is synchronous and runs on the loop the receiver needs: had it waited on the
    # network, it could not have returned while the slow receiver hangs on its first request.
    for n in range(1, 101):
        event_type = "issue.created" if n % 2 else "issue.updated"
        dispatcher.emit("wsp_a", event_type, issue(f"iss_{n}"), None)
    assert len(receiver.events("/slow")) == 1
    slow_attempts = dispatcher.deliveries(slow["id"])
    assert len(slow_attempts) == 101
    assert {a["status"] for a in slow_attempts} == {"pending"}

    await receiver.wait_for(8 + 51)
    fast = receiver.events("/fast")
    assert sorted(int(e["data"]["object"]["id"][4:]) for e in fast) == [0, *range(1, 101, 2)]
    assert len(receiver.events("/slow")) == 8, "at most 8 requests open per webhook"
    assert not release.is_set()

    release.set()
    await dispatcher.drain(timeout=20)
    assert len(receiver.events("/slow")) == 101
    assert {a["status"] for a in dispatcher.deliveries(slow["id"])} == {"succeeded"}


async def test_event_filters_choose_the_webhooks(
    db_path: Path, receiver: Receiver, running: list[WebhookDispatcher]
) -> None:
    dispatcher = await start(running, db_path)
    dispatcher.add_webhook("wsp_a", receiver.url("/issues"), ["issue.created"], SECRET)
    dispatcher.add_webhook(
        "wsp_a", receiver.url("/comments"), ["comment.created", "comment.deleted"], SECRET
    )
    dispatcher.add_webhook("wsp_a", receiver.url("/all"), ["*"], SECRET)
    dispatcher.add_webhook("wsp_b", receiver.url("/other"), ["*"], SECRET)

    sent = ["issue.created", "issue.updated", "comment.created", "project.deleted"]
    for n, event_type in enumerate(sent):
        dispatcher.emit("wsp_a", event_type, {"id": f"rec_{n}"}, None)
    await dispatcher.drain(timeout=10)

    def types(path: str) -> list[str]:
        return [e["type"] for e in receiver.events(path)]

    assert types("/issues") == ["issue.created"]
    assert types("/comments") == ["comment.created"]
    assert sorted(types("/all")) == sorted(sent)
    assert types("/other") == []


async def test_a_url_refused_at_delivery_time_is_an_attempt_error(
    db_path: Path, running: list[WebhookDispatcher]
) -> None:
    clock = FakeClock(START)
    permissive = WebhookDispatcher(db_path, allow_private=True)
    hook = permissive.add_webhook("wsp_a", "http://10.0.0.1/hook", ["*"], SECRET)
    dispatcher = await start(running, db_path, clock=clock)

    dispatcher.emit("wsp_a", "issue.created", issue(), None)
    for delay in (0, 1, 5, 25, 125, 625):
        clock.advance(delay)
        await dispatcher.drain(timeout=10)

    attempts = dispatcher.deliveries(hook["id"])
    assert [a["status"] for a in attempts] == ["retrying"] * 5 + ["failed"]
    assert {a["response_code"] for a in attempts} == {None}
    assert all("not a loopback address" in a["error"] for a in attempts)


async def test_a_restart_resumes_pending_deliveries(
    db_path: Path, receiver: Receiver, running: list[WebhookDispatcher]
) -> None:
    clock = FakeClock(START)
    receiver.now = lambda: clock.now.timestamp()
    never = asyncio.Event()
    healthy = False

    async def fail_or_hang_until_healthy(request: Request) -> int:
        if healthy:
            return 200
        if request.event["data"]["object"]["id"] == "iss_hang":
            await never.wait()  # until the first dispatcher stops and hangs up
        return 500

    receiver.answer = fail_or_hang_until_healthy
    first = await start(running, db_path, clock=clock)
    hook = first.add_webhook("wsp_a", receiver.url(), ["*"], SECRET)
    first.emit("wsp_a", "issue.created", issue("iss_fail"), None)
    await first.drain(timeout=10)
    first.emit("wsp_a", "issue.created", issue("iss_hang"), None)
    await receiver.wait_for(2)
    await first.stop()
    first.emit("wsp_a", "issue.created", issue("iss_later"), None)

    healthy = True
    clock.advance(1)
    second = await start(running, db_path, clock=clock)
    await second.drain(timeout=10)

    delivered = [e["data"]["object"]["id"] for e in receiver.events()]
    assert sorted(delivered) == ["iss_fail", "iss_fail", "iss_hang", "iss_hang", "iss_later"]
    attempts = second.deliveries(hook["id"])
    assert [(a["attempt"], a["status"]) for a in attempts] == [
        (1, "retrying"),
        (2, "succeeded"),
        (1, "succeeded"),
        (1, "succeeded"),
    ]
