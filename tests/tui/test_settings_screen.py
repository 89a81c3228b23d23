"""The settings screen (`,`, issue 20) over the real sync engine and the reference service on a
loopback port: the workspace renamed, a key and a webhook made (their secrets shown once, never
queued), the usage tab's bars, what a key without `admin` or `issues:write` sees, and what an
app with no connection says. It fits 80 by 24."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from textual.widgets import DataTable, Input, Static, TabbedContent
from tui_support import screen_lines, settle

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import Cache, EntryState, Resource
from demo.service import DemoService
from server.keys import create_key
from sync.connection import Connection, ConnectionState
from sync.permissions import KeyPermissions
from tracker_tui.admin_link import OFFLINE_NOTICE
from tracker_tui.app import KEY_READ_ONLY, TrackerApp, make_app
from tracker_tui.engine_link import EngineLink
from tracker_tui.messages import SyncStatusChanged
from tracker_tui.screens.settings import SettingsScreen
from tracker_tui.widgets.workspace_pane import NOT_READ_YET

SIZE = (80, 24)
DEADLINE = 30.0


@pytest.fixture(scope="module")
def service() -> Iterator[DemoService]:
    with DemoService(issues=20) as running:
        yield running


def profile(service: DemoService, key: Secret) -> ResolvedProfile:
    return ResolvedProfile("demo", service.base_url, "Demo", key, KeySource.NONE)


async def until(condition: Callable[[], bool], pilot: Any) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, "not there in time"
        await asyncio.sleep(0.05)
        await pilot.pause()


def text(app: TrackerApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def server_get(service: DemoService, path: str) -> Any:
    headers = {"Authorization": f"Bearer {service.key.reveal()}"}
    return httpx.get(f"{service.base_url}{path}", headers=headers).json()


def states(table: DataTable[Any]) -> list[str]:
    return [str(table.get_row_at(row)[2]) for row in range(table.row_count)]


def server_name(service: DemoService) -> str:
    return str(server_get(service, "/workspaces")["data"][0]["name"])


async def open_tab(pilot: Any, app: TrackerApp, tab: str) -> None:
    app.screen.query_one(TabbedContent).active = f"tab-{tab}"
    await settle(pilot)


async def test_settings_rename_make_a_key_and_a_webhook_and_show_usage(
    service: DemoService, tmp_path: Path
) -> None:
    with Cache.open(tmp_path / "cache.db") as cache:
        link = EngineLink(profile(service, service.key), cache)
        app = make_app(cache=cache, sync=link, admin=link, profile="demo")
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: app.sync_status is not None and link._session is not None, pilot)
            await pilot.press("comma")
            await settle(pilot)
            assert isinstance(app.screen, SettingsScreen)
            await until(lambda: "Demo" in text(app, "#workspace-info"), pilot)

            app.screen.query_one("#workspace-name", Input).focus()
            await pilot.press(*"Renamed", "enter")
            await until(lambda: "Renamed" in text(app, "#workspace-info"), pilot)
            await until(lambda: server_name(service) == "Renamed", pilot)
            [renamed] = cache.outbox.entries()
            assert (renamed.resource, renamed.changes) == (Resource.WORKSPACES, {"name": "Renamed"})
            await until(lambda: cache.outbox.entry(renamed.id).state is EntryState.DONE, pilot)
            await until(lambda: "pending" not in text(app, "#workspace-info"), pilot)

            await open_tab(pilot, app, "keys")
            keys = app.screen.query_one("#keys", DataTable)
            await until(lambda: keys.row_count >= 1, pilot)
            await until(lambda: states(keys).count("this key") == 1, pilot)
            before = keys.row_count
            app.screen.query_one("#key-name", Input).focus()
            await pilot.press(*"bot", "tab", *"issues:read", "enter")
            await until(lambda: "trk_" in text(app, "#key-secret"), pilot)
            await until(lambda: keys.row_count == before + 1, pilot)
            secret = text(app, "#key-secret").split()[1]
            assert "Shown once" in text(app, "#key-secret")
            made = [k for k in server_get(service, "/api-keys")["data"] if k["name"] == "bot"]
            assert made and made[0]["permissions"] == ["issues:read"]
            assert cache.outbox.entries() == [cache.outbox.entry(renamed.id)]
            assert secret.startswith("trk_")
            assert secret.encode() not in (tmp_path / "cache.db").read_bytes()

            await open_tab(pilot, app, "webhooks")
            app.screen.query_one("#hook-url", Input).focus()
            await pilot.press(*"http://127.0.0.1:9/hook", "enter")
            await until(lambda: "whsec_" in text(app, "#hook-secret"), pilot)
            hooks = app.screen.query_one("#hooks", DataTable)
            await until(lambda: hooks.row_count == 1, pilot)
            hook_id = str(hooks.get_row_at(0)[0])
            hooks.focus()
            await pilot.press("d")
            await settle(pilot)
            await pilot.press("y")
            await until(lambda: hooks.row_count == 0, pilot)
            assert all(h["id"] != hook_id for h in server_get(service, "/webhooks")["data"])

            await open_tab(pilot, app, "usage")
            bars = text(app, "#usage-bars")
            assert "pro plan" in bars and "day" in bars and "░" in bars
            assert "Background sync will spend at most" in bars
            assert "POST /issues" in bars and "background sync" in bars


async def test_a_key_without_admin_or_issues_write_sees_what_it_may_not_do(
    service: DemoService, tmp_path: Path
) -> None:
    key = create_key(service.db_path, "Demo", "reader", permissions=["issues:read"])
    known = KeyPermissions(frozenset({"issues:read"}))
    with Cache.open(tmp_path / "cache.db") as cache:
        link = EngineLink(profile(service, Secret(key)), cache)
        app = make_app(cache=cache, sync=link, admin=link, profile="demo", permissions=known)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert app.read_only
            assert any(n.message == KEY_READ_ONLY for n in app._notifications)
            footer = screen_lines(app)[-1]
            assert "New" not in footer and "Edit" not in footer
            await pilot.press("comma")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, SettingsScreen)
            assert screen.query_one("#workspace-name", Input).disabled
            assert "lacks `admin`" in text(app, "#workspace-note")
            await open_tab(pilot, app, "keys")
            assert screen.query_one("#key-name", Input).disabled
            assert screen.query_one("#keys", DataTable).row_count == 0
            assert not screen.check_action("remove", ())
            await open_tab(pilot, app, "webhooks")
            assert "lacks `webhooks:manage`" in text(app, "#webhooks-note")


async def test_without_a_connection_settings_say_they_are_online_only(
    tmp_path: Path,
) -> None:
    with Cache.open(tmp_path / "cache.db") as cache:
        app = make_app(cache=cache, profile="demo")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("comma")
            await settle(pilot)
            notes = [n.message for n in app._notifications]
            assert [note for note in notes if "Online only" in note] == [OFFLINE_NOTICE], notes
            assert OFFLINE_NOTICE in text(app, "#settings-title")
            app.screen.query_one("#workspace-name", Input).focus()
            await pilot.press(*"New name", "enter")
            await settle(pilot)
            assert [n.message for n in app._notifications] == [*notes, NOT_READ_YET]
            assert cache.outbox.entries() == []
            await open_tab(pilot, app, "usage")
            assert "free plan" in text(app, "#usage-bars")


async def test_offline_a_rename_is_queued_shown_at_once_and_sent_once_connected(
    service: DemoService, tmp_path: Path
) -> None:
    """The workspace was read by an earlier run; this one cannot reach the server: the rename
    shows at once, pending, counted in the status bar and listed in the sync panel; the next
    run with a connection sends it."""
    workspace = server_get(service, "/workspaces")["data"][0]
    away = ResolvedProfile("demo", "http://127.0.0.1:9/v1", "Demo", service.key, KeySource.NONE)
    with Cache.open(tmp_path / "cache.db") as cache:
        cache.server.apply_page(Resource.WORKSPACES, [workspace])
        link = EngineLink(away, cache)
        app = make_app(cache=cache, sync=link, admin=link, profile="demo")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("comma")
            await until(lambda: workspace["name"] in text(app, "#workspace-info"), pilot)
            app.screen.query_one("#workspace-name", Input).focus()
            await pilot.press(*"Queued offline", "enter")
            await until(lambda: "Queued offline" in text(app, "#workspace-info"), pilot)
            assert "(rename pending)" in text(app, "#workspace-info")
            await until(lambda: "↑ 1 pending" in screen_lines(app)[-2], pilot)
            [entry] = cache.outbox.entries()
            assert entry.state is EntryState.PENDING and entry.changes == {"name": "Queued offline"}
            await pilot.press("escape", "y")
            await settle(pilot)
            pending = text(app, "#pending")
            assert "workspace" in pending and "Queued offline" in pending, pending
            assert server_name(service) == workspace["name"]
        link = EngineLink(profile(service, service.key), cache)
        app = make_app(cache=cache, sync=link, admin=link, profile="demo")
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: server_name(service) == "Queued offline", pilot)
            await until(lambda: cache.outbox.entry(entry.id).state is EntryState.DONE, pilot)
    rename_back(service, workspace)


def rename_back(service: DemoService, workspace: dict[str, Any]) -> None:
    """The service is shared by the module's tests: its workspace gets its name back."""
    headers = {"Authorization": f"Bearer {service.key.reveal()}"}
    path = f"{service.base_url}/workspaces/{workspace['id']}"
    httpx.patch(path, json={"name": workspace["name"]}, headers=headers).raise_for_status()


