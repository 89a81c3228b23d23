"""Helpers for the command-line tests: the reference service on a loopback port and a runner
for `tracker_tui.cli.main` in-process, with stdout and stderr captured."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from tracker_tui.cli import main

FAIL_KEYRING = "keyring.backends.fail.Keyring"
"""A keyring that refuses everything: tests never touch the real one of the machine."""
SCRIPT = Path(sys.executable).with_name("tracker-tui")
"""The console script, for the tests that run it in a terminal of its own."""


@dataclass
class Loopback:
    """The reference service, seeded, served over HTTP on 127.0.0.1."""

    base_url: str
    key: str
    db: Path


@contextmanager
def loopback(
    folder: Path,
    issues: int,
    *,
    plan: str = "enterprise",
    wrap: Callable[[Any], Any] | None = None,
) -> Iterator[Loopback]:
    """`wrap` turns the service into a variant (see `without_me`)."""
    db = folder / "server.db"
    key = seed_workspace(db, "Acme", issues, plan=plan)
    app = create_app(db)
    with ServiceThread(app if wrap is None else wrap(app)) as service:
        yield Loopback(service.base_url, key, db)


def without_me(app: Any) -> Any:
    """The service as a server without CONTRACT's `/me`: it answers that path as any unknown
    one (404 with its rate-limit headers), so the plan shows only in `X-RateLimit-Limit`."""

    async def variant(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/v1/me":
            scope = {**scope, "path": "/v1/me-not-served", "raw_path": b"/v1/me-not-served"}
        await app(scope, receive, send)

    return variant


@dataclass
class Cli:
    """Runs the command line in-process; `home` is its TRACKER_HOME."""

    home: Path
    capsys: pytest.CaptureFixture[str]
    monkeypatch: pytest.MonkeyPatch

    def run(self, *argv: str) -> tuple[int, str, str]:
        status = main(list(argv))
        out, err = self.capsys.readouterr()
        return status, out, err

    def use(self, server: str | None, key: str | None) -> None:
        """Point the environment at a server and key (None: unset)."""
        for name, value in (("TRACKER_SERVER", server), ("TRACKER_API_KEY", key)):
            if value is None:
                self.monkeypatch.delenv(name, raising=False)
            else:
                self.monkeypatch.setenv(name, value)


def make_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Cli:
    home = tmp_path / "home"
    monkeypatch.setenv("TRACKER_HOME", str(home))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", FAIL_KEYRING)
    for name in ("TRACKER_SERVER", "TRACKER_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return Cli(home, capsys, monkeypatch)
