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
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from textual.message import Message
from textual.widgets import OptionList, Static
from tui_support import settle

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import ACTIVE_STATES, Cache, EntryState, IssueFilter, IssueSort, Resource
from demo.service import DemoService
from server.app import create_app
from server.keys import create_key, revoke_key
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.connection import Connection
from tracker_tui.app import TrackerApp, make_app
from tracker_tui.engine_link import EngineLink
from tracker_tui.messages import SourceFailed, SyncFailed
from tracker_tui.server_clock import ServerClock
from tracker_tui.widgets.issue_list import IssueList
from tracker_tui.widgets.status_bar import StatusBar

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
            assert app.sync_status is not None
            assert app.sync_status.connection.kind is Connection.ONLINE
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
            if isinstance(message, SourceFailed | SyncFailed):
                failures.append(message)

        async with app.run_test(size=(120, 36), message_hook=hook) as pilot:
            await until(lambda: app.sync_status is not None, pilot)
            await asyncio.sleep(1)
            await pilot.pause()
            assert app.sync_status is not None
            assert app.sync_status.connection.kind is Connection.OFFLINE
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


WINDOW = 1.0
"""The service's and the engine's rate-limit "minute", scaled down: every wait of the engine
(retries, backoff) scales with it."""
SHOWN_WITHIN = 2.0
"""How soon every screen must show what the engine learnt (issue 14, defect 3)."""


def start_service(db: Path, port: int = 0) -> ServiceThread:
    """The reference service over `db` on a loopback port (the same one again, to restart)."""
    return ServiceThread(create_app(db, window_seconds=WINDOW), port=port).__enter__()


def bar_text(app: TrackerApp) -> str:
    return app.screen.query_one(StatusBar).render().plain


async def shown_within(seconds: float, condition: Callable[[], bool], pilot: object) -> float:
    """Wait up to `seconds` for `condition`; how long it took."""
    began = time.monotonic()
    while not condition():
        assert time.monotonic() - began < seconds, "not shown in time"
        await asyncio.sleep(0.05)
        await pilot.pause()  # type: ignore[attr-defined]
    return time.monotonic() - began


async def test_an_edit_made_offline_is_sent_when_the_server_returns(tmp_path: Path) -> None:
    """The server stops, the user changes a priority, the server comes back on the same port:
    every screen says offline within 2 s, and the edit reaches the server with no other edit
    and no key pressed; then the status bar shows nothing pending (issue 14, defects 2 and 3)."""
    db = tmp_path / "server.db"
    key = seed_workspace(db, "Demo", 30, plan="pro")
    service = start_service(db)
    port = urlsplit(service.base_url).port
    assert port is not None
    profile = ResolvedProfile("demo", service.base_url, "Demo", Secret(key), KeySource.NONE)
    try:
        with Cache.open(tmp_path / "cache.db") as cache:
            link = EngineLink(profile, cache, window_seconds=WINDOW)
            app = make_app(cache=cache, sync=link, profile="demo")
            async with app.run_test(size=(120, 36)) as pilot:
                await until(lambda: listed(app) == 30 and "● online" in bar_text(app), pilot)
                service.__exit__(None, None, None)
                issue_id, wanted = await change_a_priority(app, cache, pilot)
                await shown_within(
                    SHOWN_WITHIN,
                    lambda: "○ offline" in bar_text(app) and "↑ 1 pending" in bar_text(app),
                    pilot,
                )
                service = start_service(db, port)
                await until(lambda: not cache.outbox(ACTIVE_STATES), pilot)
                assert server_value(service, key, issue_id, "priority") == wanted
                await until(lambda: "● online" in bar_text(app), pilot)
                await until(lambda: "↑ 0 pending" in bar_text(app), pilot)
    finally:
        service.__exit__(None, None, None)


async def test_a_revoked_key_shows_as_refused_on_every_screen(tmp_path: Path) -> None:
    """The key is revoked while the app runs: the next request's 401 makes the list, the detail
    view and the sync panel say "key refused" within 2 s, not "online" with a toast (issue
    14, defect 3)."""
    db = tmp_path / "server.db"
    key = seed_workspace(db, "Demo", 10, plan="pro")
    service = start_service(db)
    profile = ResolvedProfile("demo", service.base_url, "Demo", Secret(key), KeySource.NONE)
    try:
        with Cache.open(tmp_path / "cache.db") as cache:
            link = EngineLink(profile, cache, window_seconds=WINDOW)
            app = make_app(cache=cache, sync=link, profile="demo")
            async with app.run_test(size=(120, 36)) as pilot:
                await until(lambda: listed(app) == 10 and "● online" in bar_text(app), pilot)
                revoke_key(db, key)
                await change_a_priority(app, cache, pilot)  # its push meets the 401
                await shown_within(SHOWN_WITHIN, lambda: "✗ key refused" in bar_text(app), pilot)
                await pilot.press("escape")
                await pilot.pause()
                assert "✗ key refused" in bar_text(app)
                await pilot.press("y")
                await pilot.pause()
                summary = str(app.screen.query_one("#sync-summary", Static).render())
                assert "✗ key refused" in summary and "revoked" in summary
                assert "✗ key refused" in bar_text(app)
    finally:
        service.__exit__(None, None, None)