async def test_every_tab_fits_80_by_24(service: DemoService, tmp_path: Path) -> None:
    shown = {
        "workspace": ["Rename to", "this key may: ", "plan pro"],
        "keys": ["ID ", "PERMISSIONS", "new key's name", "d Revoke / delete"],
        "webhooks": ["URL", "EVENT  TYPE", "receiver URL", "events, blank: *"],
        "usage": ["POST /issues", "background sync", "Alert at 80% of the day"],
    }
    with Cache.open(tmp_path / "cache.db") as cache:
        link = EngineLink(profile(service, service.key), cache)
        app = make_app(cache=cache, sync=link, admin=link, profile="demo")
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: link._session is not None, pilot)
            await pilot.press("comma")
            await until(lambda: "this key may: admin," in text(app, "#workspace-info"), pilot)
            for tab, wanted in shown.items():
                await open_tab(pilot, app, tab)
                if tab == "keys":
                    app.screen.query_one("#keys", DataTable).focus()
                    await settle(pilot)
                # The first pull's progress takes the status bar's place until it ends.
                await until(lambda: "budget" in screen_lines(app)[-2], pilot)
                lines = screen_lines(app)
                assert len(lines) == 24
                for words in wanted:
                    assert any(words in line for line in lines), (tab, words, lines)


