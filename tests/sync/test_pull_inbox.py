"""The pull fills the inbox's change log (docs/sync.md#change-log) against the reference
service in-process: a first pull logs nothing; the next one logs a colleague's edit of the
user's issue, their comment on it and a new issue they assigned to the user, and nothing of
issues that are not the user's."""

from __future__ import annotations

from pathlib import Path

import httpx
from test_pull_support import BASE, FAST_RETRY, served, session_on

from cache import ME_STATE_KEY, Cache, ChangeKind, IssueFilter, IssueSort
from server.keys import create_key
from sync.pull import pull


async def test_the_second_pull_logs_what_a_colleague_did_to_my_issues(
    tmp_path: Path, cache: Cache
) -> None:
    async with served(tmp_path, 30) as service, session_on(service, cache) as session:
        async with service.api() as api:
            me = (await api.get("/me")).json()["user"]["id"]
        cache.state.set(ME_STATE_KEY, me)
        await pull(session, retry=FAST_RETRY)
        assert cache.inbox.changes() == []
        mine = cache.reads.window(
            IssueFilter(assignee=frozenset({me})), IssueSort("number", False), 0, 1
        )[0]
        theirs = cache.reads.window(
            IssueFilter(assignee=frozenset({None})), IssueSort("number", False), 0, 1
        )[0]
        key = create_key(service.db, "Acme", "colleague", user="Grace Hopper")
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(service.app),
            base_url=BASE,
            headers={"Authorization": f"Bearer {key}"},
        ) as grace:
            for answer in (
                await grace.patch(f"/issues/{mine.id}", json={"priority": "urgent"}),
                await grace.post("/comments", json={"issue_id": mine.id, "body": "Any news?"}),
                await grace.post("/issues", json={"title": "Please review", "assignee": me}),
                await grace.patch(f"/issues/{theirs.id}", json={"priority": "urgent"}),
            ):
                answer.raise_for_status()
        await pull(session, retry=FAST_RETRY)
    found = {(c.kind, c.new, c.issue_id == mine.id) for c in cache.inbox.changes()}
    assert found == {
        (ChangeKind.FIELD, "urgent", True),
        (ChangeKind.COMMENT, "Any news?", True),
        (ChangeKind.NEW_ISSUE, "Please review", False),
    }
