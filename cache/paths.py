"""Where a profile's cache file lives, and keeping it private.

The cache holds every issue the API key can read plus unsent edits, so the directory is 0700
and the database with its `-wal`/`-shm` companions 0600. SQLite gives the companions the
database file's mode, so creating the database with 0600 before SQLite opens it is what keeps
them private; existing files with looser modes are tightened on open.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from cache.errors import InvalidProfileError
from issuefields.userdirs import usual_linux_dirs

APP_NAME = "tracker-tui"
HOME_ENV = "TRACKER_HOME"
DIR_MODE = 0o700
FILE_MODE = 0o600
COMPANION_SUFFIXES = ("-wal", "-shm")

_PROFILE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def data_dir(root: Path | None = None) -> Path:
    """`root` if given, else `$TRACKER_HOME/data`, else the platform's user data directory
    (on Linux without importing platformdirs: `issuefields.userdirs`)."""
    if root is not None:
        return root
    home = os.environ.get(HOME_ENV)
    if home:
        return Path(home) / "data"
    usual = usual_linux_dirs(APP_NAME)
    if usual is not None:
        return Path(usual[1])
    import platformdirs  # with tempfile and shutil behind it: not when TRACKER_HOME says

    return Path(platformdirs.user_data_dir(APP_NAME))


def profile_path(profile: str, root: Path | None = None) -> Path:
    if not _PROFILE_RE.fullmatch(profile):
        raise InvalidProfileError(
            f"invalid profile name {profile!r}: use letters, digits, '.', '_' or '-' "
            "(at most 64, not starting with '.' or '-')"
        )
    return data_dir(root) / f"{profile}.db"


def ensure_private_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    if stat.S_IMODE(path.stat().st_mode) != DIR_MODE:
        path.chmod(DIR_MODE)


def ensure_private_file(path: Path) -> None:
    """Create the database file 0600 (so SQLite copies that mode to its companions) and
    tighten any existing file or companion left with a looser mode."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    os.close(fd)
    for candidate in (path, *(Path(f"{path}{suffix}") for suffix in COMPANION_SUFFIXES)):
        try:
            mode = stat.S_IMODE(candidate.stat().st_mode)
        except FileNotFoundError:
            continue
        if mode & ~FILE_MODE:
            candidate.chmod(FILE_MODE)
