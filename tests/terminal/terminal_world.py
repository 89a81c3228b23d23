"""One terminal test's world: the service process, the user's home, the apps and CLI runs.

`Tracker` is what a scenario holds: the server (stop, restart, revoke keys), the user's key,
a colleague and a checker with keys of their own (so their requests spend nobody else's
budget), and the processes started, all killed when the test ends.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from terminal_reading import highlighted_issue, status_line, visible_issues
from terminal_screen import Terminal
from terminal_service import CLIENT, Api, ServerProcess, client_env, run_client

from cache import Cache, IssueDetail, open_cache

SEEDED_ISSUES = 60
COLLEAGUE = "Grace Hopper"


@dataclass(frozen=True)
class Seeded:
    """A seeded database to copy, and keys for it."""

    db: Path
    key: str
    """The user's key (the workspace's first member, "me")."""
    colleague_key: str
    checker_key: str
    """Reads the server's state for checks, so they spend nobody else's budget."""


@dataclass
class Tracker:
    """One test's world: the service, the user's home, and the processes started in it."""

    folder: Path
    server: ServerProcess
    key: str
    colleague: Api
    check: Api
    owns_server: bool = True
    """False on the shared server: the test may not stop it, restart it or revoke its keys."""
    terminals: list[Terminal] = field(default_factory=list)

    @property
    def home(self) -> Path:
        return self.folder / "home"

    def env(self, *, key: str | None = None, **extra: str) -> dict[str, str]:
        return client_env(self.home, self.server, key or self.key, **extra)

    def open_app(
        self,
        *args: str,
        columns: int = 100,
        rows: int = 30,
        env: dict[str, str] | None = None,
    ) -> Terminal:
        """`tracker-tui ARGS` in a pty of `columns` x `rows` (no ARGS: the app itself)."""
        terminal = Terminal([str(CLIENT), *args], env=env or self.env(), columns=columns, rows=rows)
        self.terminals.append(terminal)
        return terminal

    def open_synced_app(
        self,
        *args: str,
        columns: int = 100,
        rows: int = 30,
        env: dict[str, str] | None = None,
    ) -> Terminal:
        """The app, once its first sync has brought every seeded issue."""
        app = self.open_app(*args, columns=columns, rows=rows, env=env)
        app.wait_for(
            lambda shown: (
                f"{SEEDED_ISSUES} issues" in shown
                and "online" in status_line(shown)
                and "syncing" not in status_line(shown)
                and highlighted_issue(app) in visible_issues(shown)
            ),
            timeout=60,
            what=f"all {SEEDED_ISSUES} issues synced",
        )
        return app

    def cache(self) -> Cache:
        """The app's cache, read in this process (`with tracker.cache() as cache`): a command
        started to say the same would cost a second or more of a loaded machine per look."""
        return open_cache("env", root=self.home / "data")

    def cached(self, number: int) -> IssueDetail | None:
        """Issue `#number` as the app's cache has it now."""
        with self.cache() as cache:
            found = cache.reads.resolve_issue(f"#{number}")
            return None if found is None else cache.reads.issue(found)

    def draft(self, key: str) -> str:
        """The draft the app keeps in its cache under `key` ("comment:<issue id>",
        "issue:new"), as JSON text; "" when there is none."""
        with self.cache() as cache:
            found = cache.drafts.get(key)
        return "" if found is None else json.dumps(found)

    def cli(self, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
        done = run_client(self.env(), *args, stdin=stdin)
        return done.returncode, done.stdout, done.stderr

    def close(self) -> None:
        for terminal in self.terminals:
            terminal.close()
        if self.owns_server:
            self.server.close()
