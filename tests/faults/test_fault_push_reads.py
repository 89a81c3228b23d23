"""The reads a push makes (looking for creates whose answer was lost, conflict listings) under
faults: retried in place, never charged to a write, never repeated once answered, and as few
as the server allows (one listing for the comments of many issues).

Each test scripts its faults by request, through the real proxy and socket, and writes titles
and bodies of its own on one service for the module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from fault_proxy import Fault, Hop, Request
from fault_support import Service, fetch_all, running_service, through_proxy

from cache import EntryState, Resource
from sync.push import Backoff, push_outbox

SEEDED = 5
FAST = Backoff(base=0.02, cap=0.1)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with running_service(tmp_path_factory.mktemp("reads") / "server.db", SEEDED) as running:
        yield running


def listings(hops: list[Hop], path: str) -> list[Hop]:
    return [h for h in hops if h.request.method == "GET" and h.request.path.endswith(path)]


def posts(hops: list[Hop], path: str) -> list[Hop]:
    return [h for h in hops if h.request.method == "POST" and h.request.path.endswith(path)]


async def bodies(service: Service, issue_id: str) -> list[str]:
    return [c["body"] for c in await fetch_all(service, "/comments", issue_id=issue_id)]


async def titled(service: Service, title: str) -> int:
    return sum(1 for issue in await fetch_all(service, "/issues") if issue["title"] == title)


@dataclass
class LostThenFailing:
    """The first create of each kind never reaches the service (`DROP_BEFORE`: an unknown
    outcome to the client); while `failing`, every listing of comments answers 503."""

    failing: bool = True
    dropped: int = 0

    def __call__(self, request: Request) -> Fault:
        if request.method == "POST" and self.dropped < 2:
            self.dropped += 1
            return Fault.DROP_BEFORE
        if self.failing and request.method == "GET" and request.path.endswith("/comments"):
            return Fault.STATUS_503
        return Fault.PASS


async def test_a_create_looked_for_and_not_found_is_not_looked_for_again_by_the_next_run(
    service: Service, tmp_path: Path
) -> None:
    """Run 1 looks for a lost issue create (not found) and then stops on a comment listing
    that keeps failing; run 2 must trust that finding, kept in the outbox: it lists comments
    once and issues not at all, and each write lands once."""
    title, body = "looked-for-once", "looked-for-once comment"
    target = (await fetch_all(service, "/issues"))[0]["id"]
    plan = LostThenFailing()
    async with through_proxy(service, tmp_path / "cache.db") as (proxy, session):
        session.cache.outbox.create(Resource.ISSUES, {"title": title})
        session.cache.outbox.create(Resource.COMMENTS, {"issue_id": target, "body": body})
        proxy.plan, probes = plan, len(proxy.hops)
        first = await push_outbox(session, backoff=replace(FAST, tries=2), bulk_creates=False)
        assert first.stopped is not None and first.remaining == 2
        assert len(listings(proxy.hops[probes:], "/issues")) == 1
        assert [e.attempts for e in session.cache.outbox.entries((EntryState.PENDING,))] == [1, 1]
        plan.failing = False
        seen = len(proxy.hops)
        second = await push_outbox(session, backoff=FAST, bulk_creates=False)
        again = proxy.hops[seen:]
    assert (second.done, second.remaining, second.stopped) == (2, 0, None)
    assert len(listings(again, "/issues")) == 0
    assert len(listings(again, "/comments")) == 1
    assert await titled(service, title) == 1
    assert (await bodies(service, target)).count(body) == 1


def failing_reads(edited: str, *faults: Fault) -> Callable[[Request], Fault]:
    """The first issue create is lost before the service (an unknown outcome); the listings
    of issues that follow meet `faults`, one each, then pass; the first GET of the `edited`
    issue (for its ETag) answers 502."""
    left = list(faults)
    dropped: list[bool] = []
    fetched: list[bool] = []

    def plan(request: Request) -> Fault:
        if request.method == "POST" and not dropped:
            dropped.append(True)
            return Fault.DROP_BEFORE
        if request.method == "GET" and request.path.endswith("/issues") and left:
            return left.pop(0)
        if request.method == "GET" and request.path.endswith(edited) and not fetched:
            fetched.append(True)
            return Fault.STATUS_502
        return Fault.PASS

    return plan


async def test_a_failed_listing_is_retried_in_place_as_the_server_asked(
    service: Service, tmp_path: Path
) -> None:
    """The look for a lost create fails twice (a 429 with Retry-After, then a 503), and the
    GET before an edit's `If-Match` (sent alone, as to a server without bulk) once: each is
    sent again in place, the listing after the wait the 429 asked for, and no write is charged
    for them: the create is sent twice in all (the lost attempt and the one that lands), the
    edit once."""
    title = "listing-retried"
    held = await fetch_all(service, "/issues")
    edited = held[1]["id"]
    async with through_proxy(service, tmp_path / "cache.db") as (proxy, session):
        # Looked for by listing, as on a server that ignores keys; the cache holds what the
        # module's other tests made, as a client that has pulled does.
        session.features = session.features.replace(idempotency=False)
        session.cache.server.apply_page(Resource.ISSUES, held)
        session.cache.outbox.create(Resource.ISSUES, {"title": title})
        proxy.plan = failing_reads(edited, Fault.LIMITED_RETRY_AFTER, Fault.STATUS_503)
        probes = len(proxy.hops)
        report = await push_outbox(session, backoff=FAST, bulk_creates=False)
        session.cache.outbox.update(Resource.ISSUES, edited, {"description": "edited once"})
        session.features = session.features.replace(bulk=False)
        edit = await push_outbox(session, backoff=FAST)
        create, update = session.cache.outbox.entries((EntryState.DONE,))
        hops = proxy.hops[probes:]
    assert (report.done, report.retried, report.stopped) == (1, 1, None)
    assert (edit.done, edit.retried, edit.stopped) == (1, 0, None)
    assert create.attempts == 2 and len(posts(hops, "/issues")) == 2
    assert update.attempts == 1 and [h.fault for h in hops if edited in h.request.path] == [
        Fault.STATUS_502,
        Fault.PASS,
        Fault.PASS,
    ]
    looks = listings(hops, "/issues")
    assert [hop.fault for hop in looks] == [
        Fault.LIMITED_RETRY_AFTER,
        Fault.STATUS_503,
        Fault.PASS,
    ]
    assert looks[1].arrived - looks[0].arrived >= 1.0  # as long as Retry-After said
    assert await titled(service, title) == 1


async def test_comments_on_many_issues_are_looked_for_with_one_listing(
    service: Service, tmp_path: Path
) -> None:
    """Three comments on three issues, each applied but its answer lost: a server that lists
    all comments at once is asked once, not once per issue, and each comment stays single."""
    targets = [issue["id"] for issue in await fetch_all(service, "/issues")][:3]
    texts = [f"one-look-{n}" for n in range(3)]
    lost: list[bool] = []

    def plan(request: Request) -> Fault:
        if request.method == "POST" and len(lost) < 3:
            lost.append(True)
            return Fault.DROP_AFTER
        return Fault.PASS

    async with through_proxy(service, tmp_path / "cache.db") as (proxy, session):
        assert session.features.comments_list
        # Looked for by listing, as on a server that ignores keys.
        session.features = session.features.replace(idempotency=False)
        for target, text in zip(targets, texts, strict=True):
            session.cache.outbox.create(Resource.COMMENTS, {"issue_id": target, "body": text})
        proxy.plan, probes = plan, len(proxy.hops)
        report = await push_outbox(session, backoff=FAST)
        hops = proxy.hops[probes:]
    assert (report.done, report.reconciled, report.stopped) == (3, 3, None)
    [look] = listings(hops, "/comments")
    assert "issue_id" not in look.request.target
    assert len(posts(hops, "/comments")) == 3
    for target, text in zip(targets, texts, strict=True):
        assert (await bodies(service, target)).count(text) == 1
