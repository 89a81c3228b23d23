"""The app, started against a real server, loads nothing of the reference service or the demo.

`tracker-tui` (no command) runs in a fresh interpreter as the console script runs it, on
TRACKER_SERVER and TRACKER_API_KEY pointing at the reference service on a loopback port, with
Textual's own headless driver and an auto-pilot in place of a terminal. Once the list shows
every issue the engine pulled, the pilot records `sys.modules` and quits with ctrl+q. Before the
demo had its own package, `tracker_tui.launch` imported it, and with it FastAPI, uvicorn and
the whole service, on every start.

The start path proper ends when the app asks its sync link to start, which it does right after
the frame that shows the list's rows: what was imported by then is the start's import budget.
It holds no network layer (httpx, pydantic, the engines), no sqlite_utils (the cache is at its
schema), no keyring (the key comes from TRACKER_API_KEY) and none of the screens and dialogs
not yet shown (docs/architecture.md#start-up).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from accounts.credentials import ENV_PROFILE_CACHE
from cache import Cache
from cache.paths import profile_path
from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from tracker_tui.probes import FIRST_DRAW_ENV

ROOT = Path(__file__).resolve().parents[2]
ISSUES = 25
NOT_AT_START = ("fastapi", "uvicorn", "starlette", "server", "demo")
NOT_BEFORE_SYNC = (
    *NOT_AT_START,
    *("httpx", "pydantic", "sync.client", "sync.models", "sync.session", "sync.engine"),
    *("sync.pull", "sync.push", "sync.admin", "tracker_tui.engine_link", "sqlite_utils"),
    *("keyring", "markdown_it", "tracker_tui.screens.issue_detail", "tracker_tui.screens.login"),
    *("tracker_tui.screens.settings", "tracker_tui.screens.issue_form"),
    *("textual.widgets._text_area", "textual.widgets._data_table"),
    *("tracker_tui.screens.help", "tracker_tui.screens.copy_menu", "tracker_tui.data.usage"),
    *("tracker_tui.screens.filter_dialog", "tracker_tui.screens.sort_dialog"),
    *("tracker_tui.screens.save_view_dialog", "tracker_tui.screens.views_dialog"),
    *("tracker_tui.screens.confirm", "sync.remembered", "sync.ratelimit.learned"),
)
"""What the app must not have imported by the time it asks the sync engine to start: the
network layer, and the screens and dialogs not shown yet (help, copy, filter, sort, views) with
the usage measures behind the settings screen (the status bar needs only the day's alert)."""

START = """
import dataclasses, gc, json, sys, time

built = []
process_class = dataclasses._process_class


def counted(cls, *args, **kwargs):
    built.append(cls.__module__ + "." + cls.__qualname__)
    return process_class(cls, *args, **kwargs)


dataclasses._process_class = counted
from textual.app import App

import tracker_tui.probes as probes
from tracker_tui.later_link import LaterLink

report, issues = sys.argv[1], int(sys.argv[2])
run = App.run
start = LaterLink.start
at_sync_start = {}


async def starting(self, post):
    if not at_sync_start:
        lists = pilot_app[0].screen.query("IssueList") if pilot_app else []
        at_sync_start["modules"] = sorted(sys.modules)
        at_sync_start["listed"] = lists.first().count if lists else None
    await start(self, post)


LaterLink.start = starting
pilot_app = []
at_first_frame = {}
record = probes.record_first_draw


def recorded(path):
    if not at_first_frame:
        at_first_frame["modules"] = sorted(sys.modules)
        at_first_frame["sync_started"] = bool(at_sync_start)
        at_first_frame["collecting"] = gc.isenabled()
        at_first_frame["dataclasses"] = list(built)
    record(path)


probes.record_first_draw = recorded


async def until_listed(pilot):
    pilot_app.append(pilot.app)
    first_draw = sorted(sys.modules)
    deadline = time.monotonic() + 60
    listed = 0
    while time.monotonic() < deadline:
        await pilot.pause(0.1)
        listed = pilot.app.screen.query_one("IssueList").count
        if listed == issues:
            break
    found = {
        "listed": listed,
        "first_draw": first_draw,
        "listed_at": sorted(sys.modules),
        "at_sync_start": at_sync_start,
        "at_first_frame": at_first_frame,
        "collecting_once_listed": gc.isenabled(),
        "frozen_once_listed": gc.get_freeze_count(),
    }
    with open(report, "w") as out:
        json.dump(found, out)
    await pilot.press("ctrl+q")


def headless(self, *args, **kwargs):
    return run(self, *args, **{**kwargs, "headless": True, "auto_pilot": until_listed})


App.run = headless
import tracker_tui.cli
from tracker_tui.cli import main

tracker_tui.cli.require_terminal = lambda: None  # headless: no terminal, on purpose
sys.exit(main([]))
"""


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    db = tmp_path_factory.mktemp("service") / "service.db"
    key = seed_workspace(db, "Acme", ISSUES, plan="enterprise")
    with ServiceThread(create_app(db)) as running:
        yield running.base_url, key


def loaded(modules: list[str], forbidden: tuple[str, ...] = NOT_AT_START) -> list[str]:
    return sorted(
        name
        for name in forbidden
        if any(module == name or module.startswith(name + ".") for module in modules)
    )


@pytest.fixture(scope="module")
def started(service: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One start of the app on the service, as the console script starts it: what it had
    imported at its first frame, when it asked the sync link to start, and once listed."""
    base_url, key = service
    tmp_path = tmp_path_factory.mktemp("start")
    env = {
        **os.environ,
        "TRACKER_HOME": str(tmp_path / "home"),
        "TRACKER_SERVER": base_url,
        "TRACKER_API_KEY": key,
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        FIRST_DRAW_ENV: str(tmp_path / "first-draw"),
    }
    with Cache.open(profile_path(ENV_PROFILE_CACHE, tmp_path / "home" / "data")):
        pass  # made and migrated: the start measured is not the first one
    report = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", START, str(report), str(ISSUES)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(report.read_text())
    return found


def test_the_app_on_a_server_starts_without_the_service_or_the_demo(
    started: dict[str, Any],
) -> None:
    found = started
    assert found["listed"] == ISSUES
    assert "tracker_tui.app" in found["first_draw"]
    assert {"httpx", "sync.engine"} <= set(found["listed_at"])
    assert loaded(found["first_draw"]) == []
    assert loaded(found["listed_at"]) == []
    assert found["at_sync_start"]["listed"] == 0  # counted (the cache is empty before a pull)
    assert loaded(found["at_sync_start"]["modules"], NOT_BEFORE_SYNC) == []


NOT_AT_FIRST_FRAME = (
    *("cache.inbox", "cache.changelog", "tracker_tui.data.undo", "cache.undo"),
    *("tracker_tui.data.changes",),
)
"""What the list's first frame does not show, so does not wait on: the inbox's count (taken
when the sync link starts) and the bulk undo (when `u` is first pressed)."""


def test_the_first_frame_loads_neither_the_inbox_nor_the_undo(started: dict[str, Any]) -> None:
    assert loaded(started["at_first_frame"]["modules"], NOT_AT_FIRST_FRAME) == []
    assert "cache.inbox" in started["listed_at"]


def test_the_engine_starts_after_the_first_frame_of_the_list(started: dict[str, Any]) -> None:
    """The sync link starts once the frame showing the list is drawn, not when the list has
    counted its rows: the thread importing the engine would otherwise share the GIL with that
    frame (docs/architecture.md#start-up). It still starts, and the list fills from the pull."""
    found = started
    assert found["listed"] == ISSUES
    frame = found["at_first_frame"]
    assert frame["modules"], "the list recorded no first frame"
    assert frame["sync_started"] is False
    assert loaded(frame["modules"], ("httpx", "tracker_tui.engine_link", "sync.engine")) == []
    assert found["at_sync_start"]["modules"]


def test_no_garbage_collection_runs_until_the_first_frame(started: dict[str, Any]) -> None:
    """Start-up builds objects that live as long as the app, and little garbage: collecting
    walked them over and over before the first frame (docs/architecture.md#start-up). Once the
    list is drawn, what start-up built is frozen out of the collector's reach and it collects
    again."""
    assert started["at_first_frame"]["collecting"] is False
    assert started["collecting_once_listed"] is True
    assert started["frozen_once_listed"] > 10_000


NO_DATACLASSES = (
    *("tracker_tui.messages", "issuefields", "tracker_tui.navigation", "tracker_tui.key_order"),
    *("tracker_tui.screens.issue_list", "tracker_tui.services", "tracker_tui.issue_links"),
    *("tracker_tui.data.marks", "tracker_tui.data.outbox_counts", "tracker_tui.data.columns"),
    *("tracker_tui.data.keymap", "tracker_tui.data.undo", "tracker_tui.data.settings"),
    "tracker_tui.widgets.issue_columns",
)
"""Modules on the start path whose classes are plain: each dataclass costs 0.5-0.9 ms to build
at import (it compiles its `__init__`, `__repr__` and `__eq__`), and the app built 82 of its
own before its first frame (docs/architecture.md#start-up)."""
DATACLASS_BUDGET = 0
"""The project's dataclasses built before the first frame (Textual's and Rich's aside): none
since 2026-11-28, 44 allowed before the records, the sync state and the list widgets'
messages on the start path were written out as `Frozen` classes and plain messages."""


def test_the_start_builds_few_dataclasses(started: dict[str, Any]) -> None:
    built = started["at_first_frame"]["dataclasses"]
    assert any(name.startswith("textual.") for name in built)  # the count sees them at all
    ours = [name for name in built if not name.startswith(("textual.", "rich."))]
    plain = [name for name in ours if name.startswith(tuple(m + "." for m in NO_DATACLASSES))]
    assert plain == []
    assert len(ours) <= DATACLASS_BUDGET, ours
