"""`tracker-tui projects create|edit|archive|delete` against the reference service on a
loopback port: checked before anything is queued, then queued and pushed like the app's
project writes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from accounts.credentials import resolve_profile
from cache import EntryState, open_cache
from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.engine import sync_once
from sync.session import open_session
from tracker_tui.cli import main


@dataclass
class Shell:
    capsys: pytest.CaptureFixture[str]

    def run(self, *argv: str) -> tuple[int, str, str]:
        status = main(list(argv))
        out, err = self.capsys.readouterr()
        return status, out, err

    def projects(self) -> dict[str, dict[str, object]]:
        """The projects as the cache has them after a sync, by key."""
        status, out, _ = self.run("sync")
        assert status == 0
        status, out, _ = self.run("projects", "list", "--json")
        assert status == 0
        return {str(p["key"]): p for p in json.loads(out)}

    def outbox_states(self) -> list[EntryState]:
        with open_cache(resolve_profile(None).cache_name) as cache:
            return [entry.state for entry in cache.outbox.entries()]


@pytest.fixture
def shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Shell]:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 6, plan="enterprise")
    with ServiceThread(create_app(db, window_seconds=1.0)) as service:
        monkeypatch.setenv("TRACKER_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("TRACKER_SERVER", service.base_url)
        monkeypatch.setenv("TRACKER_API_KEY", key)

        async def first_sync() -> None:
            with open_cache(resolve_profile(None).cache_name) as cache:
                async with open_session(resolve_profile(None), cache=cache) as session:
                    await sync_once(session)

        asyncio.run(first_sync())
        yield Shell(capsys)


def test_create_edit_archive_restore_and_delete_a_project(shell: Shell) -> None:
    status, out, err = shell.run(
        "projects", "create", "--key", "CLI", "--name", "From the shell", "--description", "x"
    )
    assert (status, err) == (0, "")
    project_id = out.strip()
    found = shell.projects()["CLI"]
    assert (found["id"], found["name"], found["description"]) == (project_id, "From the shell", "x")
    status, out, err = shell.run("projects", "edit", "cli", "--name", "Renamed", "--key", "SHELL")
    assert (status, err) == (0, "") and out == "SHELL (Renamed) changed\n"
    assert shell.projects()["SHELL"]["name"] == "Renamed"
    status, out, _ = shell.run("projects", "archive", "SHELL")
    assert status == 0 and out == "SHELL (Renamed) archived\n"
    assert shell.projects()["SHELL"]["state"] == "archived"
    status, out, _ = shell.run("projects", "archive", project_id, "--restore")
    assert status == 0 and out == "SHELL (Renamed) restored\n"
    assert shell.projects()["SHELL"]["state"] == "active"
    status, out, err = shell.run("projects", "delete", "SHELL")
    assert status == 2 and "add --yes in scripts" in err
    status, out, _ = shell.run("projects", "delete", "SHELL", "--yes")
    assert status == 0 and out == "SHELL (Renamed) deleted\n"
    assert "SHELL" not in shell.projects()
    assert set(shell.outbox_states()) == {EntryState.DONE}


def test_no_push_only_queues(shell: Shell) -> None:
    status, out, _ = shell.run("projects", "create", "--key", "LATER", "--name", "L", "--no-push")
    assert status == 0 and out.strip()
    assert shell.outbox_states() == [EntryState.PENDING]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["projects", "create", "--key", "web", "--name", "n"], "--key: The key is 2 to 10"),
        (["projects", "create", "--key", "OK", "--name", "  "], "--name: A name is required"),
        (["projects", "edit", "NOPE", "--name", "n"], "no project 'NOPE' in the local cache"),
        (["projects", "edit", "NOPE"], "nothing to change"),
        (["projects", "archive", "NOPE"], "no project 'NOPE'"),
    ],
)
def test_bad_input_is_refused_before_the_queue(shell: Shell, argv: list[str], says: str) -> None:
    status, out, err = shell.run(*argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and says in err, err
    assert shell.outbox_states() == []
