"""The app needs a terminal: its keys come from stdin and it draws on stderr (Textual's choice,
so that `tracker-tui > file` still shows the app). Without one it would wait for keys that
never come, drawing escape sequences into a file; it says so and ends instead.

Not in `tracker_tui.commands`: the app and the demo both check it, and the app opens without
importing any command (docs/architecture.md#start-up)."""

from __future__ import annotations

import sys

from tracker_tui.errors import UsageError


def require_terminal() -> None:
    """Raise `UsageError` (exit status 2) unless stdin and stderr are a terminal."""
    missing = [
        name for name, stream in (("stdin", sys.stdin), ("stderr", sys.stderr)) if not _tty(stream)
    ]
    if missing:
        raise UsageError(
            f"the app needs a terminal, and {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not one; for scripts, use a command "
            "(`tracker-tui issues list --json`, `tracker-tui --help` lists them)"
        )


def _tty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
