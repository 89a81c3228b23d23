"""Head first (docs/sync.md#head-first): a cold start reads the newest issues in two requests,
then the user's open issues, then backfills the rest oldest first up to the head, against the
reference service and against a server without sync order or filters; edits during the
backfill are pulled, a kill in any phase resumes without a gap or a record read twice, and the
day's budget stops the backfill until its share is free again."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from test_pull_support import (
    FAST_RETRY,
    App,
    Receive,
    Scope,
    Send,
    Service,
    local_issues,
    query_of,
    refusing_tombstones,
    resolved,
    rewriting_bodies,
    served,
    server_issues,
    session_on,
    with_query,
)

from cache import Cache
from sync.errors import NetworkError
from sync.pull import backfill_state, pull
from sync.pull.backfill import Stop
from sync.pull.engine import backfill_step
from sync.pull.head import HEAD_MAX, WINDOW_TRIES
from sync.ratelimit import BACKGROUND_LOG_BUCKET
from sync.session import open_session

ISSUES = 1_000


class Recorder(httpx.AsyncBaseTransport):
    """The wire: every issue list request and the ids its answer held; `fail_after` drops the
    connection for good after that many issue list requests (a process killed there)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, fail_after: int | None = None) -> None:
        self.inner = inner
        self.fail_after = fail_after
        self.lists: list[dict[str, list[str]]] = []
        self.ids: Counter[str] = Counter()
        self.view_ids: set[str] = set()
        """Ids the views' filtered lists answered: read again by the backfill, by design."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        listing = request.method == "GET" and request.url.path.endswith("/issues")
        if listing:
            if self.fail_after is not None and len(self.lists) >= self.fail_after:
                raise httpx.ConnectError("killed")
            self.lists.append(_params(request))
        response = await self.inner.handle_async_request(request)
        if listing and response.status_code == 200:
            content = await response.aread()
            ids = [item["id"] for item in json.loads(content)["data"]]
            self.ids.update(ids)
            if "assignee" in self.lists[-1]:
                self.view_ids.update(ids)
            return httpx.Response(200, headers=response.headers, content=content)
        return response


def _params(request: httpx.Request) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, value in request.url.params.multi_items():
        found.setdefault(name, []).append(value)
    return found


def newest(real: dict[str, str], count: int) -> set[str]:
    return {key for key, _ in sorted(real.items(), key=lambda kv: kv[1])[-count:]}


def unordered_unfiltered(app: App) -> App:
    """A server with only the published API's lists: filters ignored (a server may ignore a
    parameter it does not know), and pages not in sync order (each page reversed, so no page
    is in `(updated_at, id)` order)."""

    def reverse(scope: Scope, body: bytes) -> bytes:
        if not scope["path"].endswith("/issues") or scope["method"] != "GET":
            return body
        try:
            payload = json.loads(body)
        except ValueError:
            return body
        if isinstance(payload, dict) and isinstance(payload.get("data"), list):
            payload["data"].reverse()
            return json.dumps(payload).encode()
        return body

    reversing = rewriting_bodies(app, reverse)

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            query = query_of(scope)
            for name in ("status", "assignee", "priority", "project_id", "label"):
                query.pop(name, None)
            scope = with_query(scope, query)
        await reversing(scope, receive, send)

    return variant


async def _head(service: Service, cache: Cache, recorder: Recorder) -> tuple[int, set[str]]:
    """A head-first pull that leaves the backfill: (issue lists before the first progress,
    the issues then in the cache)."""
    seen: list[tuple[int, set[str]]] = []

    def progress(_: object) -> None:
        if not seen:
            seen.append((len(recorder.lists), set(local_issues(cache))))

    async with session_on(service, cache):
        pass  # the features' probe, whose list request is not the pull's
    async with session_on(service, cache, transport=recorder) as session:
        await pull(session, head_first=True, finish_backfill=False, progress=progress)
        count, held = seen[0]
    return count, held


async def test_the_newest_issues_arrive_in_two_requests_and_the_backfill_reads_each_once(
    tmp_path: Path, cache: Cache
) -> None:
    async with served(tmp_path, ISSUES) as service:
        recorder = Recorder(service.transport())
        real = await server_issues(service)
        requests, held = await _head(service, cache, recorder)
        assert requests == 2
        assert newest(real, 50) <= held
        assert backfill_state.pending(cache)
        shown = backfill_state.progress(cache)
        assert shown is not None and shown.views == "done"
        before = len(recorder.lists)
        async with session_on(service, cache, transport=recorder) as session:
            report = await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == real
        assert not backfill_state.pending(cache)
        assert report.backfill is not None and report.backfill.stop is Stop.DONE
        backfilled = len(recorder.lists) - before
    # ceil(N / 100) in all for the head and the backfill, plus the incremental pull; no issue
    # read twice but the views' and each request's one-record overlap
    assert backfilled <= -(-ISSUES // 100) + 2
    twice = {key for key, seen in recorder.ids.items() if seen > 1}
    assert len(twice - recorder.view_ids) <= backfilled + 2


async def test_a_first_start_takes_its_oldest_page_from_the_features_probe(
    tmp_path: Path, cache: Cache
) -> None:
    """The probe lists the same first page the head asks first: a first start on a cache that
    has never seen the server sends two issue lists in all (the probe's, the newest page)
    before the newest issues are in, and the probe's records are not read again."""
    async with served(tmp_path, ISSUES) as service:
        recorder = Recorder(service.transport())
        real = await server_issues(service)
        seen: list[tuple[int, set[str]]] = []

        def progress(_: object) -> None:
            if not seen:
                seen.append((len(recorder.lists), set(local_issues(cache))))

        async with session_on(service, cache, transport=recorder) as session:
            assert len(recorder.lists) == 1  # the probe's
            probed = set(recorder.ids)
            await pull(session, head_first=True, finish_backfill=False, progress=progress)
            assert session.probe_page is None  # taken once
        requests, held = seen[0]
        assert requests == 2
        assert newest(real, 50) <= held
        async with session_on(service, cache, transport=recorder) as session:
            assert session.probe_page is None  # a known server is not probed again
            await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == real
    first = recorder.lists[0]
    assert first["updated_after"] and first["per_page"] == ["100"]
    oldest_pages = [
        params
        for params in recorder.lists
        if params.get("updated_after", [""])[0].startswith("1970-01-01")
        and params.get("page", ["1"]) == ["1"]
        and "assignee" not in params
    ]
    assert oldest_pages == [first]  # asked once, by the probe
    reread = {key for key in probed if recorder.ids[key] > 1} - recorder.view_ids
    # the backfill's next page overlaps the probe's by one record, the delete check reads one
    assert len(probed) == 100 and len(reread) <= 2


async def test_a_server_without_sync_order_or_filters_still_shows_the_head_first(
    tmp_path: Path, cache: Cache
) -> None:
    async with served(tmp_path, ISSUES, wrap=unordered_unfiltered) as service:
        recorder = Recorder(service.transport())
        real = await server_issues(service)
        requests, held = await _head(service, cache, recorder)
        shown = backfill_state.progress(cache)
        assert shown is not None and shown.views == "unsupported"
        assert newest(real, 50) <= held
        # the whole list's first page, the windows tried, the rest of the window's pages
        assert requests <= 1 + WINDOW_TRIES + HEAD_MAX // 100 - 1
        async with session_on(service, cache, transport=recorder) as session:
            assert session.features.keyset_order is False
            await pull(session, retry=FAST_RETRY)
    assert local_issues(cache) == real
    assert not backfill_state.pending(cache)


async def test_an_issue_edited_during_the_backfill_is_pulled(tmp_path: Path, cache: Cache) -> None:
    async with served(tmp_path, ISSUES) as service:
        recorder = Recorder(service.transport())
        await _head(service, cache, recorder)
        by_age = sorted((await server_issues(service)).items(), key=lambda kv: kv[1])
        passed, ahead, head = by_age[5][0], by_age[700][0], by_age[-1][0]
        steps = 0

        def three_pages() -> bool:
            nonlocal steps
            steps += 1
            return steps > 3

        async with session_on(service, cache) as session:
            step = await backfill_step(session, should_yield=three_pages, retry=FAST_RETRY)
            assert step is not None and step.stop is Stop.YIELDED and step.requests == 3
            async with service.api() as api:
                for key in (passed, ahead, head):
                    patched = await api.patch(f"/issues/{key}", json={"title": f"edited {key}"})
                    patched.raise_for_status()
            await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    for key in (passed, ahead, head):
        detail = cache.reads.issue(key)
        assert detail is not None and detail.issue.title == f"edited {key}"


@pytest.mark.parametrize("killed_after", [1, 2, 3, 7, 12])
async def test_a_kill_in_any_phase_resumes_without_a_gap_or_a_second_read(
    tmp_path: Path, cache: Cache, killed_after: int
) -> None:
    """1: the backfill's first page, 2: the head, 3-6: the views, 7 and 12: the backfill."""
    async with served(tmp_path, ISSUES) as service:
        real = await server_issues(service)
        async with session_on(service, cache):
            pass  # the features' probe, whose list request is not the pull's
        recorder = Recorder(service.transport(), fail_after=killed_after)
        with pytest.raises(NetworkError):
            async with session_on(service, cache, transport=recorder) as session:
                await pull(session, head_first=True, retry=FAST_RETRY)
        again = Recorder(service.transport())
        async with session_on(service, cache, transport=again) as session:
            await pull(session, head_first=True, retry=FAST_RETRY)
        assert local_issues(cache) == real
        assert not backfill_state.pending(cache)
    read = recorder.ids + again.ids
    twice = {key for key, seen in read.items() if seen > 1}
    # the overlaps, and the page whose request the kill cut off (its answer never stored)
    overlaps = len(recorder.lists) + len(again.lists)
    assert len(twice - recorder.view_ids - again.view_ids) <= overlaps + 100


async def test_the_days_budget_stops_the_backfill_until_its_share_is_free(
    tmp_path: Path, cache: Cache
) -> None:
    now = [1_900_000_000.0]
    clock: Callable[[], float] = lambda: now[0]  # noqa: E731
    async with served(tmp_path, ISSUES, plan="free") as service:
        recorder = Recorder(service.transport())
        async with session_on(service, cache, transport=recorder) as session:
            await pull(session, head_first=True, finish_backfill=False)
        async with open_with_clock(service, cache, clock) as session:
            budget = session.limiter.background_budget()
            assert budget == 500  # Free: half of 1,000 a day
            spent = budget - 103  # as if today's polls and backfill had spent all but 103
            for index in range(spent):
                cache.requests.reserve_request(now[0] - 3_600 + index, BACKGROUND_LOG_BUCKET, [])
            step = await backfill_step(session, should_yield=lambda: False, retry=FAST_RETRY)
            assert step is not None and step.stop is Stop.BUDGET
            assert step.requests == 3  # down to the polls' fifth of the budget, 100 requests
            assert step.resumes_at is not None and step.resumes_at > now[0] + 20 * 3_600
            shown = backfill_state.progress(cache)
            assert shown is not None and shown.paused_until == step.resumes_at
            cursor = backfill_state.backfill_cursor(cache)
            now[0] = step.resumes_at + 1  # the next day
            before = len(recorder.lists)
            resumed = await backfill_step(session, should_yield=lambda: False, retry=FAST_RETRY)
            assert resumed is not None and resumed.stop is Stop.DONE
            assert resumed.requests <= -(-ISSUES // 100) - 3
        assert cursor is not None
        assert local_issues(cache) == await server_issues(service)
    assert len(recorder.lists) == before  # the resumed backfill went out on its own transport


class Slow(httpx.AsyncBaseTransport):
    """A server that takes `step` seconds of the virtual clock `now` to answer each issue list;
    `sent` holds the virtual time each one was sent at."""

    def __init__(self, inner: httpx.AsyncBaseTransport, now: list[float], step: float) -> None:
        self.inner, self.now, self.step = inner, now, step
        self.sent: list[float] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and request.url.path.endswith("/issues"):
            self.sent.append(self.now[0])
            self.now[0] += self.step
        return await self.inner.handle_async_request(request)


async def test_a_slow_backfill_spends_at_most_its_share_in_any_day(
    tmp_path: Path, cache: Cache
) -> None:
    """Virtual time, a server that answers an issue list every 3 hours: the backfill's share
    (80 % of Free's 500 background requests) is counted in requests sent, whatever the time
    they took, so no day (any 24 hours, so every server day) holds more than 400 background
    requests; it stops when they are spent and resumes the next day from its cursor."""
    day, share = 86_400.0, 400
    now = [1_900_000_000.0]
    async with served(tmp_path, ISSUES, plan="free") as service:
        async with session_on(service, cache) as session:
            await pull(session, head_first=True, finish_backfill=False)
        slow = Slow(service.transport(), now, step=3 * 3_600.0)
        spent = [now[0] - 3_600 + index for index in range(share - 5)]  # today's polls so far
        for at in spent:
            cache.requests.reserve_request(at, BACKGROUND_LOG_BUCKET, [])
        stops: list[float] = []
        async with open_session(
            resolved(service.key), cache=cache, transport=slow, clock=lambda: now[0]
        ) as session:
            while backfill_state.pending(cache):
                step = await backfill_step(session, should_yield=lambda: False, retry=FAST_RETRY)
                assert step is not None
                if step.stop is Stop.BUDGET:
                    assert step.resumes_at is not None and step.resumes_at > now[0]
                    stops.append(now[0])
                    now[0] = step.resumes_at
        assert local_issues(cache) == await server_issues(service)
    background = sorted([*spent, *slow.sent])
    busiest = max(sum(1 for at in background if start <= at < start + day) for start in background)
    assert busiest <= share
    assert len(slow.sent) == 5 + sum(1 for at in slow.sent if at >= stops[0])  # 5 on day one
    assert len(stops) == 1 and stops[0] - spent[0] < day


class Unavailable(httpx.AsyncBaseTransport):
    """A server whose issue lists answer 503 (a proxy in trouble); `lists` counts them."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.lists = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and request.url.path.endswith("/issues"):
            self.lists += 1
            return httpx.Response(503, json={"error": {"code": "unavailable", "message": "x"}})
        return await self.inner.handle_async_request(request)


async def test_the_retries_of_the_last_request_of_the_share_do_not_go_past_it(
    tmp_path: Path, cache: Cache
) -> None:
    """One request left of the day's share, and the server answers it 503: the retry that
    would follow is not sent (each would count against the day), the backfill stops for the
    day instead of failing, and its cursor stays where it was."""
    now = [1_900_000_000.0]
    async with served(tmp_path, ISSUES, plan="free") as service:
        async with session_on(service, cache) as session:
            await pull(session, head_first=True, finish_backfill=False)
        for index in range(500 - 101):  # the polls' 100 and one request are left
            cache.requests.reserve_request(now[0] - 3_600 + index, BACKGROUND_LOG_BUCKET, [])
        cursor = backfill_state.backfill_cursor(cache)
        failing = Unavailable(service.transport())
        async with open_session(
            resolved(service.key), cache=cache, transport=failing, clock=lambda: now[0]
        ) as session:
            step = await backfill_step(session, should_yield=lambda: False, retry=FAST_RETRY)
        assert step is not None and step.stop is Stop.BUDGET and step.resumes_at is not None
        assert failing.lists == 1
        assert backfill_state.backfill_cursor(cache) == cursor and backfill_state.pending(cache)


def open_with_clock(service: Service, cache: Cache, clock: Callable[[], float]):  # type: ignore[no-untyped-def]
    from test_pull_support import resolved

    from sync.session import open_session

    return open_session(
        resolved(service.key), cache=cache, transport=service.transport(), clock=clock
    )


def published_only(app: App) -> App:
    """A server with the published API alone as far as a pull sees: no `/me` (404, so no
    views), no tombstones (400 to `include_deleted`), sync order kept."""
    refusing = refusing_tombstones(app)

    async def variant(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].endswith("/me"):
            scope = {**scope, "path": scope["path"] + "-not-served"}
        await refusing(scope, receive, send)

    return variant


async def test_without_me_or_tombstones_a_delete_during_the_backfill_is_found_after_it(
    tmp_path: Path, cache: Cache
) -> None:
    async with served(tmp_path, ISSUES, wrap=published_only) as service:
        recorder = Recorder(service.transport())
        requests, held = await _head(service, cache, recorder)
        assert requests == 2
        shown = backfill_state.progress(cache)
        assert shown is not None and shown.views == "unsupported"
        gone = sorted(held)[0]
        async with service.api() as api:
            (await api.delete(f"/issues/{gone}")).raise_for_status()
        async with session_on(service, cache) as session:
            assert session.features.tombstones is not True
            await pull(session, retry=FAST_RETRY)  # the backfill, then the count check
        assert local_issues(cache) == await server_issues(service)
    assert gone not in local_issues(cache)