async def change_a_priority(app: TrackerApp, cache: Cache, pilot: Any) -> tuple[str, str]:
    """Open the highlighted issue and pick another priority for it, as a user does."""
    await pilot.press("enter")
    await settle(pilot)
    issue_id: str = app.screen.issue_id  # type: ignore[attr-defined]
    before = cache.issue(issue_id)
    assert before is not None
    wanted = "low" if before.issue.priority != "low" else "high"
    await pilot.press("p")
    await pilot.pause()
    choice = app.screen.query_one(OptionList)
    choice.highlighted = next(
        index
        for index in range(choice.option_count)
        if choice.get_option_at_index(index).id == wanted
    )
    await pilot.press("enter")
    return issue_id, wanted


def server_value(service: ServiceThread, key: str, issue_id: str, field: str) -> object:
    headers = {"Authorization": f"Bearer {key}"}
    answer = httpx.get(f"{service.base_url}/issues/{issue_id}", headers=headers, timeout=5)
    return answer.json()[field]


async def test_a_refused_write_is_counted_as_failed_on_the_bar_and_the_panel(
    tmp_path: Path,
) -> None:
    """The server refuses an edit: the status bar says "0 pending · 1 failed", as the sync
    panel does, not "↑ 1 pending" (issue 14, defect 16)."""
    db = tmp_path / "server.db"
    key = seed_workspace(db, "Demo", 10, plan="pro")
    service = start_service(db)
    profile = ResolvedProfile("demo", service.base_url, "Demo", Secret(key), KeySource.NONE)
    try:
        with Cache.open(tmp_path / "cache.db") as cache:
            link = EngineLink(profile, cache, window_seconds=WINDOW)
            app = make_app(cache=cache, sync=link, profile="demo")
            async with app.run_test(size=(120, 36)) as pilot:
                await until(lambda: listed(app) == 10 and "● online" in bar_text(app), pilot)
                target = cache.window(IssueFilter(), IssueSort(), 0, 1)[0]
                cache.update(Resource.ISSUES, target.id, {"title": ""})  # refused: 400
                link.poke()
                await until(lambda: bool(cache.outbox([EntryState.FAILED])), pilot)
                await until(lambda: "↑ 0 pending · 1 failed" in bar_text(app), pilot)
                await pilot.press("y")
                await settle(pilot)
                subtitle = str(app.screen.query_one("#sync-summary", Static).border_subtitle)
                assert "0 pending" in subtitle and "1 failed" in subtitle
                assert "↑ 0 pending · 1 failed" in bar_text(app)
    finally:
        service.__exit__(None, None, None)


async def test_writes_the_key_may_not_make_are_told_not_only_counted(tmp_path: Path) -> None:
    """A key that reads but may not write: the edit waits as pending, and the user is told why
    once, instead of "↑ 1 pending" with no end and no reason."""
    db = tmp_path / "server.db"
    seed_workspace(db, "Demo", 10, plan="pro")
    reader = create_key(db, "Demo", "reader", ["issues:read", "projects:read", "comments:read"])
    service = start_service(db)
    profile = ResolvedProfile("demo", service.base_url, "Demo", Secret(reader), KeySource.NONE)
    told: list[str] = []

    def hook(message: Message) -> None:
        if isinstance(message, SyncFailed):
            told.append(message.error)

    try:
        with Cache.open(tmp_path / "cache.db") as cache:
            link = EngineLink(profile, cache, window_seconds=WINDOW)
            app = make_app(cache=cache, sync=link, profile="demo")
            async with app.run_test(size=(120, 36), message_hook=hook) as pilot:
                await until(lambda: listed(app) == 10 and "● online" in bar_text(app), pilot)
                target = cache.window(IssueFilter(), IssueSort(), 0, 1)[0]
                cache.update(Resource.ISSUES, target.id, {"title": "Not allowed"})
                link.poke()
                await until(lambda: bool(told), pilot)
                link.poke()  # the next attempt is refused the same way: not told again
                await asyncio.sleep(1)
                await pilot.pause()
                assert "↑ 1 pending" in bar_text(app)
    finally:
        service.__exit__(None, None, None)
    assert len(told) == 1
    assert "issues:write" in told[0] and "wait in the outbox" in told[0]
