"""platformdirs' user config and data directories on Linux, without importing platformdirs.

platformdirs imports tempfile, shutil, random and the compression modules (~9 ms, more than a
third of what a command line read may add to the interpreter's start:
docs/architecture.md#start-up). The profiles (`accounts.profiles.AppPaths`) and the cache's
files (`cache.paths.data_dir`) both need the directories, and may share nothing but this
package; each asks platformdirs itself for every case answered None here.
tests/accounts/test_profiles.py checks the answers agree with platformdirs'.
"""

from __future__ import annotations

import os
import posixpath
import sys


def usual_linux_dirs(app_name: str) -> tuple[str, str] | None:
    """The config and data directories platformdirs gives `app_name` on Linux where it has no
    special case to make (not Android, an absolute HOME): an absolute `$XDG_CONFIG_HOME` or
    `~/.config`, `$XDG_DATA_HOME` or `~/.local/share`, each with the app's name. None for
    every other case, which platformdirs answers."""
    if sys.platform != "linux" or hasattr(sys, "getandroidapilevel"):
        return None
    if os.environ.get("ANDROID_DATA") or os.environ.get("ANDROID_ROOT"):
        return None
    if not posixpath.isabs(os.environ.get("HOME", "")):
        return None

    def base(variable: str, default: str) -> str:
        given = os.environ.get(variable, "")
        return given if posixpath.isabs(given) else os.path.expanduser(default)

    config = base("XDG_CONFIG_HOME", "~/.config")
    data = base("XDG_DATA_HOME", "~/.local/share")
    return os.path.join(config, app_name), os.path.join(data, app_name)
