"""One pusher per cache, across processes.

The TUI's background loop and a `tracker-tui sync` in another terminal share the outbox. Two
pushers would send the same entry twice (each sees it pending), and an entry left `sending`
could belong to a live pusher or to a crashed one. Holding an exclusive `flock` on a file next
to the cache while pushing settles both: whoever holds it owns every `sending` entry, so any it
finds at start were left by a crash and have an unknown outcome. The kernel drops the lock when
the process dies, even by SIGKILL.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType


class PushLock:
    """`acquired` is False when another process is pushing this cache's outbox right now."""

    def __init__(self, cache_path: Path) -> None:
        self._path = cache_path.with_name(cache_path.name + ".push.lock")
        self._fd: int | None = None
        self.acquired = False

    def __enter__(self) -> PushLock:
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return self
        self._fd = fd
        self.acquired = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
            self.acquired = False
