"""A write the server refuses, against the reference service in process: it is never shown as
the record's value, never the base of a later write, and our own writes that landed are never
"theirs" in a conflict (issue 14, defect 6)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from no_wait import QUICK
from push_support import Wire, load_issues, server_issues, session_for, without_bulk

from cache import EntryState, Resource, SyncState
from server.app import create_app
from server.seed import seed_workspace
from sync.push import push_outbox
from sync.session import SyncSession

WINDOW = 1.0


@asynccontextmanager
async def serve(tmp_path: Path, *, bulk: bool = True) -> AsyncIterator[tuple[Wire, SyncSession]]:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 6, plan="enterprise")
    app = create_app(db, window_seconds=WINDOW)
    wire = Wire(app if bulk else without_bulk(app))
    async with session_for(
        key, tmp_path / "cache.db", transport=wire, window_seconds=WINDOW
    ) as session:
        await load_issues(session)
        wire.reset()
        yield wire, session


def unassigned_and_a_user(issues: list[dict[str, Any]]) -> tuple[str, str]:
    issue = next(i for i in issues if i["assignee"] is None)
    user = next(i["assignee"] for i in issues if i["assignee"] is not None)
    return issue["id"], user


def shown(session: SyncSession, issue_id: str) -> dict[str, Any]:
    detail = session.cache.reads.issue(issue_id)
    assert detail is not None
    return {**detail.record, "sync_state": detail.issue.sync_state}


both_paths = pytest.mark.parametrize("bulk", [True, False], ids=["bulk-listing", "single-if-match"])


@both_paths
async def test_a_refused_assignee_is_not_shown_and_the_next_edits_land(
    tmp_path: Path, bulk: bool
) -> None:
    """`issues edit '#50' --assignee me` (refused), then `--assignee <user id>`, then a third
    edit: the second and third land with no conflict, and the screen shows the server."""
    async with serve(tmp_path, bulk=bulk) as (_wire, session):
        cache = session.cache
        issue_id, user = unassigned_and_a_user(await server_issues(session))
        cache.outbox.update(Resource.ISSUES, issue_id, {"assignee": "me"})
        report = await push_outbox(session, backoff=QUICK)
        assert report.failed == 1
        after_refusal = shown(session, issue_id)
        assert after_refusal["assignee"] is None, "the server's value, not the refused one"
        assert after_refusal["sync_state"] is SyncState.FAILED

        cache.outbox.update(Resource.ISSUES, issue_id, {"assignee": user})
        report = await push_outbox(session, backoff=QUICK)
        assert (report.done, report.conflicts) == (1, 0)
        assert (await session.client.get_issue(issue_id)).value.raw["assignee"] == user
        assert shown(session, issue_id)["assignee"] == user

        cache.outbox.update(Resource.ISSUES, issue_id, {"assignee": None, "priority": "urgent"})
        report = await push_outbox(session, backoff=QUICK)
        assert (report.done, report.conflicts) == (1, 0)
        assert cache.outbox.conflicts() == []
        server = (await session.client.get_issue(issue_id)).value.raw
        assert (server["assignee"], server["priority"]) == (None, "urgent")
        assert shown(session, issue_id)["assignee"] is None
        [failed] = cache.outbox.entries((EntryState.FAILED,))
        assert failed.changes == {"assignee": "me"}, "the refused write stays, for the panel"


@both_paths
async def test_an_edit_typed_while_the_refused_write_was_in_flight_lands(
    tmp_path: Path, bulk: bool
) -> None:
    """The second edit is queued while the first is on the wire, so it was typed over the
    first's value; the first is refused: the second is checked against the server's value."""
    async with serve(tmp_path, bulk=bulk) as (wire, session):
        cache = session.cache
        issue_id, user = unassigned_and_a_user(await server_issues(session))
        cache.outbox.update(Resource.ISSUES, issue_id, {"assignee": "me"})
        typed: list[str] = []

        async def type_meanwhile(request: httpx.Request) -> None:
            if request.method in ("PATCH", "POST") and not typed:
                typed.append(request.url.path)
                cache.outbox.update(Resource.ISSUES, issue_id, {"assignee": user})

        wire.before = type_meanwhile
        report = await push_outbox(session, backoff=QUICK)
        assert typed, "the edit was typed during the first write's request"
        assert (report.failed, report.done, report.conflicts) == (1, 1, 0)
        assert (await session.client.get_issue(issue_id)).value.raw["assignee"] == user
        assert shown(session, issue_id)["assignee"] == user


@both_paths
async def test_retrying_a_refused_move_after_our_next_move_landed_is_no_conflict(
    tmp_path: Path, bulk: bool
) -> None:
    """Canceled → In progress is refused; the user moves it to Todo (lands), then retries the
    refused move: the server's Todo is our own write, not someone else's change."""
    async with serve(tmp_path, bulk=bulk) as (_wire, session):
        cache = session.cache
        issue_id = (await server_issues(session))[0]["id"]
        await session.client.update_issue(issue_id, {"status": "canceled"})
        await load_issues(session)
        refused = cache.outbox.update(Resource.ISSUES, issue_id, {"status": "in_progress"})
        assert refused is not None
        assert (await push_outbox(session, backoff=QUICK)).failed == 1
        assert shown(session, issue_id)["status"] == "canceled"
        cache.outbox.update(Resource.ISSUES, issue_id, {"status": "todo"})
        assert (await push_outbox(session, backoff=QUICK)).done == 1
        cache.outbox.retry(refused.id)
        assert shown(session, issue_id)["status"] == "in_progress"
        report = await push_outbox(session, backoff=QUICK)
        assert (report.done, report.conflicts) == (1, 0)
        assert (await session.client.get_issue(issue_id)).value.status == "in_progress"
