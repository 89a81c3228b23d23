"""A server that went away, on a real loopback port that is stopped and started again.

Requests refused at the connection never reached the server, so they cost none of the key's
budget (the app's fell from 879 to 830 a day and from 59 to 24 a minute in 90 s of outage); a
request that left without an answer may have been counted, so it keeps its slot. The first push
after the server died stops at its first refused connection instead of retrying every read of
every round (~30 requests over ~40 s before the engine said offline), and leaves its writes
pending, known not applied, for the engine's backoff.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fault_proxy import Fault
from fault_support import resolved, running_service, through_proxy

from cache import ACTIVE_STATES, Cache, EntryState, IssueFilter, IssueSort, Resource
from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.errors import NetworkError, SyncError
from sync.pull import pull
from sync.push import Backoff, StopReason, push_outbox
from sync.push.engine import CONCURRENCY
from sync.ratelimit import RequestClass, ResponseMeta
from sync.session import SyncSession, open_session

WINDOW = 1.0
SEEDED = 6


class Downable:
    """The reference service on a loopback port that a test stops and starts on that port."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.key = seed_workspace(db, "acme", SEEDED, plan="pro")
        self._thread = self._start(0)
        self.base_url = self._thread.base_url
        port = urlsplit(self.base_url).port
        assert port is not None
        self.port = port

    def _start(self, port: int) -> ServiceThread:
        return ServiceThread(create_app(self.db, window_seconds=WINDOW), port=port).__enter__()

    def stop(self) -> None:
        self._thread.__exit__(None, None, None)

    def start(self) -> None:
        self._thread = self._start(self.port)


@contextmanager
def downable(tmp_path: Path) -> Iterator[Downable]:
    service = Downable(tmp_path / "server.db")
    try:
        yield service
    finally:
        service.stop()


@asynccontextmanager
async def watched(
    service: Downable, cache_path: Path, outcomes: list[ResponseMeta | SyncError]
) -> AsyncIterator[SyncSession]:
    """A session whose every request's outcome lands in `outcomes`, its cache pulled."""
    with Cache.open(cache_path) as cache:
        async with open_session(
            resolved(service.key, service.base_url),
            cache=cache,
            window_seconds=WINDOW,
            timeout=2.0,
            observer=outcomes.append,
        ) as session:
            await pull(session)
            yield session


def refused(outcomes: list[ResponseMeta | SyncError]) -> list[NetworkError]:
    found = [o for o in outcomes if isinstance(o, NetworkError)]
    assert all(not error.request_sent for error in found)
    return found


async def no_sleep(_seconds: float) -> None:
    return None


async def test_requests_refused_while_the_server_is_down_cost_no_budget(tmp_path: Path) -> None:
    """Pushes, pulls and single requests, as the user's and as background requests, while nothing
    listens on the server's port: the shared log holds what it held before, the budget shown is
    the same, and once the server is back each answered request counts again."""
    outcomes: list[ResponseMeta | SyncError] = []
    with downable(tmp_path) as service:
        async with watched(service, tmp_path / "cache.db", outcomes) as session:
            cache, client = session.cache, session.client
            logged = len(cache.requests.request_times(0.0))
            day = session.limiter.budget()[1]
            service.stop()
            cache.outbox.create(Resource.ISSUES, {"title": "written while the server is down"})
            for _ in range(3):
                await push_outbox(session, backoff=Backoff(sleep=no_sleep))
            with pytest.raises(NetworkError):
                await pull(session, retry=Backoff(tries=3, sleep=no_sleep))
            background = client.with_request_class(RequestClass.BACKGROUND)
            for view in (client, client, background, background):
                with pytest.raises(NetworkError):
                    await view.list_issues(per_page=1)
            assert len(refused(outcomes)) >= 10
            assert len(cache.requests.request_times(0.0)) == logged
            assert session.limiter.budget()[1] == day

            service.start()
            await client.list_issues(per_page=1)
            assert len(cache.requests.request_times(0.0)) == logged + 1


async def test_a_request_that_left_without_an_answer_keeps_its_slot(tmp_path: Path) -> None:
    """Dropped after the request was sent (before or after the service acted: the client
    cannot tell), or answered too late: the server may have counted it, so the log does too."""
    with running_service(tmp_path / "server.db", SEEDED) as service:
        async with through_proxy(service, tmp_path / "cache.db", delays=True) as (proxy, session):
            for fault in (Fault.DROP_BEFORE, Fault.DROP_AFTER, Fault.DELAY):
                logged = len(session.cache.requests.request_times(0.0))
                proxy.plan = lambda _request, fault=fault: fault  # type: ignore[misc]
                with pytest.raises(NetworkError) as caught:
                    await session.client.list_issues(per_page=1)
                assert caught.value.request_sent
                assert len(session.cache.requests.request_times(0.0)) == logged + 1


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "one-by-one"])
async def test_the_first_push_after_the_server_died_stops_at_its_first_refused_connection(
    tmp_path: Path, bulk: bool
) -> None:
    """Edits, creates and a comment queued, then the server dies: the push sends one request
    (two at most one by one: two go out together), waits for nothing, says why it stopped,
    and every write is pending, never tried or known not applied. Before, it retried each read
    five times in each of five rounds: ~25 requests and ~40 s of backoff."""
    outcomes: list[ResponseMeta | SyncError] = []
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    with downable(tmp_path) as service:
        async with watched(service, tmp_path / "cache.db", outcomes) as session:
            session.features = session.features.replace(bulk=bulk)
            cache = session.cache
            first, second = sorted(local_issue_ids(session))[:2]
            cache.outbox.update(Resource.ISSUES, first, {"title": "edited while down"})
            cache.outbox.update(Resource.ISSUES, second, {"description": "described while down"})
            cache.outbox.create(Resource.ISSUES, {"title": "created while down"})
            cache.outbox.create(Resource.COMMENTS, {"issue_id": first, "body": "said while down"})
            service.stop()
            outcomes.clear()
            report = await push_outbox(session, backoff=Backoff(sleep=record))
            entries = cache.outbox.entries(ACTIVE_STATES)
            unsure = cache.push.doubtful()
    tried = len(refused(outcomes))
    assert 1 <= tried <= (1 if bulk else CONCURRENCY)
    assert outcomes == refused(outcomes)
    assert waits == []
    assert report.stopped is not None and report.stopped.reason is StopReason.UNREACHABLE
    assert "cannot reach the server" in report.stopped.message
    assert (report.done, report.failed, report.remaining) == (0, 0, 4)
    assert [entry.state for entry in entries] == [EntryState.PENDING] * 4
    assert unsure == set()


def local_issue_ids(session: SyncSession) -> set[str]:
    return {row.id for row in session.cache.reads.window(IssueFilter(), IssueSort(), 0, 1000)}
