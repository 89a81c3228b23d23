"""The TUI's settings: a profile's `ui` section (saved views, the theme), and the file's
`[keymap]` and `[columns]`, which hold for every profile (and the demo).

`accounts.profiles.Profile.ui` is a dict the TUI owns; this module reads it defensively (a hand
edited file may hold anything) and writes it back whole through `ProfileStore.update`, so the
app's `on_views_changed` / `on_theme_changed` callbacks persist with one call each.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from accounts.profiles import AppPaths, Config, ProfileStore
from issuefields.frozen import Frozen
from tracker_tui.data.columns import ColumnSetup, parse_columns
from tracker_tui.data.keymap import parse_keymap
from tracker_tui.data.views import SavedView, view_from_dict, view_to_dict


class AppTables(Frozen):
    """config.toml's `[keymap]` and `[columns]`, read and checked (`KeymapError`,
    `ColumnsError` name every problem and the file)."""

    _fields = ("keymap", "columns")
    __slots__ = _fields
    keymap: dict[str, str]
    columns: ColumnSetup

    def __init__(self, keymap: dict[str, str], columns: ColumnSetup) -> None:
        self._init(keymap, columns)

    @classmethod
    def of(cls, config: Config, source: Path | str) -> AppTables:
        return cls(
            keymap=parse_keymap(config.keymap, f"{source} [keymap]"),
            columns=parse_columns(config.columns, f"{source} [columns]"),
        )

    @classmethod
    def load(cls) -> AppTables:
        """From the user's config.toml (none: the defaults)."""
        store = ProfileStore(AppPaths.from_env())
        return cls.of(store.load(), store.paths.config_file)


def saved_views(ui: Mapping[str, Any]) -> list[SavedView]:
    """The views stored under `ui.views` (a list of tables), skipping malformed ones."""
    stored = ui.get("views")
    if not isinstance(stored, list):
        return []
    views = (view_from_dict(item) for item in stored if isinstance(item, dict))
    return [view for view in views if view is not None]


def saved_theme(ui: Mapping[str, Any]) -> str | None:
    theme = ui.get("theme")
    return theme if isinstance(theme, str) and theme else None


class ProfileSettings:
    """Writes one profile's views and theme; pass its methods to `make_app` as callbacks."""

    def __init__(self, store: ProfileStore, profile: str) -> None:
        self._store = store
        self._profile = profile

    def save_views(self, views: list[SavedView]) -> None:
        self._update("views", [view_to_dict(view) for view in views])

    def save_theme(self, theme: str) -> None:
        self._update("theme", theme)

    def _update(self, key: str, value: Any) -> None:
        """Re-read the profile first, so settings changed elsewhere meanwhile are kept."""
        profile = self._store.get(self._profile)
        ui = {**profile.ui, key: value}
        self._store.update(profile.replace(ui=ui))
