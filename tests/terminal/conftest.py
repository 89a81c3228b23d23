"""Fixtures for the terminal tests: a seeded service process, the app in a pty, the CLI.

One workspace is seeded per session (the seed costs seconds) and each test gets its own copy
of the database file, its own port and its own TRACKER_HOME, so tests share nothing that one
could change for another. Every process a test starts is killed in teardown, whatever happened.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from terminal_screen import Terminal, highlighted_issue, status_line, visible_issues
from terminal_service import CLIENT, Api, ServerProcess, client_env, run_client, server_command

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


@pytest.fixture(scope="session")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Seeded:
    folder = tmp_path_factory.mktemp("seeded")
    server = ServerProcess(folder / "server.db")
    key = server.seed(SEEDED_ISSUES)
    colleague = server.create_key("colleague", user=COLLEAGUE)
    checker = server_command(
        "keys", "create", "--db", server.db, "--workspace", "Acme", "--name", "checker"
    )
    return Seeded(server.db, key, colleague, checker)


@dataclass
class Tracker:
    """One test's world: the service, the user's home, and the processes started in it."""

    folder: Path
    server: ServerProcess
    key: str
    colleague: Api
    check: Api
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

    def open_synced_app(self, *args: str, columns: int = 100, rows: int = 30) -> Terminal:
        """The app, once its first sync has brought every seeded issue."""
        app = self.open_app(*args, columns=columns, rows=rows)
        app.wait_for(
            lambda shown: (
                f"{SEEDED_ISSUES} issues" in shown
                and "online" in status_line(shown)
                and "syncing" not in status_line(shown)
            ),
            timeout=60,
            what=f"all {SEEDED_ISSUES} issues synced",
        )
        return app

    def cli(self, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
        done = run_client(self.env(), *args, stdin=stdin)
        return done.returncode, done.stdout, done.stderr

    def close(self) -> None:
        for terminal in self.terminals:
            terminal.close()
        self.server.close()


@pytest.fixture
def tracker(seeded: Seeded, tmp_path: Path) -> Iterator[Tracker]:
    """A running service on a copy of the seeded database (windows of 1 s), and the user's keys."""
    db = tmp_path / "server.db"
    shutil.copyfile(seeded.db, db)
    server = ServerProcess(db, window_seconds=1.0)
    world = Tracker(
        tmp_path,
        server,
        seeded.key,
        Api(server, seeded.colleague_key),
        Api(server, seeded.checker_key),
    )
    try:
        server.start()
        yield world
    finally:
        world.close()


def go_to(app: Terminal, number: int) -> None:
    """Move the list's highlight onto issue `number`, a screenful at a time, then row by row,
    each step waiting for the highlight to land (keys typed ahead of the list would be lost)."""
    for attempt in range(20):
        shown = app.wait_for(lambda _: highlighted_issue(app) is not None, what="a highlight")
        current = highlighted_issue(app)
        rows = visible_issues(shown)
        if current == number:
            return
        if number in rows and current in rows:
            steps = rows.index(number) - rows.index(current)
            app.burst(("down" if steps > 0 else "up") for _ in range(abs(steps)))
            app.wait_for(
                lambda _: highlighted_issue(app) == number, what=f"the highlight on #{number}"
            )
            return
        if attempt == 0:
            app.press("home")
            app.wait_for(
                lambda shown: highlighted_issue(app) == visible_issues(shown)[0],
                what="the highlight on the first row",
            )
            continue
        app.press("pagedown")
        app.wait_for(lambda _, was=current: highlighted_issue(app) != was, what="the next page")
    raise AssertionError(f"#{number} never came into view:\n{app.dump()}")


def open_issue(app: Terminal, number: int) -> None:
    """Open issue `number` from the list and wait for its detail screen."""
    go_to(app, number)
    app.press("enter")
    app.wait_for(
        lambda shown: shown.lstrip().startswith(f"#{number} ") and "Priority" in shown,
        what=f"the detail screen of #{number}",
    )
