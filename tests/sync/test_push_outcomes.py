"""Exactly once when answers are lost (with and without Idempotency-Key support), and per-field
conflicts: same field on both sides is the user's call, different fields merge."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from no_wait import QUICK
from push_support import (
    BASE_URL,
    Wire,
    load_issues,
    server_issues,
    session_for,
    without_bulk,
    without_idempotency,
)

from accounts.secret import Secret
from cache import EntryState, Resolution, Resource
from server.app import create_app
from server.seed import seed_workspace
from sync.client import ApiClient
from sync.push import StopReason, push_outbox
from sync.session import SyncSession

WINDOW = 1.0


def _variant(bulk: bool, idempotency: bool) -> Callable[[Any], Any]:
    def build(app: Any) -> Any:
        if not bulk:
            app = without_bulk(app)
        if not idempotency:
            app = without_idempotency(app)
        return app

    return build


@asynccontextmanager
async def serve(
    tmp_path: Path,
    *,
    issues: int = 0,
    bulk: bool = True,
    idempotency: bool = True,
    lose: Callable[[httpx.Request], bool] | None = None,
) -> AsyncIterator[tuple[Wire, SyncSession, str]]:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", issues, plan="enterprise")
    wire = Wire(_variant(bulk, idempotency)(create_app(db, window_seconds=WINDOW)))
    async with session_for(
        key, tmp_path / "cache.db", transport=wire, window_seconds=WINDOW
    ) as session:
        await load_issues(session)
        wire.reset()
        wire.lose = lose
        yield wire, session, key


def first(method: str, suffix: str) -> Callable[[httpx.Request], bool]:
    """Lose the answer to the first such request only."""
    seen: list[bool] = []

    def rule(request: httpx.Request) -> bool:
        if request.method == method and request.url.path.endswith(suffix) and not seen:
            seen.append(True)
            return True
        return False

    return rule


@pytest.mark.parametrize("idempotency", [True, False], ids=["with-keys", "without-keys"])
async def test_a_lost_create_answer_creates_nothing_new(tmp_path: Path, idempotency: bool) -> None:
    rule = first("POST", "/v1/issues")
    async with serve(tmp_path, idempotency=idempotency, lose=rule) as (wire, session, _key):
        session.cache.outbox.create(Resource.ISSUES, {"title": "only once", "priority": "high"})
        report = await push_outbox(session, backoff=QUICK, bulk_creates=False)
        assert wire.lost == 1 and report.remaining == 0
        assert report.reconciled == 1
        titles = [i["title"] for i in await server_issues(session)]
        assert titles.count("only once") == 1


@pytest.mark.parametrize("idempotency", [True, False], ids=["with-keys", "without-keys"])
async def test_a_lost_bulk_answer_creates_nothing_new(tmp_path: Path, idempotency: bool) -> None:
    rule = first("POST", "/issues/bulk")
    async with serve(tmp_path, idempotency=idempotency, lose=rule) as (wire, session, _key):
        for n in range(7):
            session.cache.outbox.create(
                Resource.ISSUES, {"title": "twin"} if n < 2 else {"title": f"bulk {n}"}
            )
        report = await push_outbox(session, backoff=QUICK)
        assert wire.lost == 1 and report.remaining == 0
        titles = [i["title"] for i in await server_issues(session)]
        assert titles.count("twin") == 2
        assert sorted(t for t in titles if t.startswith("bulk")) == [
            f"bulk {n}" for n in range(2, 7)
        ]


async def test_a_lost_comment_answer_creates_nothing_new(tmp_path: Path) -> None:
    rule = first("POST", "/v1/comments")
    async with serve(tmp_path, issues=1, idempotency=False, lose=rule) as (_wire, session, _key):
        [issue] = await server_issues(session)
        session.cache.outbox.create(Resource.COMMENTS, {"issue_id": issue["id"], "body": "once"})
        await push_outbox(session, backoff=QUICK)
        comments = await session.client.list_comments(issue["id"])
        assert [c.raw["body"] for c in comments.value.data].count("once") == 1


async def test_a_run_killed_mid_request_is_reconciled_next_time(tmp_path: Path) -> None:
    async with serve(tmp_path, idempotency=False) as (_wire, session, _key):
        local = session.cache.outbox.create(Resource.ISSUES, {"title": "sent before the crash"})
        [entry] = session.cache.push.sendable()
        session.cache.push.mark_sending(entry.id)
        await session.client.create_issue({"title": "sent before the crash"})
        report = await push_outbox(session, backoff=QUICK)
        assert report.reconciled == 1
        titles = [i["title"] for i in await server_issues(session)]
        assert titles.count("sent before the crash") == 1
        assert session.cache.outbox.resolve_id(local).startswith("iss_")


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk-listing", "single-if-match"])
async def test_both_sides_editing_one_field_is_a_conflict(tmp_path: Path, bulk: bool) -> None:
    async with serve(tmp_path, issues=2, bulk=bulk) as (_wire, session, _key):
        issue_id = (await server_issues(session))[0]["id"]
        session.cache.outbox.update(Resource.ISSUES, issue_id, {"title": "mine"})
        await session.client.update_issue(issue_id, {"title": "theirs"})
        report = await push_outbox(session, backoff=QUICK)
        assert report.conflicts == 1
        [conflict] = session.cache.outbox.conflicts()
        assert (conflict.field, conflict.mine, conflict.theirs) == ("title", "mine", "theirs")
        assert (await session.client.get_issue(issue_id)).value.title == "theirs"
        session.cache.outbox.resolve_conflict(conflict.id, Resolution.MINE)
        await push_outbox(session, backoff=QUICK)
        assert (await session.client.get_issue(issue_id)).value.title == "mine"


async def test_taking_theirs_sends_nothing_for_that_field(tmp_path: Path) -> None:
    async with serve(tmp_path, issues=2) as (_wire, session, _key):
        issue_id = (await server_issues(session))[0]["id"]
        session.cache.outbox.update(Resource.ISSUES, issue_id, {"title": "mine"})
        await session.client.update_issue(issue_id, {"title": "theirs"})
        await push_outbox(session, backoff=QUICK)
        [conflict] = session.cache.outbox.conflicts()
        session.cache.outbox.resolve_conflict(conflict.id, Resolution.THEIRS)
        report = await push_outbox(session, backoff=QUICK)
        assert report.done == 0 and session.cache.outbox.entries((EntryState.PENDING,)) == []
        assert (await session.client.get_issue(issue_id)).value.title == "theirs"


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk-listing", "single-if-match"])
async def test_different_fields_merge(tmp_path: Path, bulk: bool) -> None:
    async with serve(tmp_path, issues=2, bulk=bulk) as (_wire, session, _key):
        issue_id = (await server_issues(session))[0]["id"]
        session.cache.outbox.update(Resource.ISSUES, issue_id, {"title": "my title"})
        await session.client.update_issue(issue_id, {"description": "their words"})
        report = await push_outbox(session, backoff=QUICK)
        assert report.conflicts == 0 and report.done == 1
        issue = (await session.client.get_issue(issue_id)).value
        assert (issue.title, issue.description) == ("my title", "their words")


MODES = {
    "bulk-listing": (True, True),
    "single-if-match": (False, True),
    "single-listing": (False, False),
}


@pytest.mark.parametrize("mode", list(MODES))
async def test_a_partly_conflicting_edit_sends_the_clean_fields_and_parks_the_clash(
    tmp_path: Path, mode: str
) -> None:
    bulk, preconditions = MODES[mode]
    async with serve(tmp_path, issues=2, bulk=bulk) as (_wire, session, _key):
        before = (await server_issues(session))[0]
        issue_id = before["id"]
        priority = "low" if before["priority"] == "urgent" else "urgent"
        session.cache.outbox.update(
            Resource.ISSUES, issue_id, {"title": "mine", "priority": priority}
        )
        await session.client.update_issue(
            issue_id, {"title": "theirs", "description": "their words"}
        )
        report = await push_outbox(session, backoff=QUICK, preconditions=preconditions)
        assert (report.conflicts, report.done, report.remaining) == (1, 1, 0)
        issue = (await session.client.get_issue(issue_id)).value
        assert (issue.title, issue.priority, issue.description) == (
            "theirs",
            priority,
            "their words",
        )
        [conflict] = session.cache.outbox.conflicts()
        assert (conflict.field, conflict.mine, conflict.theirs) == ("title", "mine", "theirs")
        [parked] = session.cache.outbox.entries((EntryState.CONFLICT,))
        assert parked.changes == {"title": "mine"} and parked.id == conflict.entry_id
        session.cache.outbox.resolve_conflict(conflict.id, Resolution.MINE)
        report = await push_outbox(session, backoff=QUICK, preconditions=preconditions)
        assert (report.conflicts, report.done, report.remaining) == (0, 1, 0)
        issue = (await session.client.get_issue(issue_id)).value
        assert (issue.title, issue.priority, issue.description) == ("mine", priority, "their words")


async def test_the_split_off_fields_survive_a_412_and_go_out_once(tmp_path: Path) -> None:
    async with serve(tmp_path, issues=2, bulk=False) as (wire, session, key):
        before = (await server_issues(session))[0]
        issue_id = before["id"]
        priority = "low" if before["priority"] == "urgent" else "urgent"
        session.cache.outbox.update(
            Resource.ISSUES, issue_id, {"title": "mine", "priority": priority}
        )
        await session.client.update_issue(issue_id, {"title": "theirs"})
        wire.reset()
        sneaked: list[str] = []

        async with ApiClient(
            BASE_URL, Secret(key), transport=httpx.ASGITransport(app=wire.app)
        ) as other:

            async def sneak(request: httpx.Request) -> None:
                if request.method == "PATCH" and not sneaked:
                    sneaked.append(request.url.path)
                    await other.update_issue(issue_id, {"description": "sneaked in"})

            wire.before = sneak
            report = await push_outbox(session, backoff=QUICK)
        assert sneaked and (report.conflicts, report.done, report.remaining) == (1, 1, 0)
        assert wire.count("PATCH", issue_id) == 2 and wire.statuses.count(412) == 1
        issue = (await session.client.get_issue(issue_id)).value
        assert (issue.title, issue.priority, issue.description) == (
            "theirs",
            priority,
            "sneaked in",
        )
        assert [c.field for c in session.cache.outbox.conflicts()] == ["title"]


async def test_a_write_between_check_and_patch_is_caught_by_if_match(tmp_path: Path) -> None:
    async with serve(tmp_path, issues=2, bulk=False) as (wire, session, key):
        issue_id = (await server_issues(session))[0]["id"]
        session.cache.outbox.update(Resource.ISSUES, issue_id, {"title": "mine"})
        sneaked: list[str] = []

        async with ApiClient(
            BASE_URL, Secret(key), transport=httpx.ASGITransport(app=wire.app)
        ) as other:

            async def sneak(request: httpx.Request) -> None:
                if request.method == "PATCH" and not sneaked:
                    sneaked.append(request.url.path)
                    await other.update_issue(issue_id, {"title": "theirs"})

            wire.before = sneak
            report = await push_outbox(session, backoff=QUICK)
        assert len(sneaked) == 1 and report.conflicts == 1
        assert (await session.client.get_issue(issue_id)).value.title == "theirs"


async def test_a_server_that_never_answers_readably_stops_the_run(tmp_path: Path) -> None:
    def every_patch(request: httpx.Request) -> bool:
        return request.method == "PATCH"

    async with serve(tmp_path, issues=2, bulk=False, lose=every_patch) as (wire, session, _key):
        issue_id = (await server_issues(session))[0]["id"]
        session.cache.outbox.update(
            Resource.ISSUES, issue_id, {"title": "applied, never confirmed"}
        )
        report = await push_outbox(session, backoff=QUICK)
        assert report.stopped is not None and "no readable answer" in report.stopped.message
        assert report.stopped.reason is StopReason.NO_ANSWER
        assert wire.lost == QUICK.tries and report.remaining == 1
        assert (await session.client.get_issue(issue_id)).value.title == "applied, never confirmed"
