"""Saved views and the theme persist in the profile's `ui` section of config.toml."""

from __future__ import annotations

from pathlib import Path

from accounts.profiles import AppPaths, Profile, ProfileStore
from cache import IssueFilter, IssueSort
from tracker_tui.data.settings import ProfileSettings, saved_theme, saved_views
from tracker_tui.data.source import IssueQuery
from tracker_tui.data.views import SavedView


def test_views_and_theme_round_trip_through_the_config_file(tmp_path: Path) -> None:
    store = ProfileStore(AppPaths(tmp_path / "config", tmp_path / "data"))
    store.add(Profile("work", "https://tracker.example.com/v1", "acme", ui={"other": 1}))
    settings = ProfileSettings(store, "work")
    views = [
        SavedView("Mine", IssueQuery(sort=IssueSort("priority"), mine=True)),
        SavedView("Open", IssueQuery(IssueFilter(status=frozenset({"todo", "in_progress"})))),
    ]
    settings.save_views(views)
    settings.save_theme("nord")
    ui = store.get("work").ui
    assert saved_views(ui) == views
    assert saved_theme(ui) == "nord"
    assert ui["other"] == 1


def test_malformed_settings_are_skipped() -> None:
    ui = {"views": [{"name": ""}, "junk", {"name": "Ok", "query": {"sort": "nope"}}], "theme": 3}
    assert saved_views(ui) == [SavedView("Ok", IssueQuery())]
    assert saved_theme(ui) is None
    assert saved_views({"views": "junk"}) == []
