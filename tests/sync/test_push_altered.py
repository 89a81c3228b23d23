"""A lost create whose record someone else changed or deleted before the client looked (issue 15,
the model's `altered`).

The service applies a create and its answer is lost; before the client reconciles, a colleague
edits the new issue's title, or deletes it. A listing then finds nothing carrying the fields
the create sent. Where the server honours `Idempotency-Key`, the create's fate is asked of the
key, not of the listing: one issue on the server, the entry done and linked to it, nothing
recreated. Where it does not (only the published API), a record made in the attempt's window
that differs from what was sent may be it: the create is kept, `unsure`, naming it, and
nothing is resent.

The service runs in-process; `Wire` loses the create's answer, and its `before` hook lets the
colleague act just before the client's next request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from no_wait import QUICK
from push_support import (
    Wire,
    colleague_write,
    load_issues,
    server_issues,
    session_for,
    spec_only,
    without_idempotency,
)

from cache import EntryState, OutboxEntry, Resource
from server.app import create_app
from server.seed import seed_workspace
from sync.push import PushReport, push_outbox
from sync.session import SyncSession

WINDOW = 1.0
TITLE = "Quarterly plan"
EDITED = "Quarterly plan (edited by a colleague)"
TYPED = "Typed while the push ran"
SEEDED = 2


@dataclass
class Setup:
    wire: Wire
    session: SyncSession
    key: str

    async def colleague(self, method: str, path: str, body: dict[str, Any] | None = None) -> None:
        """A write straight to the service (not through the client's wire)."""
        await colleague_write(self.wire, self.key, method, path, body)


@asynccontextmanager
async def serve(tmp_path: Path, *, spec: bool = False, keys: bool = True) -> AsyncIterator[Setup]:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", SEEDED, plan="enterprise")
    app = create_app(db, window_seconds=WINDOW)
    wire = Wire(spec_only(app) if spec else app if keys else without_idempotency(app))
    async with session_for(
        key, tmp_path / "cache.db", transport=wire, window_seconds=WINDOW
    ) as session:
        await load_issues(session)
        wire.reset()
        yield Setup(wire, session, key)


def lose_then(
    setup: Setup,
    suffix: str,
    act: Callable[[str], Any],
    meanwhile: Callable[[], object] | None = None,
) -> None:
    """Lose the answer of the first `POST ...suffix`; just before the next request of any
    kind, `act(new issue id)` runs: the colleague changes the issue the lost create made.
    `meanwhile` runs as that POST leaves: the user queuing another write."""
    made: list[str] = []

    def lose(request: httpx.Request) -> bool:
        if request.method == "POST" and request.url.path.endswith(suffix) and not made:
            made.append("pending")
            return True
        return False

    async def before(request: httpx.Request) -> None:
        if not made and meanwhile is not None and request.url.path.endswith(suffix):
            meanwhile()
        if made == ["pending"] and setup.wire.lost == 1:
            made.append("acted")
            [issue] = [i for i in await _all(setup) if i["title"] == TITLE]
            await act(issue["id"])

    setup.wire.lose, setup.wire.before = lose, before


async def _all(setup: Setup) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(setup.wire.app),
        base_url="http://tracker.test/v1",
        headers={"Authorization": f"Bearer {setup.key}"},
    ) as api:
        answer = await api.get("/issues", params={"per_page": 100})
    return list(answer.json()["data"])


def the_entry(session: SyncSession, local: str) -> OutboxEntry:
    [entry] = [e for e in session.cache.outbox.entries() if e.record_id == local]
    return entry


async def push(session: SyncSession, *, bulk_creates: bool = False) -> PushReport:
    return await push_outbox(session, backoff=QUICK, bulk_creates=bulk_creates)


async def _edited_by_a_colleague(tmp_path: Path, suffix: str, bulk_creates: bool) -> None:
    """With bulk creates, the user also types a new issue meanwhile: the lost create's next
    bulk request holds it too, under another key, so only the first key can find the first."""
    async with serve(tmp_path) as setup:
        session = setup.session
        local = session.cache.outbox.create(Resource.ISSUES, {"title": TITLE, "priority": "high"})

        async def edit(issue_id: str) -> None:
            await setup.colleague("PATCH", f"/issues/{issue_id}", {"title": EDITED})

        def typed() -> None:
            session.cache.outbox.create(Resource.ISSUES, {"title": TYPED})

        lose_then(setup, suffix, edit, typed if bulk_creates else None)
        report = await push(session, bulk_creates=bulk_creates)
        on_server = await server_issues(session)
        entry = the_entry(session, local)
        linked = session.cache.outbox.resolve_id(local)
        kept = session.cache.server.server_record(Resource.ISSUES, linked)
    assert setup.wire.lost == 1
    typed = [i for i in on_server if i["title"] == TYPED]
    assert len(on_server) - len(typed) == SEEDED + 1  # nothing sent twice
    assert len(typed) == (1 if bulk_creates else 0)
    [made] = [i for i in on_server if i["title"] == EDITED]
    assert entry.state is EntryState.DONE and linked == made["id"]
    assert (report.unsure, report.unknown, report.remaining) == (0, 0, 0)
    assert kept is not None and kept["title"] == EDITED  # the cache holds what the server holds


