"""Identical creates against a server with only the published API (issue 15, part 1).

Three offline creates with the same fields ("Weekly review"), on a server that keeps no
`Idempotency-Key` and has no bulk endpoint, and the first `POST /issues` is lost: dropped
before the service saw it, or its answer lost after the service applied it. Looking for the
lost one on the server finds records like it that are not its result: its siblings' (already
linked to their local rows), a colleague's made before it was sent, or one seen in the cache
before. Each write must end on the server exactly once, or be kept, visibly `unsure`, and never
counted as sent.

The service runs in-process (`spec_only`); `Wire` drops or loses the first create.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from no_wait import QUICK
from push_support import (
    Wire,
    colleague_write,
    load_issues,
    server_issues,
    session_for,
    spec_only,
)

from cache import EntryState, Resource
from server.app import create_app
from server.seed import seed_workspace
from sync.push import PushReport, push_outbox
from sync.session import SyncSession

WINDOW = 1.0
TITLE = "Weekly review"
MICROS = 1_000_000


@dataclass
class Setup:
    wire: Wire
    session: SyncSession
    key: str
    db: Path

    async def colleague_creates(self, title: str = TITLE) -> str:
        """An identical issue made by someone else, straight on the service."""
        made = await colleague_write(self.wire, self.key, "POST", "/issues", {"title": title})
        return str(made["id"])

    def backdate(self, issue_id: str, seconds: float) -> None:
        """Make an issue `seconds` older on the service: it was made that long ago."""
        with sqlite3.connect(self.db) as conn:
            conn.execute(
                "UPDATE issues SET created_at = created_at - ?, updated_at = updated_at - ? "
                "WHERE id = ?",
                (int(seconds * MICROS), int(seconds * MICROS), issue_id),
            )


@asynccontextmanager
async def spec_only_server(tmp_path: Path, issues: int = 3) -> AsyncIterator[Setup]:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", issues, plan="enterprise")
    wire = Wire(spec_only(create_app(db, window_seconds=WINDOW)))
    async with session_for(
        key, tmp_path / "cache.db", transport=wire, window_seconds=WINDOW
    ) as session:
        assert (session.features.bulk, session.features.me) == (False, False)
        await load_issues(session)
        wire.reset()
        yield Setup(wire, session, key, db)


def first_create() -> Callable[[httpx.Request], bool]:
    """True for the first `POST /issues` only."""
    seen: list[bool] = []

    def rule(request: httpx.Request) -> bool:
        if request.method == "POST" and request.url.path.endswith("/v1/issues") and not seen:
            seen.append(True)
            return True
        return False

    return rule


def create_twins(session: SyncSession, count: int = 3) -> list[str]:
    return [session.cache.outbox.create(Resource.ISSUES, {"title": TITLE}) for _ in range(count)]


async def titled(session: SyncSession, title: str = TITLE) -> list[str]:
    return [i["id"] for i in await server_issues(session) if i["title"] == title]


def mapped(session: SyncSession, locals_: list[str]) -> list[str]:
    return [session.cache.outbox.resolve_id(local) for local in locals_]


async def push(session: SyncSession) -> PushReport:
    return await push_outbox(session, backoff=QUICK)


async def test_a_twin_dropped_before_the_service_is_sent_again_not_taken_for_its_sibling(
    tmp_path: Path,
) -> None:
    async with spec_only_server(tmp_path) as setup:
        session = setup.session
        twins = create_twins(session)
        setup.wire.drop = first_create()
        report = await push(session)
        on_server = await titled(session)
        ids = mapped(session, twins)
        assert setup.wire.dropped == 1
    assert len(on_server) == 3
    assert sorted(ids) == sorted(on_server)  # each local row is one server record of its own
    assert (report.done, report.sent, report.unsure, report.unknown, report.remaining) == (
        3,
        3,
        0,
        0,
        0,
    )
    assert report.reconciled == 0


async def test_a_twin_whose_answer_was_lost_after_the_service_acted_is_found_once(
    tmp_path: Path,
) -> None:
    async with spec_only_server(tmp_path) as setup:
        session = setup.session
        twins = create_twins(session)
        setup.wire.lose = first_create()
        report = await push(session)
        on_server = await titled(session)
        ids = mapped(session, twins)
    assert len(on_server) == 3 and sorted(ids) == sorted(on_server)
    assert (report.done, report.reconciled, report.unsure, report.remaining) == (3, 1, 0, 0)


async def test_a_colleagues_twin_made_before_the_sync_is_not_taken_for_a_dropped_create(
    tmp_path: Path,
) -> None:
    async with spec_only_server(tmp_path) as setup:
        session = setup.session
        twins = create_twins(session)
        theirs = await setup.colleague_creates()
        setup.backdate(theirs, 120)  # two minutes before the sync
        setup.wire.drop = first_create()
        report = await push(session)
        on_server = await titled(session)
        ids = mapped(session, twins)
    assert len(on_server) == 4 and theirs not in ids
    assert sorted([*ids, theirs]) == sorted(on_server)
    assert (report.done, report.unsure, report.remaining) == (3, 0, 0)


async def test_a_colleagues_twin_seen_in_the_cache_before_the_sync_is_not_taken(
    tmp_path: Path,
) -> None:
    """Made seconds before (within the margin the server clock's offset leaves), but pulled
    into the cache before the creates were sent: it existed before them."""
    async with spec_only_server(tmp_path) as setup:
        session = setup.session
        theirs = await setup.colleague_creates()
        await load_issues(session)
        twins = create_twins(session)
        setup.wire.drop = first_create()
        report = await push(session)
        on_server = await titled(session)
        ids = mapped(session, twins)
    assert len(on_server) == 4 and theirs not in ids
    assert (report.done, report.unsure, report.remaining) == (3, 0, 0)


async def test_two_candidates_for_one_lost_create_make_it_unsure_never_sent(
    tmp_path: Path,
) -> None:
    """A colleague makes the same issue while our first create is in flight, and our answer
    is lost after the service applied it: two records, one create. Which is ours cannot be
    told; the create is kept, `unsure`, naming both, and not counted as sent."""
    async with spec_only_server(tmp_path) as setup:
        session = setup.session
        twins = create_twins(session)
        made: list[str] = []
        rule = first_create()
        lose = first_create()

        async def colleague(request: httpx.Request) -> None:
            if rule(request):
                made.append(await setup.colleague_creates())

        setup.wire.before = colleague
        setup.wire.lose = lose
        report = await push(session)
        on_server = await titled(session)
        [unsure] = session.cache.outbox.entries((EntryState.UNSURE,))
        suspects = session.cache.outbox.suspects(unsure.id)
        detail = session.cache.reads.issue(unsure.record_id)
    assert len(on_server) == 4 and len(suspects) == 2
    assert made[0] in [record["id"] for record in suspects] and unsure.record_id in twins
    assert unsure.last_error is not None and unsure.last_error.startswith("may be a duplicate")
    assert all(f"#{record['number']}" in unsure.last_error for record in suspects)
    assert (report.done, report.sent, report.unsure, report.remaining) == (2, 2, 1, 0)
    assert detail is not None and detail.issue.title == TITLE  # still shown, as the user's


async def test_an_unsure_create_settled_as_the_same_sends_nothing_more(tmp_path: Path) -> None:
    async with spec_only_server(tmp_path) as setup:
        session = setup.session
        twins = create_twins(session, 1)
        rule = first_create()

        async def colleague(request: httpx.Request) -> None:
            if rule(request):
                await setup.colleague_creates()

        setup.wire.before, setup.wire.lose = colleague, first_create()
        await push(session)
        [unsure] = session.cache.outbox.entries((EntryState.UNSURE,))
        chosen = session.cache.outbox.suspects(unsure.id)[1]["id"]
        session.cache.outbox.same_as(unsure.id, chosen)
        setup.wire.reset()
        again = await push(session)
        assert session.cache.outbox.resolve_id(twins[0]) == chosen
    assert (again.requests, again.done, setup.wire.requests) == (0, 0, [])


async def test_an_unsure_create_sent_anyway_is_sent_once_without_another_look(
    tmp_path: Path,
) -> None:
    async with spec_only_server(tmp_path) as setup:
        session = setup.session
        create_twins(session, 1)
        rule = first_create()

        async def colleague(request: httpx.Request) -> None:
            if rule(request):
                await setup.colleague_creates()

        setup.wire.before, setup.wire.lose = colleague, first_create()
        await push(session)
        [unsure] = session.cache.outbox.entries((EntryState.UNSURE,))
        session.cache.outbox.send_anyway(unsure.id)
        setup.wire.reset()
        again = await push(session)
        sent = list(setup.wire.requests)
        on_server = await titled(session)
    assert (again.done, again.reconciled) == (1, 0)
    assert sent == [("POST", "/v1/issues")]
    assert len(on_server) == 3  # ours twice (the user said so) and the colleague's


async def test_a_create_whose_fate_stays_unknown_is_not_reported_as_sent(
    tmp_path: Path,
) -> None:
    """The first create is dropped and every listing that could tell its fate fails: the
    run stops with it pending, counted as unknown, not as sent."""
    async with spec_only_server(tmp_path) as setup:
        session = setup.session
        create_twins(session)
        setup.wire.drop = first_create()
        failing = listings_fail(setup.wire)
        report = await push(session)
        failing.stop()
        [pending] = session.cache.outbox.entries((EntryState.PENDING,))
        assert pending.id in session.cache.push.doubtful()
    assert (report.done, report.sent, report.unknown, report.remaining) == (2, 2, 1, 1)
    assert report.stopped is not None


async def test_a_colleagues_twin_made_long_after_the_lost_attempt_is_not_taken(
    tmp_path: Path,
) -> None:
    """The dropped create could not be looked for then (the listings failed); two hours later
    a colleague makes the same issue, and the next push looks: what was made long after the
    attempt ended is not its result, so it is sent again."""
    async with spec_only_server(tmp_path) as setup:
        session = setup.session
        twins = create_twins(session)
        setup.wire.drop = first_create()
        failing = listings_fail(setup.wire)
        await push(session)
        failing.stop()
        hours_ago(session, 2)
        theirs = await setup.colleague_creates()
        report = await push(session)
        on_server = await titled(session)
        ids = mapped(session, twins)
    assert len(on_server) == 4 and theirs not in ids
    assert (report.done, report.reconciled, report.remaining) == (1, 0, 0)


@dataclass
class _Failing:
    wire: Wire
    inner: Callable[[httpx.Request], Awaitable[None]] | None

    def stop(self) -> None:
        self.wire.before = self.inner


def listings_fail(wire: Wire) -> _Failing:
    """Every listing of issues fails with a reset connection (until `stop`)."""
    inner = wire.before

    async def before(request: httpx.Request) -> None:
        if inner is not None:
            await inner(request)
        if request.method == "GET" and request.url.path.endswith("/v1/issues"):
            raise httpx.ReadError("connection reset by peer")

    wire.before = before
    return _Failing(wire, inner)


def hours_ago(session: SyncSession, hours: float) -> None:
    """Move the outbox's attempts `hours` into the past, as if that long had gone by."""
    shift = hours * 3600
    with sqlite3.connect(session.cache.path) as conn:
        conn.execute(
            "UPDATE outbox SET sent_at = sent_at - ?, updated_at = updated_at - ?, "
            "created_at = created_at - ?",
            (shift, shift, shift),
        )
