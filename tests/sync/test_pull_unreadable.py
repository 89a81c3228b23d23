"""Records the models cannot read are kept in the cache until a page brings them readable
(sync.remembered): the pull skips them and goes on, the cursor moving past them; only the
report of a pull that met one named it, and only `tracker-tui sync` showed that."""

from __future__ import annotations

import json
from pathlib import Path

from test_pull_support import (
    FAST_RETRY,
    App,
    Scope,
    local_issues,
    rewriting_bodies,
    served,
    server_issues,
    session_on,
)

from cache import Cache, Resource
from sync.pull import pull
from sync.remembered import unreadable_records


async def test_a_skipped_record_is_kept_in_sight_until_it_comes_readable(
    tmp_path: Path, cache: Cache
) -> None:
    broken = {"on": True}

    def corrupt(scope: Scope, body: bytes) -> bytes:
        """Issue 5's `updated_at` is no timestamp, while `broken` says so."""
        if not broken["on"] or not scope["path"].endswith("/issues") or b'"data"' not in body:
            return body
        payload = json.loads(body)
        for item in payload["data"]:
            if item.get("number") == 5:
                item["updated_at"] = "yesterday"
        return json.dumps(payload).encode()

    def wrap(app: App) -> App:
        return rewriting_bodies(app, corrupt)

    async with served(tmp_path, 40, wrap=wrap) as service, session_on(service, cache) as session:
        ((broken_id,),) = service.sql("SELECT id FROM issues WHERE number = 5")
        ((other_id,),) = service.sql("SELECT id FROM issues WHERE number = 9")
        await pull(session, retry=FAST_RETRY)
        kept = unreadable_records(cache)
        assert [(item.resource, item.id) for item in kept] == [("issues", broken_id)]
        assert "updated_at" in kept[0].reason
        async with service.api() as api:
            edited = await api.patch(f"/issues/{other_id}", json={"title": "another edit"})
            assert edited.status_code == 200
        again = await pull(session, retry=FAST_RETRY)
        assert again.resources["issues"].updated == 1
        assert [item.id for item in unreadable_records(cache)] == [broken_id]
        broken["on"] = False
        async with service.api() as api:
            fixed = await api.patch(f"/issues/{broken_id}", json={"title": "readable again"})
            assert fixed.status_code == 200
        await pull(session, retry=FAST_RETRY)
        assert unreadable_records(cache) == []
        assert local_issues(cache) == await server_issues(service)
    assert cache.server.server_record(Resource.ISSUES, broken_id) is not None
