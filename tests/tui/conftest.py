"""Fixtures for the app's tests: animations off, a stand-in source, the app factory."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import textual.constants
from tui_support import AppFactory, FakeIssueSource, Notices, fixed_clock

from tracker_tui.app import TrackerApp, make_app

os.environ["TEXTUAL_ANIMATIONS"] = "none"


@pytest.fixture(autouse=True)
def _no_animation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Apps read this at construction; the env var alone comes too late for this process."""
    monkeypatch.setattr(textual.constants, "TEXTUAL_ANIMATIONS", "none")


@pytest.fixture
def source() -> FakeIssueSource:
    """500 issues: several screens' worth, quick to filter."""
    return FakeIssueSource(500)


@pytest.fixture
def app_factory(source: FakeIssueSource) -> AppFactory:
    """Build the app over `source` (or another) with the fixed clock; kwargs go to make_app."""

    def build(issue_source: Any = None, **kwargs: Any) -> TrackerApp:
        return make_app(issue_source or source, clock=fixed_clock, **kwargs)

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
