"""Fixtures for the terminal tests: a seeded service process, the app in a pty, the CLI.

Two worlds, both with a TRACKER_HOME of the test's own and every process the test starts
killed in teardown, whatever happened:

- `tracker`: a fresh workspace, seeded for the test, on one service process shared by the
  session (starting a service costs seconds; a workspace, a few milliseconds). Its keys and
  data are the test's alone; the test must leave the process running.
- `own_tracker`: a service process of the test's own, on a copy of a seeded database, that
  the test may stop, kill, restart and revoke keys on.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from terminal_service import WORKSPACE, Api, ServerProcess
from terminal_world import COLLEAGUE, SEEDED_ISSUES, Seeded, Tracker

from server.keys import create_key
from server.seed import seed_workspace


@pytest.fixture(scope="session")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Seeded:
    """A database seeded as the shared service's workspaces are, for tests that need a
    service of their own to copy it."""
    db = tmp_path_factory.mktemp("seeded") / "server.db"
    key = seed_workspace(db, WORKSPACE, SEEDED_ISSUES, plan="enterprise")
    colleague = create_key(db, WORKSPACE, "colleague", user=COLLEAGUE)
    checker = create_key(db, WORKSPACE, "checker")
    return Seeded(db, key, colleague, checker)


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = ServerProcess(tmp_path_factory.mktemp("shared") / "server.db", window_seconds=1.0)
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture
def tracker(shared_server: ServerProcess, tmp_path: Path) -> Iterator[Tracker]:
    """A workspace of the test's own, seeded like every other, on the shared service."""
    workspace = f"T-{uuid.uuid4().hex[:10]}"
    db = shared_server.db
    key = seed_workspace(db, workspace, SEEDED_ISSUES, plan="enterprise")
    colleague = create_key(db, workspace, "colleague", user=COLLEAGUE)
    checker = create_key(db, workspace, "checker")
    server = shared_server
    world = Tracker(
        tmp_path, server, key, Api(server, colleague), Api(server, checker), owns_server=False
    )
    try:
        yield world
    finally:
        world.close()


@pytest.fixture
def own_tracker(
    seeded: Seeded, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Tracker]:
    """A service of the test's own on a copy of the seeded database, its windows 1 s long
    (or as many seconds as the test's indirect parameter says)."""
    db = tmp_path / "server.db"
    shutil.copyfile(seeded.db, db)
    server = ServerProcess(db, window_seconds=getattr(request, "param", 1.0))
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
