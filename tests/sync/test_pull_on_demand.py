"""An opened issue's comments during a backfill (docs/sync.md#head-first): fetched at once in
one request, before the bulk comment pull, which waits for the issues' backfill."""

from __future__ import annotations

from pathlib import Path

import httpx
from test_pull_head import ISSUES
from test_pull_support import served, session_on

from cache import Cache, Resource
from sync.backfill_progress import pending
from sync.pull import on_demand, pull


class Paths(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.paths: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(f"{request.method} {request.url.path}")
        return await self.inner.handle_async_request(request)


async def test_an_opened_issues_comments_come_at_once_during_the_backfill(
    tmp_path: Path, cache: Cache
) -> None:
    async with served(tmp_path, ISSUES) as service:
        with_comments = service.sql(
            "SELECT issue_id, count(*) FROM comments JOIN issues ON issues.id = issue_id "
            "GROUP BY issue_id ORDER BY min(issues.updated_at)"
        )
        async with session_on(service, cache) as session:
            await pull(session, head_first=True, finish_backfill=False)
        assert pending(cache) and cache.server.local_count(Resource.COMMENTS) == 0
        # an old issue the backfill has not reached (nor the views)
        issue_id, count = next(row for row in with_comments if cache.reads.issue(row[0]) is None)
        wire = Paths(service.transport())
        async with session_on(service, cache, transport=wire) as session:
            assert on_demand.wanted(session)
            got = await on_demand.issue_comments(session, issue_id)
    assert wire.paths == ["GET /v1/comments"]
    assert got == count > 0
    assert cache.server.local_count(Resource.COMMENTS) == count