def _report(left: int, limit: int) -> SyncStatusChanged:
    return SyncStatusChanged(
        profile="demo",
        connection=ConnectionState(Connection.ONLINE),
        budget_minute=50,
        budget_day=left,
        day_limit=limit,
    )


async def test_the_status_bar_warns_past_the_days_alert_and_says_what_is_done(
    tmp_path: Path,
) -> None:
    with Cache.open(tmp_path / "cache.db") as cache:
        app = make_app(cache=cache, profile="demo", usage_alert=90)
        async with app.run_test(size=(120, 24)) as pilot:
            await settle(pilot)
            app.post_message(_report(left=150, limit=1_000))
            await settle(pilot)
            assert "day budget" not in screen_lines(app)[-2]
            assert not [n for n in app._notifications if n.title == "Rate limits"]
            app.post_message(_report(left=80, limit=1_000))
            await settle(pilot)
            bar = screen_lines(app)[-2]
            assert "⚠ day budget 92%: background sync slows, stops at its half" in bar
            app.post_message(_report(left=70, limit=1_000))
            await settle(pilot)
            alerts = [n for n in app._notifications if n.title == "Rate limits"]
            assert len(alerts) == 1 and "yours is kept" in alerts[0].message
        app = make_app(cache=cache, profile="demo")
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            app.post_message(_report(left=150, limit=1_000))
            await settle(pilot)
            assert "⚠ day budget 85% used" in screen_lines(app)[-2]
