"""The app over the real sync engine and a real service on a loopback port.

The promises checked here are the ones a user sees: data arrives without a key pressed, a local
edit reaches the server, and a server that cannot be reached is "offline", not an error.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from textual.message import Message

from cache import ACTIVE_STATES, Cache, IssueFilter, IssueSort, Resource
from sync.credentials import KeySource, ResolvedProfile
from sync.secret import Secret
from tracker_tui.app import TrackerApp, make_app
from tracker_tui.demo_service import DemoService
from tracker_tui.engine_link import EngineLink
from tracker_tui.messages import SourceFailed
from tracker_tui.server_clock import ServerClock
from tracker_tui.widgets.issue_list import IssueList

ISSUES = 120
DEADLINE = 30.0


@pytest.fixture(scope="module")
def service() -> Iterator[DemoService]:
    with DemoService(issues=ISSUES) as running:
        yield running


def profile_for(service: DemoService) -> ResolvedProfile:
    return ResolvedProfile(
        name="demo",
        server=service.base_url,
        workspace="Demo",
        key=service.key,
        key_source=KeySource.NONE,
    )


async def until(condition: Callable[[], bool], pilot: object) -> None:
    """Wait for something the engine does in the background, up to a generous deadline."""
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, "the engine did not get there in time"
        await asyncio.sleep(0.1)
        await pilot.pause()  # type: ignore[attr-defined]


def listed(app: TrackerApp) -> int:
    return app.screen.query_one(IssueList).count


async def test_pulled_issues_appear_and_a_local_edit_reaches_the_server(
    service: DemoService, tmp_path: Path
) -> None:
    with Cache.open(tmp_path / "cache.db") as cache:
        link = EngineLink(profile_for(service), cache)
        app = make_app(cache=cache, sync=link, profile="demo")
        async with app.run_test(size=(120, 36)) as pilot:
            await until(lambda: listed(app) == ISSUES, pilot)
            assert app.sync_status is not None and app.sync_status.online
            assert app.sync_status.budget_minute is not None

            target = cache.window(IssueFilter(), IssueSort(), 0, 1)[0]
            wanted = "low" if target.priority != "low" else "high"
            cache.update(Resource.ISSUES, target.id, {"priority": wanted})
            link.poke()
            await until(lambda: server_priority(service, target.id) == wanted, pilot)
            await until(lambda: not cache.outbox(ACTIVE_STATES), pilot)


async def test_times_are_read_against_the_servers_clock(
    service: DemoService, tmp_path: Path
) -> None:
    """This machine's clock ten minutes fast: the measured offset brings "now" back to the
    server's, for the server's stamps and for the last sync alike."""
    ahead = 600.0
    server_clock = ServerClock(local=lambda: datetime.now(UTC) + timedelta(seconds=ahead))
    with Cache.open(tmp_path / "cache.db") as cache:
        link = EngineLink(
            profile_for(service),
            cache,
            clock=lambda: time.time() + ahead,
            server_clock=server_clock,
        )
        app = make_app(cache=cache, sync=link, profile="demo", clock=server_clock.now)
        async with app.run_test(size=(120, 36)) as pilot:
            await until(lambda: app.sync_status is not None and app.sync_status.last_sync, pilot)
            assert app.sync_status is not None and app.sync_status.last_sync is not None
            assert abs(server_clock.offset + ahead) < 5
            assert abs((server_clock.now() - datetime.now(UTC)).total_seconds()) < 5
            assert abs((app.sync_status.last_sync - datetime.now(UTC)).total_seconds()) < 5


def server_priority(service: DemoService, issue_id: str) -> str:
    headers = {"Authorization": f"Bearer {service.key.reveal()}"}
    answer = httpx.get(f"{service.base_url}/issues/{issue_id}", headers=headers, timeout=5)
    return str(answer.json()["priority"])


async def test_an_unreachable_server_is_offline_not_an_error(tmp_path: Path) -> None:
    unreachable = ResolvedProfile(
        name="away",
        server="http://127.0.0.1:9/v1",
        workspace=None,
        key=Secret("trk_" + "x" * 40),
        key_source=KeySource.NONE,
    )
    with Cache.open(tmp_path / "cache.db") as cache:
        app = make_app(cache=cache, sync=EngineLink(unreachable, cache), profile="away")
        failures: list[Message] = []

        def hook(message: Message) -> None:
            if isinstance(message, SourceFailed):
                failures.append(message)

        async with app.run_test(size=(120, 36), message_hook=hook) as pilot:
            await until(lambda: app.sync_status is not None, pilot)
            await asyncio.sleep(1)
            await pilot.pause()
            assert app.sync_status is not None and not app.sync_status.online
            assert failures == []


def webhooks_on(service: DemoService) -> int:
    headers = {"Authorization": f"Bearer {service.key.reveal()}"}
    answer = httpx.get(f"{service.base_url}/webhooks", headers=headers, timeout=5)
    return int(answer.json()["pagination"]["total"])


async def test_live_updates_register_a_webhook_for_the_session_only(
    service: DemoService, tmp_path: Path
) -> None:
    assert webhooks_on(service) == 0
    with Cache.open(tmp_path / "cache.db") as cache:
        app = make_app(cache=cache, sync=EngineLink(profile_for(service), cache, live=True))
        async with app.run_test(size=(120, 36)) as pilot:
            await until(lambda: webhooks_on(service) == 1, pilot)
    assert webhooks_on(service) == 0
