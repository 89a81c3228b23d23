"""Each fault on its own, through a real socket: what the client raises, what a push of one
create makes of it (docs/sync.md#three-outcomes), and that a pull reads through it.

One service for the module; each test opens its own proxy, cache and session, and marks its
writes with a title of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fault_proxy import FAULTS, FORWARDED, Fault, Request, Scripted, first_of
from fault_support import WINDOW, Service, fetch_all, running_service, through_proxy

from cache import EntryState, Resource
from sync.errors import NetworkError, ProtocolError, RateLimited, ServerError, SyncError
from sync.pull import pull
from sync.push import Backoff, push_outbox

SEEDED = 5
FAST = Backoff(base=0.02, cap=0.1)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with running_service(tmp_path_factory.mktemp("faults") / "server.db", SEEDED) as running:
        yield running


@dataclass(frozen=True)
class Expected:
    error: type[SyncError]
    request_sent: bool | None = None
    status: int | None = None
    retry_after: float | None = None


EXPECTED: dict[Fault, Expected] = {
    Fault.DROP_BEFORE: Expected(NetworkError, request_sent=True),
    Fault.DROP_AFTER: Expected(NetworkError, request_sent=True),
    Fault.DELAY: Expected(NetworkError, request_sent=True),
    Fault.STATUS_500: Expected(ServerError, status=500),
    Fault.STATUS_502: Expected(ServerError, status=502),
    Fault.STATUS_503: Expected(ServerError, status=503),
    Fault.LIMITED_RETRY_AFTER: Expected(RateLimited, status=429, retry_after=1.0),
    Fault.LIMITED_RATE_HEADERS: Expected(RateLimited, status=429),
    Fault.LIMITED_BARE: Expected(RateLimited, status=429),
    Fault.TRUNCATED: Expected(NetworkError, request_sent=True),
    Fault.MALFORMED: Expected(ProtocolError, status=201),
}
"""A dropped connection looks the same to the client before and after forwarding (the request
left either way), so both are unknown outcomes; only a look at the server tells them apart."""


async def titled(service: Service, title: str) -> int:
    return sum(1 for issue in await fetch_all(service, "/issues") if issue["title"] == title)


def assert_maps(error: SyncError, fault: Fault) -> None:
    expected = EXPECTED[fault]
    assert type(error) is expected.error
    if isinstance(error, NetworkError):
        assert error.request_sent is expected.request_sent
    if isinstance(error, ServerError | RateLimited | ProtocolError):
        assert error.status == expected.status
    if isinstance(error, RateLimited):
        assert error.retry_after == expected.retry_after


@pytest.mark.parametrize("fault", list(EXPECTED), ids=str)
async def test_each_fault_raises_its_error_and_a_push_through_it_writes_once(
    fault: Fault, service: Service, tmp_path: Path
) -> None:
    """The client call raises the error the fault means; then a create with a comment on it,
    pushed through the same fault, is on the server once, reconciled when it was forwarded."""
    direct, title = f"direct-{fault.value}", f"pushed-{fault.value}"
    delays = fault is Fault.DELAY
    async with through_proxy(service, tmp_path / "cache.db", delays=delays) as (proxy, session):
        proxy.plan = Scripted(fault, "POST", "/issues")
        with pytest.raises(SyncError) as raised:
            await session.client.create_issue({"title": direct}, idempotency_key=direct)
        local = session.cache.outbox.create(Resource.ISSUES, {"title": title})
        session.cache.outbox.create(Resource.COMMENTS, {"issue_id": local, "body": title})
        proxy.plan = Scripted(fault, "POST", "/issues/bulk")
        report = await push_outbox(session, backoff=FAST)
        assert session.cache.outbox.entries((EntryState.PENDING, EntryState.FAILED)) == []
    assert_maps(raised.value, fault)
    # What the server holds first: a write made twice must fail as that, not as a count.
    assert await titled(service, direct) == (1 if fault in FORWARDED else 0)
    assert await titled(service, title) == 1
    [issue] = [i for i in await fetch_all(service, "/issues") if i["title"] == title]
    comments = await fetch_all(service, "/comments", issue_id=issue["id"])
    assert [c["body"] for c in comments] == [title]
    assert service.refused == 0
    assert (report.done, report.retried, report.stopped) == (2, 1, None), report.messages
    assert report.reconciled == (1 if fault in FORWARDED else 0)
    [faulty] = [
        hop for hop in proxy.hops if hop.fault is fault and hop.request.path.endswith("/bulk")
    ]
    later = [
        hop
        for hop in proxy.hops
        if hop.request.index > faulty.request.index and hop.request.path.endswith("/bulk")
    ]
    # An unknown outcome is asked of the request's key first, with an empty body (a 400),
    # then the request goes out again under that key: replayed when it had been applied.
    asked = [hop for hop in later if hop.status == 400]
    resent = [hop for hop in later if hop.status != 400]
    doubtful = fault in FORWARDED or fault is Fault.DROP_BEFORE
    assert (len(asked), len(resent)) == ((1, 1) if doubtful else (0, 1))
    if fault is Fault.LIMITED_RETRY_AFTER:
        assert resent[0].arrived - faulty.arrived >= 1.0  # as long as Retry-After said
    if fault is Fault.LIMITED_BARE:
        assert resent[0].arrived - faulty.arrived >= WINDOW  # a whole window, not knowing more


@pytest.mark.parametrize("fault", list(EXPECTED), ids=str)
async def test_a_pull_reads_through_one_fault(
    fault: Fault, service: Service, tmp_path: Path
) -> None:
    delays = fault is Fault.DELAY
    async with through_proxy(service, tmp_path / "cache.db", delays=delays) as (proxy, session):
        proxy.plan = Scripted(fault, "GET", "/issues")
        report = await pull(session, retry=Backoff(base=0.02))
        on_server = await fetch_all(service, "/issues")
        for issue in on_server:
            assert session.cache.server.server_record(Resource.ISSUES, issue["id"]) == issue
        assert session.cache.server.local_count(Resource.ISSUES) == len(on_server)
    assert report.retries == 1
    assert proxy.count([fault]) == 1
    assert service.refused == 0


async def test_features_probed_through_faults_are_found_all_the_same(
    service: Service, tmp_path: Path
) -> None:
    """Features are stored for good: a probe answered by a network or proxy failure is sent
    again rather than taken for "absent" or "undecided"."""
    plan = first_of(
        Scripted(Fault.DROP_BEFORE, "GET", "/me"),
        Scripted(Fault.MALFORMED, "POST", "/issues/bulk"),
        Scripted(Fault.STATUS_502, "POST", "/issues/bulk"),
        Scripted(Fault.TRUNCATED, "GET", "/comments"),
        Scripted(Fault.STATUS_503, "GET", "/users"),
    )
    async with through_proxy(service, tmp_path / "cache.db", plan) as (proxy, session):
        features = session.features
    found = (features.me, features.bulk, features.comments_list, features.users_list)
    assert found == (True, True, True, True)
    assert features.plan == "pro"
    assert proxy.count(FAULTS) == 5


async def test_a_failed_look_for_unknown_creates_keeps_what_was_found(
    service: Service, tmp_path: Path
) -> None:
    """Three comments whose answers were lost, on a server that lists comments only per issue,
    are looked for with one listing per issue; the second listing fails past its retries,
    ending the round. The first one's finding is kept: it is not listed again."""
    targets = [issue["id"] for issue in await fetch_all(service, "/issues")][:3]
    bodies = [f"unknown-{n}" for n in range(3)]
    seen = {"posts": 0, "lists": 0}

    def plan(request: Request) -> Fault:
        if request.method == "POST" and request.path.endswith("/comments"):
            seen["posts"] += 1
            return Fault.DROP_AFTER if seen["posts"] <= 3 else Fault.PASS
        if request.method == "GET" and "/comments?" in request.target:
            seen["lists"] += 1
            return Fault.STATUS_503 if 2 <= seen["lists"] <= 1 + FAST.tries else Fault.PASS
        return Fault.PASS

    async with through_proxy(service, tmp_path / "cache.db") as (proxy, session):
        # Looked for by listing, as on a server that ignores keys (one that honours them is
        # asked each comment's key instead).
        session.features = session.features.replace(comments_list=False, idempotency=False)
        for target, body in zip(targets, bodies, strict=True):
            session.cache.outbox.create(Resource.COMMENTS, {"issue_id": target, "body": body})
        proxy.plan = plan
        report = await push_outbox(session, backoff=FAST)
    assert (report.done, report.reconciled, report.stopped) == (3, 3, None)
    for target, body in zip(targets, bodies, strict=True):
        comments = await fetch_all(service, "/comments", issue_id=target)
        assert [c["body"] for c in comments].count(body) == 1
    assert seen["lists"] == 3 + FAST.tries  # three looks, and the failed one's retries
