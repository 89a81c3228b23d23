"""The reference service, embedded for `tracker-tui demo`: seeded, on a free loopback port.

The demo must run with no account and leave nothing behind, so the database lives in a temporary
folder and the key is held in memory only. The service runs in a thread of this process, so
quitting the app stops it.
"""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType

import uvicorn

from server.app import create_app
from server.seed import seed_workspace
from sync.secret import Secret
from tracker_tui.errors import TrackerTuiError

DEMO_WORKSPACE = "Demo"
START_TIMEOUT = 15.0


class DemoService:
    """A running demo service; use as a context manager."""

    def __init__(self, *, issues: int = 3_000, window_seconds: float = 60) -> None:
        self._issues = issues
        self._window_seconds = window_seconds
        self._folder = tempfile.TemporaryDirectory(prefix="tracker-demo-")
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.db_path = Path(self._folder.name) / "service.db"
        self.base_url = ""
        self.key = Secret("")

    def __enter__(self) -> DemoService:
        self.key = Secret(seed_workspace(self.db_path, DEMO_WORKSPACE, self._issues))
        app = create_app(self.db_path, window_seconds=self._window_seconds)
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="demo-service", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise TrackerTuiError("the demo service did not start")
            time.sleep(0.02)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._folder.cleanup()
