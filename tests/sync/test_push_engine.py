"""The push engine against the reference service in process: request counts, temp ids, bulk,
the server variant without bulk, outcomes and conflicts."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from no_wait import QUICK
from push_support import Wire, load_issues, server_issues, session_for, without_bulk

from cache import SETTLED_RETENTION, EntryState, Operation, Resource
from server.app import create_app
from server.keys import create_key
from server.seed import seed_workspace
from sync.push import Backoff, StopReason, push_outbox
from sync.session import SyncSession


@dataclass
class Service:
    wire: Wire
    session: SyncSession
    key: str
    db: Path


WINDOW = 1.0
"""The client's limiter runs the service's minute in a second (docs/service.md#window-scaling), so
no test waits long for a slot."""


@asynccontextmanager
async def serve(
    tmp_path: Path,
    *,
    issues: int = 0,
    variant: Callable[[Any], Any] | None = None,
    lose: Callable[[httpx.Request], bool] | None = None,
    permissions: list[str] | None = None,
    plan: str = "enterprise",
) -> AsyncIterator[Service]:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", issues, plan=plan)
    if permissions is not None:
        key = create_key(db, "acme", "limited", permissions)
    app = create_app(db, window_seconds=WINDOW)
    wire = Wire(variant(app) if variant else app, lose=lose)
    async with session_for(
        key, tmp_path / "cache.db", transport=wire, window_seconds=WINDOW
    ) as session:
        await load_issues(session)
        wire.reset()
        yield Service(wire, session, key, db)


async def test_creates_land_once_and_dependents_get_the_server_id(tmp_path: Path) -> None:
    async with serve(tmp_path) as svc:
        cache = svc.session.cache
        local = cache.outbox.create(Resource.ISSUES, {"title": "Offline bug"})
        cache.outbox.update(Resource.ISSUES, local, {"priority": "high"})
        cache.outbox.create(Resource.COMMENTS, {"issue_id": local, "body": "seen offline"})
        report = await push_outbox(svc.session, backoff=QUICK)
        assert report.stopped is None and report.remaining == 0
        issues = [i for i in await server_issues(svc.session) if i["title"] == "Offline bug"]
        assert len(issues) == 1 and issues[0]["priority"] == "high"
        comments = await svc.session.client.list_comments(issues[0]["id"])
        assert [c.raw["body"] for c in comments.value.data] == ["seen offline"]
        assert cache.outbox.resolve_id(local) == issues[0]["id"]


async def test_a_hundred_creates_drain_under_the_create_limit_without_429s(
    tmp_path: Path,
) -> None:
    async with serve(tmp_path, plan="free") as svc:
        for n in range(100):
            svc.session.cache.outbox.create(Resource.ISSUES, {"title": f"created {n}"})
        report = await push_outbox(svc.session, backoff=QUICK, bulk_creates=False)
        assert report.done == 100 and report.remaining == 0
        assert svc.wire.count("POST", "/issues") == 100
        assert svc.wire.statuses.count(429) == 0
        titles = [i["title"] for i in await server_issues(svc.session)]
        assert sorted(titles) == sorted(f"created {n}" for n in range(100))


async def test_a_thousand_updates_go_out_in_ten_bulk_requests(tmp_path: Path) -> None:
    async with serve(tmp_path, issues=1000) as svc:
        cache = svc.session.cache
        ids = [i["id"] for i in await load_issues(svc.session)]
        svc.wire.reset()
        cache.outbox.update_many(Resource.ISSUES, ids, {"title": "renamed in bulk"})
        report = await push_outbox(svc.session, backoff=QUICK)
        assert report.done == 1000 and report.remaining == 0
        assert svc.wire.count("POST", "/issues/bulk") == 10
        assert svc.wire.count("PATCH", "") == 0
        titles = {i["id"]: i["title"] for i in await server_issues(svc.session)}
        assert all(titles[i] == "renamed in bulk" for i in ids)


@pytest.mark.parametrize("preconditions", [True, False], ids=["if-match", "listing"])
async def test_a_server_without_bulk_gets_single_patches(
    tmp_path: Path, preconditions: bool
) -> None:
    async with serve(tmp_path, issues=30, variant=without_bulk) as svc:
        cache = svc.session.cache
        ids = [i["id"] for i in await load_issues(svc.session)][:25]
        svc.wire.reset()
        cache.outbox.update_many(Resource.ISSUES, ids, {"title": "one by one"})
        report = await push_outbox(svc.session, backoff=QUICK, preconditions=preconditions)
        assert report.done == 25 and report.remaining == 0
        assert svc.wire.count("PATCH", "") == 25
        assert svc.wire.count("POST", "/issues/bulk") <= 1
        assert svc.session.features.bulk is False
        record_gets = sum(1 for m, p in svc.wire.requests if m == "GET" and "/issues/" in p)
        assert record_gets == (25 if preconditions else 0)


async def test_creates_go_in_bulk_when_allowed_and_singly_when_not(tmp_path: Path) -> None:
    async with serve(tmp_path) as svc:
        for n in range(40):
            svc.session.cache.outbox.create(Resource.ISSUES, {"title": f"bulk made {n}"})
        await push_outbox(svc.session, backoff=QUICK)
        assert svc.wire.count("POST", "/issues/bulk") == 1
        assert svc.wire.count("POST", "/issues") == 0
        svc.wire.reset()
        for n in range(5):
            svc.session.cache.outbox.create(Resource.ISSUES, {"title": f"single made {n}"})
        await push_outbox(svc.session, backoff=QUICK, bulk_creates=False)
        assert svc.wire.count("POST", "/issues") == 5
        titles = [i["title"] for i in await server_issues(svc.session)]
        assert sorted(titles) == sorted(
            [f"bulk made {n}" for n in range(40)] + [f"single made {n}" for n in range(5)]
        )


async def test_delete_of_a_record_already_gone_is_success(tmp_path: Path) -> None:
    async with serve(tmp_path, issues=3) as svc:
        ids = [i["id"] for i in await load_issues(svc.session)]
        await svc.session.client.delete_issue(ids[0])
        svc.session.cache.outbox.delete(Resource.ISSUES, ids[0])
        report = await push_outbox(svc.session, backoff=QUICK)
        assert report.done == 1 and report.failed == 0
        assert svc.session.cache.outbox.entries((EntryState.FAILED,)) == []


async def test_edit_of_a_record_gone_fails_with_that_message(tmp_path: Path) -> None:
    async with serve(tmp_path, issues=3, variant=without_bulk) as svc:
        ids = [i["id"] for i in await load_issues(svc.session)]
        svc.session.cache.outbox.update(Resource.ISSUES, ids[0], {"title": "too late"})
        await svc.session.client.delete_issue(ids[0])
        report = await push_outbox(svc.session, backoff=QUICK)
        assert report.failed == 1
        [failed] = svc.session.cache.outbox.entries((EntryState.FAILED,))
        assert failed.last_error is not None and "gone" in failed.last_error


async def test_rejected_write_fails_names_the_moves_and_the_queue_goes_on(
    tmp_path: Path,
) -> None:
    async with serve(tmp_path, issues=3) as svc:
        ids = [i["id"] for i in await load_issues(svc.session)]
        await svc.session.client.update_issue(ids[0], {"status": "canceled"})
        await load_issues(svc.session)
        svc.session.cache.outbox.update(Resource.ISSUES, ids[0], {"status": "done"})
        svc.session.cache.outbox.update(Resource.ISSUES, ids[1], {"title": "still goes"})
        report = await push_outbox(svc.session, backoff=QUICK)
        assert report.failed == 1 and report.done == 1
        [failed] = svc.session.cache.outbox.entries((EntryState.FAILED,))
        assert failed.last_error is not None
        assert "from canceled an issue can move to: todo" in failed.last_error
        assert report.messages == [f"issues {ids[0]}: {failed.last_error}"]
        assert report.sent == 2
        assert (await svc.session.client.get_issue(ids[1])).value.title == "still goes"


@pytest.mark.parametrize("variant", [None, without_bulk], ids=["bulk", "single"])
async def test_status_moves_typed_before_the_first_was_sent_all_land(
    tmp_path: Path, variant: Callable[[Any], Any] | None
) -> None:
    """In review -> canceled -> todo, typed offline: in review -> todo alone is refused."""
    async with serve(tmp_path, issues=3, variant=variant) as svc:
        ids = [i["id"] for i in await load_issues(svc.session)]
        for status in ("in_progress", "in_review"):
            await svc.session.client.update_issue(ids[0], {"status": status})
        await load_issues(svc.session)
        for status in ("canceled", "todo"):
            svc.session.cache.outbox.update(Resource.ISSUES, ids[0], {"status": status})
        report = await push_outbox(svc.session, backoff=QUICK)
        assert (report.done, report.failed) == (2, 0), report.messages
        assert (await svc.session.client.get_issue(ids[0])).value.status == "todo"


async def test_a_key_without_write_permission_stops_the_queue(tmp_path: Path) -> None:
    async with serve(tmp_path, issues=2, permissions=["issues:read"]) as svc:
        svc.session.cache.outbox.create(Resource.ISSUES, {"title": "a"})
        svc.session.cache.outbox.create(Resource.ISSUES, {"title": "b"})
        report = await push_outbox(svc.session, backoff=QUICK, bulk_creates=False)
        assert report.stopped is not None and "issues:write" in report.stopped.message
        assert report.stopped_for(StopReason.KEY_REFUSED)
        pending = svc.session.cache.outbox.entries((EntryState.PENDING,))
        assert [e.operation for e in pending] == [Operation.CREATE, Operation.CREATE]


async def test_server_errors_are_retried_with_backoff(tmp_path: Path) -> None:
    failures = iter([True, True])
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    def flaky(app: Any) -> Any:
        async def variant(scope: Any, receive: Any, send: Any) -> None:
            if (
                scope.get("path") == "/v1/issues"
                and scope["method"] == "POST"
                and next(failures, False)
            ):
                await send({"type": "http.response.start", "status": 503, "headers": []})
                await send({"type": "http.response.body", "body": b"busy"})
                return
            await app(scope, receive, send)

        return variant

    async with serve(tmp_path, variant=flaky) as svc:
        svc.session.cache.outbox.create(Resource.ISSUES, {"title": "eventually"})
        report = await push_outbox(svc.session, backoff=Backoff(sleep=record), bulk_creates=False)
        assert report.done == 1 and report.retried == 2
        assert len(waits) == 2 and waits[1] > waits[0] / 2
        titles = [i["title"] for i in await server_issues(svc.session)]
        assert titles.count("eventually") == 1


async def test_a_429_waits_as_told_and_sends_again(tmp_path: Path) -> None:
    refused: list[bool] = []

    def busy_once(app: Any) -> Any:
        async def variant(scope: Any, receive: Any, send: Any) -> None:
            creating = scope.get("path") == "/v1/issues" and scope.get("method") == "POST"
            if creating and not refused:
                refused.append(True)
                body = b'{"error": {"code": "rate_limit_exceeded", "message": "Slow down.",'
                body += b' "retry_after": 1}}'
                headers = [(b"retry-after", b"1"), (b"content-type", b"application/json")]
                await send({"type": "http.response.start", "status": 429, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
            await app(scope, receive, send)

        return variant

    async with serve(tmp_path, variant=busy_once) as svc:
        svc.session.cache.outbox.create(Resource.ISSUES, {"title": "after the wait"})
        report = await push_outbox(svc.session, backoff=QUICK, bulk_creates=False)
        assert report.done == 1 and report.retried == 1
        assert svc.wire.count("POST", "/issues") == 2 and svc.wire.statuses.count(429) == 1
        titles = [i["title"] for i in await server_issues(svc.session)]
        assert titles.count("after the wait") == 1


def outbox_rows(path: Path) -> dict[int, str]:
    with closing(sqlite3.connect(path)) as conn:
        return {int(row[0]): str(row[1]) for row in conn.execute("SELECT id, state FROM outbox")}


async def test_a_push_forgets_entries_sent_more_than_the_retention_ago(tmp_path: Path) -> None:
    """Settled entries were kept forever (`prune_outbox` was never called)."""
    async with serve(tmp_path, issues=2) as svc:
        cache = svc.session.cache
        first, second = [i["id"] for i in await load_issues(svc.session)]
        old = cache.outbox.update(Resource.ISSUES, first, {"title": "Sent long ago"})
        recent = cache.outbox.update(Resource.ISSUES, second, {"title": "Sent today"})
        assert old is not None and recent is not None
        await push_outbox(svc.session, backoff=QUICK)
        assert outbox_rows(cache.path) == {old.id: "done", recent.id: "done"}
        with closing(sqlite3.connect(cache.path)) as conn, conn:
            aged = SETTLED_RETENTION + 3600
            conn.execute(
                "UPDATE outbox SET updated_at = updated_at - ? WHERE id = ?", (aged, old.id)
            )
        waiting = cache.outbox.update(Resource.ISSUES, first, {"title": "Not sent yet"})
        assert waiting is not None
        report = await push_outbox(svc.session, backoff=QUICK)
        assert report.done == 1
        assert outbox_rows(cache.path) == {recent.id: "done", waiting.id: "done"}
