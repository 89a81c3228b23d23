"""The client with its clock 10 minutes ahead of, or behind, the server's (SYNC.md: ±10 min).

The reference service runs on loopback (uvicorn writes the `Date` header the client measures
the offset from) with SPEC's minute scaled to a second; the client's session (limiter, request
log, outbox) gets a clock that is the real one shifted by `SKEW`. Cursors, rate-limit resets,
`Retry-After` dates and the look for a create whose answer was lost all work in server time:
read against the local clock, a reset would look ten minutes away (a stall) or long past (a
429), and a lost create would be looked for too late and sent twice.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from clock_skew_support import (
    CREATE_LIMIT,
    SKEW,
    WINDOW,
    Counted,
    LosesCreateAnswers,
    Service,
    early_in_a_window,
    push,
    retry_after_as_date,
    session_with_skew,
    without_idempotency,
)

from accounts.secret import Secret
from cache import Resource
from server.app import create_app
from server.ratelimit import RateLimiter as ServerLimiter
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.client import ApiClient
from sync.engine import sync_once
from sync.push import Backoff, push_outbox
from sync.timeutil import parse_timestamp


@pytest.fixture
def service(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Service]:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "skew", 8, plan="free")
    limiter = ServerLimiter(db, window_seconds=WINDOW)
    app = create_app(db, window_seconds=WINDOW, limiter=limiter)
    variant = getattr(request, "param", None)
    with ServiceThread(variant(app) if variant else app) as running:
        yield Service(running.base_url, key, tmp_path, limiter, db)


@pytest.fixture(params=[SKEW, -SKEW], ids=["ahead", "behind"])
def skew(request: pytest.FixtureRequest) -> float:
    return float(request.param)


async def test_cursor_is_server_time_and_a_later_change_is_pulled_once(
    service: Service, skew: float
) -> None:
    counted = Counted()
    async with session_with_skew(service, skew, counted) as session:
        first = await sync_once(session)
        assert first.pull is not None and first.pull.changed >= 8
        assert session.limiter.offset.seconds == pytest.approx(-skew, abs=2.0)
        cursor = session.cache.get_cursor(Resource.ISSUES)
        assert cursor is not None
        assert parse_timestamp(cursor.updated_at).timestamp() <= time.time() + 1

        async with ApiClient(service.base_url, Secret(service.key)) as other:
            listing = await other.list_issues(per_page=1)
            target = listing.value.data[0].id
            edited = await other.update_issue(target, {"title": "changed on the server"})
        second = await sync_once(session)
        detail = session.cache.issue(target)
        assert detail is not None and detail.issue.title == "changed on the server"
        assert second.pull is not None
        assert second.pull.resources["issues"].updated == 1
        cursor = session.cache.get_cursor(Resource.ISSUES)
        assert cursor is not None and cursor.updated_at == edited.value.raw["updated_at"]

        third = await sync_once(session)
        assert third.pull is not None and third.pull.changed == 0
    assert counted.limited == []


async def test_a_spent_window_waits_for_the_servers_reset(service: Service, skew: float) -> None:
    """Another client leaves one create in the window; ours takes it and hears "0 left until
    R" (R in server time): the next creates must wait for R, neither 10 minutes nor none."""
    counted = Counted()
    async with session_with_skew(service, skew, counted) as session:
        await early_in_a_window()
        service.spend_creates(CREATE_LIMIT - 1)
        last = await push(session, ["mine 0"])
        assert last.done == 1
        assert counted.remaining == ["0"]
        started = time.time()
        rest = await push(session, [f"mine {n}" for n in range(1, 5)])
    assert (rest.done, rest.remaining, rest.stopped) == (4, 0, None)
    assert math.floor(started / WINDOW) < math.floor(time.time() / WINDOW)
    assert counted.creates() == 5
    assert counted.limited == []


@pytest.mark.parametrize("service", [retry_after_as_date], indirect=True)
async def test_retry_after_date_is_read_in_server_time(service: Service, skew: float) -> None:
    """The window is spent elsewhere: our first create gets the one 429 nobody could avoid,
    with only a `Retry-After` date; it is retried after that date, and what follows too."""
    counted = Counted()
    async with session_with_skew(service, skew, counted) as session:
        await early_in_a_window()
        service.spend_creates(CREATE_LIMIT)
        first = await push(session, ["mine 0"])
        rest = await push(session, ["mine 1", "mine 2"])
    assert (first.done, first.retried) == (1, 1)
    assert counted.remaining[0] == str(CREATE_LIMIT - 1)
    assert (rest.done, rest.remaining, rest.stopped) == (2, 0, None)
    assert counted.limited == [("POST", "/v1/issues")]
    assert counted.creates() == 4


@pytest.mark.parametrize("service", [without_idempotency], indirect=True)
async def test_a_create_whose_answer_was_lost_is_found_after_a_restart(
    service: Service, skew: float
) -> None:
    """The look for an unknown create lists what changed since it was sent, in server time;
    after a restart no `Date` has been seen yet, so the offset is unknown and the look must
    still reach back past the skew."""
    losing = LosesCreateAnswers()
    async with session_with_skew(service, skew, losing) as session:
        session.cache.create(Resource.ISSUES, {"title": "answer lost"})
        first = await push_outbox(session, backoff=Backoff(tries=1), bulk_creates=False)
    assert first.done == 0 and first.stopped is not None
    assert losing.creates() == 1

    counted = Counted()
    async with session_with_skew(service, skew, counted) as session:
        assert not session.limiter.offset.known
        again = await push_outbox(session, bulk_creates=False)
        titles = [issue.title for issue in (await session.client.list_issues()).value.data]
    assert (again.done, again.reconciled, again.remaining) == (1, 1, 0)
    assert counted.creates() == 0
    assert titles.count("answer lost") == 1
