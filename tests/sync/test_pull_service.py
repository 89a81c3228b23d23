"""The pull against the reference service in-process: cold, incremental, deletes, resume."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_pull_support import (
    FAST_RETRY,
    FailingTransport,
    local_issues,
    refusing_tombstones,
    served,
    server_issues,
    session_on,
)

from cache import Cache, Resource
from sync.errors import NetworkError
from sync.pull import Mode, PullProgress, pull


async def test_cold_pull_stores_every_resource_in_few_requests(
    tmp_path: Path, cache: Cache
) -> None:
    seen: list[PullProgress] = []
    async with served(tmp_path, 250) as service, session_on(service, cache) as session:
        report = await pull(session, progress=seen.append, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    issues = report.resources["issues"]
    assert issues.mode is Mode.KEYSET
    # ceil(250 / 100) pages, and a count check: no tombstone was seen yet to prove them working
    assert issues.requests == 4
    assert issues.inserted == 250 and not report.skipped
    assert cache.local_count(Resource.PROJECTS) == 6
    assert cache.local_count(Resource.USERS) == 8
    assert cache.local_count(Resource.COMMENTS) == 125
    assert cache.get_cursor(Resource.ISSUES) is not None
    assert seen[-1].received == seen[-1].total or seen[-1].resource != "issues"


async def test_incremental_pull_without_changes_costs_one_request(
    tmp_path: Path, cache: Cache
) -> None:
    async with served(tmp_path, 120) as service, session_on(service, cache) as session:
        await pull(session, retry=FAST_RETRY)
        again = await pull(session, retry=FAST_RETRY)
    for resource in ("issues", "projects", "users", "comments"):
        assert again.resources[resource].requests == 2  # changes since, and the count check
    assert again.changed == 0


async def test_once_a_tombstone_is_seen_no_count_check_is_needed(
    tmp_path: Path, cache: Cache
) -> None:
    async with served(tmp_path, 20) as service, session_on(service, cache) as session:
        await pull(session, retry=FAST_RETRY)
        async with service.api() as api:
            (await api.delete(f"/issues/{sorted(local_issues(cache))[0]}")).raise_for_status()
        await pull(session, retry=FAST_RETRY)
        assert session.features.tombstones is True
        again = await pull(session, retry=FAST_RETRY)
    assert again.resources["issues"].requests == 1


async def test_incremental_pull_brings_edits_creations_and_tombstones(
    tmp_path: Path, cache: Cache
) -> None:
    async with served(tmp_path, 60) as service, session_on(service, cache) as session:
        await pull(session, retry=FAST_RETRY)
        ids = sorted(local_issues(cache))
        async with service.api() as api:
            for issue_id in ids[:3]:
                (
                    await api.patch(f"/issues/{issue_id}", json={"title": "edited"})
                ).raise_for_status()
            (await api.post("/issues", json={"title": "new one"})).raise_for_status()
            (await api.delete(f"/issues/{ids[5]}")).raise_for_status()
        report = await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    issues = report.resources["issues"]
    assert (issues.inserted, issues.updated, issues.deleted) == (1, 3, 1)
    assert issues.requests == 1 and not issues.swept
    detail = cache.issue(ids[0])
    assert detail is not None and detail.issue.title == "edited"


async def test_deletes_without_tombstones_use_count_check_and_sweep(
    tmp_path: Path, cache: Cache
) -> None:
    async with (
        served(tmp_path, 150, wrap=refusing_tombstones) as service,
        session_on(service, cache) as session,
    ):
        assert session.features.tombstones is False
        await pull(session, retry=FAST_RETRY)
        quiet = await pull(session, retry=FAST_RETRY)
        assert quiet.resources["issues"].requests == 2  # changes, then the count check
        assert not quiet.resources["issues"].swept
        gone = sorted(local_issues(cache))[:2]
        async with service.api() as api:
            for issue_id in gone:
                (await api.delete(f"/issues/{issue_id}")).raise_for_status()
        report = await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    issues = report.resources["issues"]
    assert issues.swept and issues.deleted == 2
    assert cache.last_full_sweep(Resource.ISSUES) is not None


async def test_full_pull_sweeps_even_with_tombstones(tmp_path: Path, cache: Cache) -> None:
    async with served(tmp_path, 30) as service, session_on(service, cache) as session:
        await pull(session, retry=FAST_RETRY)
        cache.apply_page(Resource.ISSUES, [{"id": "iss_stale", "title": "left over"}])
        report = await pull(session, full=True, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    assert report.full and report.resources["issues"].swept
    assert report.resources["issues"].deleted == 1


async def test_interrupted_pull_resumes_from_the_last_saved_page(
    tmp_path: Path, cache: Cache
) -> None:
    async with served(tmp_path, 450) as service:
        async with session_on(service, cache):
            pass  # features probed and remembered: the sessions below send only list requests
        failing = FailingTransport(service.transport(), "/issues", allowed=2)
        async with session_on(service, cache, transport=failing) as session:
            with pytest.raises(NetworkError):
                await pull(session, retry=FAST_RETRY)
        stored = cache.local_count(Resource.ISSUES)
        assert 100 <= stored < 450
        async with session_on(service, cache) as session:
            report = await pull(session, retry=FAST_RETRY)
            assert local_issues(cache) == await server_issues(service)
    assert report.resources["issues"].requests <= 4  # only what was left, not all 5 pages
    assert report.resources["issues"].inserted == 450 - stored


async def test_failures_are_retried_with_a_bound(tmp_path: Path, cache: Cache) -> None:
    async with served(tmp_path, 10) as service:
        async with session_on(service, cache):
            pass
        flaky = FailingTransport(service.transport(), "/issues", allowed=0)
        async with session_on(service, cache, transport=flaky) as session:
            with pytest.raises(NetworkError):
                await pull(session, retry=FAST_RETRY)
    assert flaky.seen == FAST_RETRY.tries


async def test_unauthorized_key_fails_the_pull(tmp_path: Path, cache: Cache) -> None:
    async with served(tmp_path, 5) as service, session_on(service, cache) as session:
        service.sql("DELETE FROM api_keys")
        with pytest.raises(Exception) as caught:
            await pull(session, retry=FAST_RETRY)
    assert "401" in str(caught.value)


async def test_progress_is_fetched_of_an_estimated_total(tmp_path: Path, cache: Cache) -> None:
    """Each query of a keyset pass moves its point in time, and its `pagination.total` is what
    remains after that point: progress is what was fetched of the estimate they give, never
    "issues 10100/100" (issue 14, defect 10). The id sweep of a full pull counts on its own."""
    seen: list[PullProgress] = []
    async with served(tmp_path, 450) as service, session_on(service, cache) as session:
        await pull(session, progress=seen.append, retry=FAST_RETRY)
        cold = [event for event in seen if event.resource == "issues"]
        async with service.api() as api:
            for issue_id in sorted(local_issues(cache))[:3]:
                answer = await api.patch(f"/issues/{issue_id}", json={"title": "edited"})
                answer.raise_for_status()
        seen.clear()
        await pull(session, full=True, progress=seen.append, retry=FAST_RETRY)
        warm = [event for event in seen if event.resource == "issues" and event.phase == "pull"]
        sweep = [event for event in seen if event.resource == "issues" and event.phase == "sweep"]
    assert len(cold) >= 5  # five keyset queries, each from a later point in time
    for event in cold + warm + sweep:
        assert event.total is not None and event.received <= event.total
    assert all(event.total == 450 for event in cold)
    assert cold[-1].received == cold[-1].total
    assert warm[-1].received == warm[-1].total == 3  # what changed, not the whole
    assert [event.total for event in sweep] == [450] * len(sweep)
    assert sweep[-1].received == 450
