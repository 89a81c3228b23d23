"""Fixtures for the terminal tests: a seeded service process, the app in a pty, the CLI.

One workspace is seeded per session (the seed costs seconds) and each test gets its own copy
of the database file, its own port and its own TRACKER_HOME, so tests share nothing that one
could change for another. Every process a test starts is killed in teardown, whatever happened.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from terminal_service import Api, ServerProcess, server_command
from terminal_world import COLLEAGUE, SEEDED_ISSUES, Seeded, Tracker


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
