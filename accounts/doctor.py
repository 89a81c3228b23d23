"""`tracker-tui doctor`'s account half: where keys, config and data are, and why.

What a user needs when a key is not found: which keyring backend keyring offers and whether
it is used (`accounts.keystore` judges it), what the environment sets, the modes of the files,
and the profiles. Never shows a key, only whether TRACKER_API_KEY is set and its length.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from accounts.credentials import (
    ENV_API_KEY,
    ENV_SERVER,
    insecure_storage_warning,
    key_from_env,
    server_from_env,
)
from accounts.errors import ConfigError, InvalidKeyError, InvalidServerURLError
from accounts.keystore import KeyringStore
from accounts.profiles import ENV_HOME, AppPaths, ProfileStore, environ


class Level(StrEnum):
    OK = "ok"
    INFO = "info"
    WARN = "warn"
    ERROR = "error"


@dataclass(frozen=True)
class DoctorLine:
    """One finding of `doctor_report`, for the CLI to print and the TUI to list."""

    topic: str
    level: Level
    text: str


def doctor_report(
    *, env: Mapping[str, str] | None = None, keyring: KeyringStore | None = None
) -> list[DoctorLine]:
    """Where keys, config and data are, and why: what a user needs when a key is not found.

    Never shows a key, only whether TRACKER_API_KEY is set and its length.
    """
    paths = AppPaths.from_env(env)
    status = (keyring or KeyringStore()).status()
    lines = [
        DoctorLine("keyring", Level.OK, f"{status.backend} is used: {status.reason}")
        if status.usable
        else DoctorLine("keyring", Level.WARN, f"{status.backend} is not used: {status.reason}")
    ]
    chosen = environ(env).get("PYTHON_KEYRING_BACKEND")
    if chosen:
        lines.append(DoctorLine("keyring", Level.INFO, f"PYTHON_KEYRING_BACKEND picks {chosen}"))
    return [*lines, *_env_lines(env), *_file_lines(paths), *_profile_lines(paths)]


def _env_lines(env: Mapping[str, str] | None) -> list[DoctorLine]:
    home = environ(env).get(ENV_HOME, "").strip()
    lines = [
        DoctorLine("env", Level.INFO, f"{ENV_HOME} is set to {home}: every file lives under it")
        if home
        else DoctorLine("env", Level.INFO, f"{ENV_HOME} is not set: platform directories are used")
    ]
    try:
        server = server_from_env(env)
        text = f"{ENV_SERVER} is set to {server}" if server else f"{ENV_SERVER} is not set"
        lines.append(DoctorLine("env", Level.INFO, text))
    except InvalidServerURLError as exc:
        lines.append(DoctorLine("env", Level.ERROR, str(exc)))
    length = len(environ(env).get(ENV_API_KEY, "").strip())
    try:
        if key_from_env(env) is None:
            lines.append(DoctorLine("env", Level.INFO, f"{ENV_API_KEY} is not set"))
        else:
            text = f"{ENV_API_KEY} is set ({length} chars) and wins over stored keys"
            lines.append(DoctorLine("env", Level.OK, text))
    except InvalidKeyError as exc:
        lines.append(DoctorLine("env", Level.ERROR, f"set ({length} chars) but unusable: {exc}"))
    return lines


def _file_lines(paths: AppPaths) -> list[DoctorLine]:
    lines = []
    for topic, path, private in (
        ("config", paths.config_dir, 0o700),
        ("config", paths.config_file, 0o600),
        ("data", paths.data_dir, None),
    ):
        mode = _mode(path)
        if mode is None:
            lines.append(DoctorLine(topic, Level.INFO, f"{path} does not exist yet"))
        elif private is not None and os.name == "posix" and mode & 0o077:
            text = f"{path} has mode {mode:04o}, readable by others; expected {private:04o}"
            lines.append(DoctorLine(topic, Level.WARN, text))
        else:
            lines.append(DoctorLine(topic, Level.INFO, f"{path} (mode {mode:04o})"))
    return lines


def _profile_lines(paths: AppPaths) -> list[DoctorLine]:
    try:
        config = ProfileStore(paths).load()
    except ConfigError as exc:
        return [DoctorLine("profiles", Level.ERROR, str(exc))]
    lines = [
        DoctorLine(
            "profiles",
            Level.INFO,
            f"{profile.name}{' (default)' if profile.name == config.default else ''}: "
            f"{profile.server}, workspace {profile.workspace}, key kept in {profile.key_storage}",
        )
        for profile in config.profiles.values()
    ]
    if not lines:
        lines.append(DoctorLine("profiles", Level.INFO, "no profiles"))
    for path in sorted(paths.keys_dir.glob("*.key")):
        text = insecure_storage_warning(path.stem, path)
        lines.append(DoctorLine("profiles", Level.WARN, f"{text} (mode {_mode(path) or 0:04o})"))
    return lines


def _mode(path: Path) -> int | None:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return None
