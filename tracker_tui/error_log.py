"""The app's error log: a small rotating file under the data folder, for the errors the app
survives (and the one it may not), with their tracebacks.

The user sees one line in a notification; the traceback goes here, where a bug report can
quote it. Records pass a filter that masks anything shaped like an API key, so the file is
safe to attach even if an error message ever carried one.
"""

from __future__ import annotations

import io
import logging
import os
import re
from logging.handlers import RotatingFileHandler
from pathlib import Path

from cache.paths import data_dir, ensure_private_dir

LOGGER_NAME = "tracker_tui"
LOG_FILE = "tracker-tui.log"
MAX_BYTES = 1_000_000
BACKUPS = 2

_KEY = re.compile(r"trk_[A-Za-z0-9_-]+")
"""The service's key shape (`trk_` and url-safe characters, see the API's securitySchemes)."""

logger = logging.getLogger(LOGGER_NAME)
logger.addHandler(logging.NullHandler())
"""Until `open_error_log`, records go nowhere (Python's last-resort handler would write them
to stderr, across the app's screen)."""


class _PrivateFile(RotatingFileHandler):
    """Each file (the first, and each after a rotation) is created readable by the user only:
    error messages may quote issue titles. The folder too is made only then, so a run without
    errors (a demo) leaves nothing behind."""

    def _open(self) -> io.TextIOWrapper:
        ensure_private_dir(Path(self.baseFilename).parent)
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)


class _MaskKeys(logging.Formatter):
    """Formats as usual, then masks key-shaped text in the message and traceback alike."""

    def format(self, record: logging.LogRecord) -> str:
        return _KEY.sub("trk_…", super().format(record))


def open_error_log(folder: Path | None = None) -> Path:
    """Send the app's errors to `folder` (default: the data folder) / tracker-tui.log, once
    per process, and say where that is."""
    folder = data_dir() if folder is None else folder
    path = folder / LOG_FILE
    for handler in logger.handlers:
        if isinstance(handler, RotatingFileHandler) and Path(handler.baseFilename) == path:
            return path
    handler = _PrivateFile(
        path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", delay=True
    )
    handler.setFormatter(_MaskKeys("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return path
