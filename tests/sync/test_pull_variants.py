"""The pull against server variants: whole-second ties, data changing while paging, a server
without sync order, unreadable records, and two sessions sharing one rate limit."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from test_pull_support import (
    FAST_RETRY,
    App,
    Scope,
    Service,
    ignoring_updated_after,
    local_issues,
    on_list_page,
    rewriting_bodies,
    served,
    server_issues,
    session_on,
    whole_seconds,
)

from cache import Cache, Resource
from sync.pull import Mode, pull

SECOND = 1_000_000
"""The service stores microseconds."""


def tie(service: Service, count: int) -> int:
    """Stamp every record with whole seconds (a server that sorts by what it shows), and
    `count` issues with one second; return that second."""
    for table in ("issues", "projects", "users", "comments"):
        service.sql(
            f"UPDATE {table} SET updated_at = (updated_at / ?) * ? - 10 * ?",
            (SECOND, SECOND, SECOND),
        )
    ((stamp,),) = service.sql("SELECT max(updated_at) FROM issues")
    service.sql(
        "UPDATE issues SET updated_at = ? WHERE id IN (SELECT id FROM issues ORDER BY id LIMIT ?)",
        (stamp + SECOND, count),
    )
    return int(stamp + SECOND)


async def test_a_page_full_of_one_second_neither_loops_nor_loses(
    tmp_path: Path, cache: Cache
) -> None:
    async with served(tmp_path, 330, wrap=whole_seconds) as service:
        stamp = tie(service, 250)
        async with session_on(service, cache) as session:
            assert session.features.keyset_order is True
            report = await pull(session, retry=FAST_RETRY)
            assert local_issues(cache) == await server_issues_whole(service)
            assert report.resources["issues"].requests <= 6
            # a write in the cursor's own second, after the pull read it: the overlap finds it
            late = service.sql("SELECT id FROM issues ORDER BY id DESC LIMIT 1")[0][0]
            service.sql(
                "UPDATE issues SET updated_at = ?, title = 'late' WHERE id = ?", (stamp, late)
            )
            again = await pull(session, retry=FAST_RETRY)
    detail = cache.reads.issue(late)
    assert detail is not None and detail.issue.title == "late"
    assert again.resources["issues"].mode is Mode.KEYSET


async def server_issues_whole(service: Service) -> dict[str, str]:
    return {key: value.split(".")[0] + "Z" for key, value in (await server_issues(service)).items()}


async def test_records_edited_while_paging_are_not_lost(tmp_path: Path, cache: Cache) -> None:
    edits: list[str] = []

    async def edit_between_pages(served_count: int) -> None:
        if served_count != 2:  # the probe's list is the first; edit after the pull's first page
            return
        async with service.api() as api:
            first = (await api.get("/issues", params={"per_page": 100})).json()["data"]
            for issue in (first[0], first[75], first[-1]):
                edits.append(issue["id"])
                response = await api.patch(f"/issues/{issue['id']}", json={"title": "moved"})
                response.raise_for_status()
            (await api.delete(f"/issues/{first[50]['id']}")).raise_for_status()

    def wrap(app: App) -> App:
        return on_list_page(app, "/issues", edit_between_pages)

    async with served(tmp_path, 300, wrap=wrap) as service, session_on(service, cache) as session:
        await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    assert edits and all(cache.reads.issue(i).issue.title == "moved" for i in edits)  # type: ignore[union-attr]


async def test_a_server_without_sync_order_is_walked_and_rewalked(
    tmp_path: Path, cache: Cache
) -> None:
    deleted: list[str] = []

    async def delete_during_walk(served_count: int) -> None:
        if served_count != 5 or deleted:  # 1: the probe, 2-3: keyset until it breaks, 4-: walk
            return
        async with service.api() as api:
            victim = (await api.get("/issues", params={"per_page": 1})).json()["data"][0]["id"]
            (await api.delete(f"/issues/{victim}")).raise_for_status()
            deleted.append(victim)

    def wrap(app: App) -> App:
        return on_list_page(ignoring_updated_after(app), "/issues", delete_during_walk)

    async with served(tmp_path, 320, wrap=wrap) as service, session_on(service, cache) as session:
        report = await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
        again = await pull(session, retry=FAST_RETRY)
    issues = report.resources["issues"]
    assert issues.mode is Mode.PAGES and issues.passes == 2  # total moved: walked again
    assert session.features.keyset_order is False  # remembered: no keyset attempt next time
    assert issues.swept  # a whole-list walk is an id sweep for free
    assert deleted and deleted[0] not in local_issues(cache)
    assert again.resources["issues"].requests == 4 + 1 and again.changed == 0  # walk + count


async def test_unreadable_records_are_reported_and_skipped(tmp_path: Path, cache: Cache) -> None:
    broken: list[str] = []

    def corrupt(scope: Scope, body: bytes) -> bytes:
        if not scope["path"].endswith("/issues") or b'"data"' not in body:
            return body
        payload = json.loads(body)
        if payload["data"]:
            payload["data"][0]["updated_at"] = "yesterday"
            broken.append(payload["data"][0]["id"])
        return json.dumps(payload).encode()

    def wrap(app: App) -> App:
        return rewriting_bodies(app, corrupt)

    async with served(tmp_path, 40, wrap=wrap) as service, session_on(service, cache) as session:
        report = await pull(session, retry=FAST_RETRY)
    skipped = report.resources["issues"].skipped
    assert [item.id for item in skipped] == broken[-1:]
    assert "updated_at" in skipped[0].reason
    assert cache.server.local_count(Resource.ISSUES) == 39


async def test_two_sessions_share_one_limit_and_get_no_429(tmp_path: Path) -> None:
    """Free plan, with its minute scaled to 1 s; pages capped at 5 so 2 pulls need > 60.

    Not shorter: the service's resets are whole seconds, and the client's limiter takes a
    reset further away than a window (plus its margin) for a daily limit.
    """
    window = 1.0
    statuses: list[int] = []

    def wrap(app: App) -> App:
        async def variant(scope, receive, send):  # type: ignore[no-untyped-def]
            if scope["type"] == "http" and scope["method"] == "GET":
                query = scope.get("query_string", b"").replace(b"per_page=100", b"per_page=5")
                scope = {**scope, "query_string": query}

            async def record(message):  # type: ignore[no-untyped-def]
                if message["type"] == "http.response.start":
                    statuses.append(message["status"])
                await send(message)

            await app(scope, receive, record)

        return variant

    async with served(tmp_path, 150, wrap=wrap, plan="free", window_seconds=window) as service:
        first, second = Cache.open(tmp_path / "shared.db"), Cache.open(tmp_path / "shared.db")
        try:
            async with (
                session_on(service, first, window_seconds=window) as one,
                session_on(service, second, window_seconds=window) as two,
            ):
                reports = await asyncio.gather(
                    pull(one, retry=FAST_RETRY), pull(two, retry=FAST_RETRY)
                )
            times = first.requests.request_times(0.0)
        finally:
            first.close()
            second.close()
    assert sum(report.requests for report in reports) > 60
    assert 429 not in statuses
    assert len(times) >= sum(report.requests for report in reports)
    for index, start in enumerate(times):
        in_window = [t for t in times[index:] if t < start + window]
        assert len(in_window) <= 60
