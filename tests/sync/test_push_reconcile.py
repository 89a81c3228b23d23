"""Looking for comments whose answers were lost (sync.reconcile): one listing of them all where
the server allows it, one per issue where it refuses that, each comment on the server once."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from push_support import Wire, comments_per_issue_only, load_issues, session_for

from cache import Resource
from server.app import create_app
from server.seed import seed_workspace
from sync.push import Backoff, push_outbox

WINDOW = 1.0


async def _no_sleep(_seconds: float) -> None:
    return None


QUICK = Backoff(sleep=_no_sleep)


def lost_comment(request: httpx.Request) -> bool:
    return request.method == "POST" and request.url.path.endswith("/comments")


@pytest.mark.parametrize("all_at_once", [True, False], ids=["one-listing", "per-issue"])
async def test_lost_comments_on_three_issues_are_found_once_each(
    tmp_path: Path, all_at_once: bool
) -> None:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 3, plan="enterprise")
    app = create_app(db, window_seconds=WINDOW)
    wire = Wire(app if all_at_once else comments_per_issue_only(app))
    async with session_for(
        key, tmp_path / "cache.db", transport=wire, window_seconds=WINDOW
    ) as session:
        assert session.features.comments_list
        issues = [issue["id"] for issue in await load_issues(session)]
        for issue_id in issues:
            session.cache.outbox.create(Resource.COMMENTS, {"issue_id": issue_id, "body": "lost"})
        wire.reset()
        wire.lose = lost_comment
        report = await push_outbox(session, backoff=QUICK)
        wire.lose = None
        looks = [path for method, path in wire.requests if method == "GET"]
        statuses = list(wire.statuses)
        for issue_id in issues:
            answer = await session.client.list_comments(issue_id)
            assert [c.raw["body"] for c in answer.value.data].count("lost") == 1
    assert (report.done, report.reconciled, report.remaining) == (3, 3, 0)
    assert wire.lost == 3
    assert len(looks) == (1 if all_at_once else 1 + 3)
    assert statuses.count(400) == (0 if all_at_once else 1)
