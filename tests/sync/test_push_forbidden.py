"""A 403 on a write: the key's refusal stops the run and keeps the writes; one record's refusal
(another author's comment: docs/api.md#permissions) fails that entry and the queue goes on.

Against the reference service in process, as it is (`/me`, 403s naming the permission), and as a
server that has no `/me` and words every 403 "Forbidden.", where only what the run itself saw
can tell the two apart (`sync.push.forbidden`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from no_wait import QUICK
from push_support import (
    BASE_URL,
    Receive,
    Scope,
    Send,
    Wire,
    load_issues,
    session_for,
    without_bulk,
    without_me,
)

from cache import EntryState, OutboxEntry, Resource
from server.app import create_app
from server.keys import create_key
from server.models import PERMISSIONS
from server.seed import seed_workspace
from sync.push import StopReason, push_outbox
from sync.session import SyncSession

WINDOW = 1.0
VAGUE = json.dumps({"error": {"code": "forbidden", "message": "Forbidden."}}).encode()


def vague_refusals(app: Any) -> Any:
    """The service as a server whose every 403 says only "Forbidden.": no permission named."""

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        refusing = False

        async def send_vague(message: dict[str, Any]) -> None:
            nonlocal refusing
            if message["type"] == "http.response.start" and message["status"] == 403:
                refusing = True
                headers = [(k, v) for k, v in message["headers"] if k != b"content-length"]
                headers.append((b"content-length", str(len(VAGUE)).encode()))
                await send({**message, "headers": headers})
            elif refusing and message["type"] == "http.response.body":
                if not message.get("more_body"):
                    await send({"type": "http.response.body", "body": VAGUE})
            else:
                await send(message)

        await app(scope, receive, send_vague if scope["type"] == "http" else send)

    return variant


@dataclass
class Served:
    wire: Wire
    session: SyncSession
    colleague: httpx.AsyncClient
    """The service in process under another member's key (Grace Hopper's)."""


@asynccontextmanager
async def serve(
    tmp_path: Path,
    *,
    vague: bool = False,
    bulk: bool = True,
    lacking: str | None = None,
) -> AsyncIterator[Served]:
    """`vague`: no `/me`, and 403s that name nothing. `lacking`: the key has every permission
    but that one."""
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 4, plan="enterprise")
    if lacking is not None:
        allowed = [p for p in PERMISSIONS if p != lacking]
        key = create_key(db, "acme", "limited", permissions=allowed)
    colleague_key = create_key(db, "acme", "colleague", user="Grace Hopper")
    app = create_app(db, window_seconds=WINDOW)
    served = app if bulk else without_bulk(app)
    wire = Wire(vague_refusals(without_me(served)) if vague else served)
    async with (
        session_for(key, tmp_path / "cache.db", transport=wire, window_seconds=WINDOW) as session,
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url=BASE_URL,
            headers={"Authorization": f"Bearer {colleague_key}"},
        ) as colleague,
    ):
        await load_issues(session)
        wire.reset()
        yield Served(wire, session, colleague)


async def two_comments(served: Served) -> tuple[str, str]:
    """A comment of a colleague's and one of ours on the same issue, in the cache: (theirs,
    ours)."""
    session = served.session
    issue_id = sorted(i.id for i in (await session.client.list_issues()).value.data)[0]
    answer = await served.colleague.post("/comments", json={"issue_id": issue_id, "body": "hi"})
    answer.raise_for_status()
    theirs = str(answer.json()["id"])
    ours = (await session.client.create_comment(issue_id, "mine")).value.id
    listed = (await session.client.list_comments(issue_id)).value.data
    session.cache.server.apply_page(Resource.COMMENTS, [comment.raw for comment in listed])
    served.wire.reset()
    return theirs, ours


def entry_of(session: SyncSession, record_id: str) -> OutboxEntry:
    [entry] = [e for e in session.cache.outbox.entries() if e.target_id == record_id]
    return entry


servers = pytest.mark.parametrize("vague", [False, True], ids=["reference", "no-me-vague-403"])


@servers
async def test_another_authors_comment_fails_and_the_queue_goes_on(
    tmp_path: Path, vague: bool
) -> None:
    """Editing a colleague's comment first, then ours, then an issue: the colleague's fails
    with the server's words, the other two land, the run is not stopped; the next push sends
    nothing again. Before, the run stopped at the 403 with the entry pending, and every run
    (the app's loop: every 60 s, for ever) sent it again."""
    async with serve(tmp_path, vague=vague) as served:
        session, wire = served.session, served.wire
        theirs, ours = await two_comments(served)
        issue_id = sorted(i.id for i in (await session.client.list_issues()).value.data)[1]
        wire.reset()
        session.cache.outbox.update(Resource.COMMENTS, theirs, {"body": "edited by me"})
        session.cache.outbox.update(Resource.COMMENTS, ours, {"body": "edited, mine"})
        session.cache.outbox.update(Resource.ISSUES, issue_id, {"title": "goes on"})
        report = await push_outbox(session, backoff=QUICK)
        refused = entry_of(session, theirs)
        assert report.stopped is None
        assert (report.done, report.failed) == (2, 1)
        assert refused.state is EntryState.FAILED
        said = "Forbidden." if vague else "Only the author of a comment may change or delete it."
        assert refused.last_error == said
        assert wire.count("GET", "/me") == (0 if vague else 1)
        assert (await session.client.get_issue(issue_id)).value.title == "goes on"

        wire.reset()
        again = await push_outbox(session, backoff=QUICK)
        assert (again.done, again.failed, again.stopped) == (0, 0, None)
        assert wire.count("PATCH", theirs) == 0


async def test_a_lone_refusal_nothing_explains_fails_at_the_end_of_the_run(tmp_path: Path) -> None:
    """No `/me`, no permission named, nothing else of its kind in the queue: the refusal is
    undecided while the run lasts, and failed when it ends (a 403 sent again is refused again),
    not left pending for ever."""
    async with serve(tmp_path, vague=True) as served:
        session, wire = served.session, served.wire
        theirs, _ours = await two_comments(served)
        session.cache.outbox.delete(Resource.COMMENTS, theirs)
        report = await push_outbox(session, backoff=QUICK)
        assert (report.failed, report.stopped, report.remaining) == (1, None, 0)
        assert entry_of(session, theirs).last_error == "Forbidden."
        assert wire.count("DELETE", theirs) == 1


@pytest.mark.parametrize(
    ("vague", "bulk"),
    [(False, True), (False, False), (True, True), (True, False)],
    ids=["reference-bulk", "reference-one-by-one", "vague-bulk", "vague-one-by-one"],
)
async def test_a_key_without_the_permission_stops_the_run_and_keeps_the_writes(
    tmp_path: Path, vague: bool, bulk: bool
) -> None:
    """A key without `issues:write`: the run stops and says so, both edits stay pending (never
    failed: fixing the key sends them), and the next run stops the same way. Without `/me` or a
    permission named, two issue writes refused and none accepted say it."""
    async with serve(tmp_path, vague=vague, bulk=bulk, lacking="issues:write") as served:
        session = served.session
        first, second = sorted(i.id for i in (await session.client.list_issues()).value.data)[:2]
        session.cache.outbox.update(Resource.ISSUES, first, {"title": "not allowed"})
        session.cache.outbox.update(Resource.ISSUES, second, {"title": "not allowed either"})
        for _run in range(2):
            report = await push_outbox(session, backoff=QUICK)
            assert report.stopped is not None
            assert report.stopped.reason is StopReason.KEY_REFUSED
            why = "not to be allowed to write issues" if vague else "lacks issues:write"
            assert why in report.stopped.message
            assert (report.failed, report.done, report.remaining) == (0, 0, 2)
            entries = session.cache.outbox.entries()
            assert [e.state for e in entries] == [EntryState.PENDING] * 2
            assert any(why in (e.last_error or "") for e in entries)
