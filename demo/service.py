"""The reference service, embedded for `tracker-tui demo`: seeded, on a free loopback port.

The demo must run with no account and leave nothing behind, so the database lives in a temporary
folder and the key is held in memory only. The service runs in a thread of this process, so
quitting the app stops it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from types import TracebackType

from accounts.secret import Secret
from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceStartError, ServiceThread
from tracker_tui.errors import TrackerTuiError

DEMO_WORKSPACE = "Demo"
DEMO_PLAN = "pro"
"""Pro's 300 requests a minute bring a few thousand issues and their comments in seconds."""


class DemoService:
    """A seeded service for the life of a `with` block."""

    def __init__(self, *, issues: int = 3_000, window_seconds: float = 60) -> None:
        self._issues = issues
        self._window_seconds = window_seconds
        self._folder = tempfile.TemporaryDirectory(prefix="tracker-demo-")
        self._service: ServiceThread | None = None
        self.db_path = Path(self._folder.name) / "service.db"
        self.base_url = ""
        self.key = Secret("")

    def __enter__(self) -> DemoService:
        try:
            self.key = Secret(
                seed_workspace(self.db_path, DEMO_WORKSPACE, self._issues, plan=DEMO_PLAN)
            )
            app = create_app(self.db_path, window_seconds=self._window_seconds)
            self._service = ServiceThread(app).__enter__()
        except ServiceStartError as error:
            self._folder.cleanup()
            raise TrackerTuiError(f"the demo could not start: {error}") from None
        except BaseException:
            self._folder.cleanup()
            raise
        self.base_url = self._service.base_url
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            if self._service is not None:
                self._service.__exit__(exc_type, exc, traceback)
        finally:
            self._folder.cleanup()
