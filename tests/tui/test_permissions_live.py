"""What the key may do, learned while the app runs (issue 20): `/me` read when the engine
connects, or a 403 naming a permission, reaches the app as `PermissionsChanged`, and the list,
the detail and the settings hide or disable what the key may no longer do at once, with one
line saying why; a rename the key may not make fails in the outbox, saying what to do."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_read_only import WRITE_KEYS, footer_keys
from textual.widgets import Input, Static
from tui_support import AppFactory, Notices, screen_lines, settle

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import Cache, EntryState, Resource
from demo.service import DemoService
from server.keys import create_key
from sync.connection import Connection
from sync.permissions import KeyPermissions
from tracker_tui.app import TrackerApp, make_app
from tracker_tui.engine_link import EngineLink
from tracker_tui.messages import PermissionsChanged
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.screens.read_only import READ_ONLY_NOTICE
from tracker_tui.screens.settings import SettingsScreen
from tracker_tui.widgets.comment_box import CommentBox

SIZE = (120, 36)
DEADLINE = 30.0
READER = KeyPermissions(frozenset({"issues:read", "projects:read", "comments:read"}))


@pytest.fixture(scope="module")
def service() -> Iterator[DemoService]:
    with DemoService(issues=5) as running:
        yield running


def profile(service: DemoService, key: str) -> ResolvedProfile:
    return ResolvedProfile("demo", service.base_url, "Demo", Secret(key), KeySource.NONE)


async def until(condition: Callable[[], bool], pilot: Any) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, "not there in time"
        await asyncio.sleep(0.05)
        await pilot.pause()


def text(app: TrackerApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def last_sync(app: TrackerApp) -> object:
    return None if app.sync_status is None else app.sync_status.last_sync


def permission_notices(notices: Notices) -> list[str]:
    return [text for text in notices.texts() if text.startswith("This API key lacks")]


async def test_the_list_and_detail_drop_their_write_keys_when_the_key_turns_out_read_only(
    app_factory: AppFactory, cache: Cache, notices: Notices
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert {"e", "c", "space"} <= footer_keys(app)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)
        assert "e" in footer_keys(app) and app.screen.query_one(CommentBox).display
        app.post_message(PermissionsChanged(READER))
        await settle(pilot)
        assert app.read_only
        assert "e" not in footer_keys(app) and "c" not in app.screen.active_bindings
        assert not app.screen.query_one(CommentBox).display
        assert screen_lines(app)[-2].rstrip().endswith("read-only")
        assert permission_notices(notices) == [
            "This API key lacks `issues:write`, `projects:write`, `comments:write`, "
            "`webhooks:manage`, `admin` (the server said so): changes are off (read-only); "
            "writes already queued wait in the outbox."
        ]
        await pilot.press("escape")
        await settle(pilot)
        assert set(WRITE_KEYS).isdisjoint(app.screen.active_bindings)
        assert footer_keys(app).isdisjoint(WRITE_KEYS)
        assert screen_lines(app)[-2].rstrip().endswith("read-only")
        await pilot.press("c")
        await settle(pilot)
        app.post_message(PermissionsChanged(READER))
        await settle(pilot)
    assert cache.outbox.entries() == []
    assert notices.texts().count(READ_ONLY_NOTICE) == 1
    assert len(permission_notices(notices)) == 1


async def test_a_key_learned_read_only_by_me_at_connect_hides_the_writes_at_once(
    service: DemoService, tmp_path: Path, notices: Notices
) -> None:
    """Nothing known of the key at start (as after a login on a server whose `/me` failed):
    the engine's `/me` tells, and the settings' tabs follow while open."""
    key = create_key(service.db_path, "Demo", "reader", permissions=["issues:read"])
    with Cache.open(tmp_path / "cache.db") as cache:
        link = EngineLink(profile(service, key), cache)
        app = make_app(cache=cache, sync=link, admin=link, profile="demo")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("comma")
            await settle(pilot)
            assert isinstance(app.screen, SettingsScreen)
            await until(lambda: app.read_only, pilot)
            await settle(pilot)
            screen = app.screen
            assert screen.query_one("#workspace-name", Input).disabled
            assert screen.query_one("#key-name", Input).disabled
            assert "lacks `admin`" in text(app, "#keys-note")
            assert "lacks `webhooks:manage`" in text(app, "#webhooks-note")
            [notice] = permission_notices(notices)
            assert notice.startswith("This API key lacks `issues:write`, `projects:read`")
            assert "projects and comments are not synced" in notice
            await pilot.press("escape")
            await settle(pilot)
            assert footer_keys(app).isdisjoint(WRITE_KEYS)
            for _ in range(3):  # passes of the loop: the projects it may not read stay quiet
                before = last_sync(app)
                await pilot.press("ctrl+r")
                await until(lambda before=before: last_sync(app) != before, pilot)
            await settle(pilot)
            assert cache.server.local_count(Resource.ISSUES) == 5
            assert cache.server.local_count(Resource.PROJECTS) == 0
            assert app.sync_status is not None
            assert app.sync_status.connection.kind is Connection.ONLINE
            assert not [text for text in notices.texts() if text.startswith("Sync failed")]
            assert len(permission_notices(notices)) == 1


async def test_a_rename_the_key_may_not_make_fails_and_says_what_to_do(
    service: DemoService, tmp_path: Path
) -> None:
    """Queued offline before the key's permissions were known (the workspace read by an earlier
    run); the push's 403 fails it, never drops it, and the settings and sync panel say why."""
    key = create_key(service.db_path, "Demo", "writer", permissions=["issues:read", "issues:write"])
    with Cache.open(tmp_path / "cache.db") as cache:
        link = EngineLink(profile(service, service.key.reveal()), cache)
        app = make_app(cache=cache, sync=link, admin=link, profile="demo")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("comma")
            await until(lambda: cache.reads.workspace() is not None, pilot)
        known = cache.reads.workspace()
        assert known is not None
        workspace = {"id": known.id, "name": known.name}
        assert workspace["name"] == "Demo"
        entry = cache.outbox.update(Resource.WORKSPACES, known.id, {"name": "Not yours"})
        assert entry is not None
        link = EngineLink(profile(service, key), cache)
        app = make_app(cache=cache, sync=link, admin=link, profile="demo")
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: cache.outbox.entry(entry.id).state is EntryState.FAILED, pilot)
            failed = cache.outbox.entry(entry.id)
            assert failed.last_error is not None
            assert "the API key lacks admin" in failed.last_error
            assert f"outbox retry {entry.id}" in failed.last_error
            await pilot.press("comma")
            await until(lambda: "failed" in text(app, "#workspace-info"), pilot)
            shown = text(app, "#workspace-info")
            assert workspace["name"] in shown and "rename to Not yours failed" in shown
            assert "lacks admin" in shown
            await until(lambda: "1 failed" in screen_lines(app)[-2], pilot)
            await pilot.press("escape", "y")
            await settle(pilot)
            assert any("lacks admin" in line for line in screen_lines(app))
        shown_now = cache.reads.workspace()
        assert shown_now is not None and shown_now.name == workspace["name"]


async def test_permissions_learned_as_the_app_closes_do_not_fail_it(
    app_factory: AppFactory,
) -> None:
    """The engine's report can arrive once the last screen is gone (seen in CI: a webhook
    test's app stopped on `ScreenStackError` redrawing bindings with no screen)."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
    assert not app.screen_stack
    app.learn_permissions(PermissionsChanged(READER))
    assert app.read_only