async def test_a_lost_create_a_colleague_retitled_is_found_by_its_key_not_sent_again(
    tmp_path: Path,
) -> None:
    await _edited_by_a_colleague(tmp_path, "/v1/issues", bulk_creates=False)


async def test_a_lost_bulk_create_a_colleague_retitled_is_found_by_its_key_not_sent_again(
    tmp_path: Path,
) -> None:
    await _edited_by_a_colleague(tmp_path, "/v1/issues/bulk", bulk_creates=True)


async def test_a_lost_create_a_colleague_deleted_is_done_and_not_made_again(
    tmp_path: Path,
) -> None:
    async with serve(tmp_path) as setup:
        session = setup.session
        local = session.cache.outbox.create(Resource.ISSUES, {"title": TITLE})

        async def delete(issue_id: str) -> None:
            await setup.colleague("DELETE", f"/issues/{issue_id}")

        lose_then(setup, "/v1/issues", delete)
        report = await push(session)
        on_server = await server_issues(session)
        entry = the_entry(session, local)
        linked = session.cache.outbox.resolve_id(local)
        kept = session.cache.server.server_record(Resource.ISSUES, linked)
    assert setup.wire.lost == 1
    assert len(on_server) == SEEDED and not [i for i in on_server if i["title"] == TITLE]
    assert entry.state is EntryState.DONE and linked.startswith("iss_")
    assert (report.unsure, report.unknown, report.remaining) == (0, 0, 0)
    assert kept is None  # gone here as it is there


async def test_a_lost_create_a_colleague_retitled_on_a_spec_only_server_is_unsure(
    tmp_path: Path,
) -> None:
    async with serve(tmp_path, spec=True) as setup:
        session = setup.session
        local = session.cache.outbox.create(Resource.ISSUES, {"title": TITLE})

        async def edit(issue_id: str) -> None:
            await setup.colleague("PATCH", f"/issues/{issue_id}", {"title": EDITED})

        lose_then(setup, "/v1/issues", edit)
        report = await push(session)
        on_server = await server_issues(session)
        entry = the_entry(session, local)
        suspects = session.cache.outbox.suspects(entry.id)
    assert setup.wire.lost == 1
    assert len(on_server) == SEEDED + 1  # nothing resent
    [made] = [i for i in on_server if i["title"] == EDITED]
    assert entry.state is EntryState.UNSURE
    assert [record["id"] for record in suspects] == [made["id"]]
    assert entry.last_error is not None and f"#{made['number']}" in entry.last_error
    assert (report.unsure, report.sent) == (1, 0)


async def test_a_lost_create_a_colleague_deleted_is_unsure_by_its_tombstone_without_keys(
    tmp_path: Path,
) -> None:
    """A server with tombstones that ignores keys: the deleted record is seen deleted in the
    attempt's window, so the create is kept, unsure, rather than made again."""
    async with serve(tmp_path, keys=False) as setup:
        session = setup.session
        assert session.features.tombstones is not False
        local = session.cache.outbox.create(Resource.ISSUES, {"title": TITLE})
        deleted: list[str] = []

        async def delete(issue_id: str) -> None:
            deleted.append(issue_id)
            await setup.colleague("DELETE", f"/issues/{issue_id}")

        lose_then(setup, "/v1/issues", delete)
        report = await push(session)
        on_server = await server_issues(session)
        entry = the_entry(session, local)
        suspects = session.cache.outbox.suspects(entry.id)
    assert setup.wire.lost == 1
    assert len(on_server) == SEEDED  # not made again
    assert entry.state is EntryState.UNSURE
    assert [record["id"] for record in suspects] == deleted
    assert (report.unsure, report.sent) == (1, 0)


async def test_a_create_dropped_before_the_service_is_sent_again_once_a_known_key_vouches(
    tmp_path: Path,
) -> None:
    """Dropped before the service saw it, on a server not yet known to honour keys, while a
    colleague makes an unrelated issue: the key of a create the server answered earlier is
    held, so the server honours keys, and the dropped one, whose key is not, was never
    applied. It is sent again, not kept unsure over the colleague's issue."""
    async with serve(tmp_path) as setup:
        session = setup.session
        session.cache.outbox.create(Resource.ISSUES, {"title": "answered"})
        await push(session)
        assert session.features.idempotency is None
        local = session.cache.outbox.create(Resource.ISSUES, {"title": TITLE})
        dropped: list[bool] = []

        def drop(request: httpx.Request) -> bool:
            first = not dropped and request.method == "POST"
            if first and request.url.path.endswith("/v1/issues"):
                dropped.append(True)
                return True
            return False

        async def before(request: httpx.Request) -> None:
            if dropped == [True]:
                dropped.append(False)
                await setup.colleague("POST", "/issues", {"title": "Something else"})

        setup.wire.drop, setup.wire.before = drop, before
        report = await push(session)
        on_server = await server_issues(session)
        entry = the_entry(session, local)
        linked = session.cache.outbox.resolve_id(local)
        learned = session.features.idempotency
    assert setup.wire.dropped == 1
    assert [i["id"] for i in on_server if i["title"] == TITLE] == [linked]
    assert entry.state is EntryState.DONE and (report.unsure, report.done) == (0, 1)
    assert learned is True
