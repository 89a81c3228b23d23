"""Fixtures for the app's tests: animations off, a real temp cache of demo issues (and a
stand-in source for tests that need reads to fail, stall or be counted), the app factories."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import textual.constants
from tui_support import ME, NOW, AppFactory, FakeIssueSource, Notices, fixed_clock

from cache import Cache
from demo.data import fill, generate
from tracker_tui.app import TrackerApp, make_app
from tracker_tui.data.cache_source import CacheIssueSource
from tracker_tui.sync_link import OfflineLink

os.environ["TEXTUAL_ANIMATIONS"] = "none"


@pytest.fixture(autouse=True)
def _no_animation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Apps read this at construction; the env var alone comes too late for this process."""
    monkeypatch.setattr(textual.constants, "TEXTUAL_ANIMATIONS", "none")


@pytest.fixture(scope="session")
def cache_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache file of 500 demo issues, built once; each test gets its own copy."""
    path = tmp_path_factory.mktemp("template") / "cache.db"
    with Cache.open(path, clock=NOW.timestamp) as store:
        fill(store, generate(500, NOW))
    return path


@pytest.fixture
def cache(tmp_path: Path, cache_template: Path) -> Iterator[Cache]:
    """A fresh cache of 500 demo issues (several screens' worth), on the fixed clock."""
    path = tmp_path / "cache.db"
    shutil.copyfile(cache_template, path)
    path.chmod(0o600)
    store = Cache.open(path, clock=NOW.timestamp)
    yield store
    store.close()


@pytest.fixture
def source(cache: Cache) -> CacheIssueSource:
    """The list's source over the test's cache, as the app builds it."""
    return CacheIssueSource(cache, me=ME)


@pytest.fixture
def link() -> OfflineLink:
    """The sync link the cache app runs with; counts pokes."""
    return OfflineLink()


@pytest.fixture
def app_factory(cache: Cache, link: OfflineLink) -> AppFactory:
    """Build the app over the real cache, or over a stand-in source given first (one that fails
    or stalls on purpose), with the fixed clock; kwargs go to make_app."""

    def build(issue_source: FakeIssueSource | None = None, **kwargs: Any) -> TrackerApp:
        if issue_source is not None:
            return make_app(issue_source, clock=fixed_clock, **kwargs)
        kwargs.setdefault("sync", link)
        kwargs.setdefault("me", ME)
        return make_app(cache=cache, clock=fixed_clock, **kwargs)

    return build


@pytest.fixture
def notices(monkeypatch: pytest.MonkeyPatch) -> Iterator[Notices]:
    """Notifications of any app built in the test, as (message, severity)."""
    recorded = Notices()
    original = TrackerApp.notify

    def notify(self: TrackerApp, message: str, **kwargs: Any) -> None:
        recorded.messages.append((message, str(kwargs.get("severity", "information"))))
        original(self, message, **kwargs)

    monkeypatch.setattr(TrackerApp, "notify", notify)
    yield recorded
