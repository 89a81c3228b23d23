"""The command line's reads start without what they do not need: no Textual, no HTTP client,
no sync engine or pydantic models, and nothing of the reference service or the demo.

Each read runs in a fresh interpreter (an import made by an earlier test cannot hide one) on a
profile that has logged in, synced and queued a write, with the server stopped: the reads
answer from the cache alone. What a command imports is what `sys.modules` holds once it has
answered. The import-linter contracts (pyproject.toml) cannot say this: the network layer
is imported lazily by the write commands of the same modules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import FAIL_KEYRING, loopback

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("tracker-tui")

NOT_FOR_READS = (
    *("textual", "httpx", "pydantic", "fastapi", "uvicorn", "starlette", "server", "demo"),
    *("sync.client", "sync.models", "sync.session", "sync.engine", "sync.pull", "sync.push"),
)
"""Packages and modules (with everything under them) no read command may load."""

READS = (
    ("--help",),
    ("issues", "list", "--limit", "5"),
    ("issues", "list", "--status", "todo", "--sort", "-priority", "--json"),
    ("issues", "show", "#2"),
    ("issues", "show", "#2", "--json"),
    ("projects", "list"),
    ("users",),
    ("status",),
    ("status", "--json"),
    ("usage",),
    ("usage", "--json"),
    ("outbox",),
    ("conflicts",),
    ("profiles",),
    ("completion", "bash"),
    ("config", "schema"),
    ("config", "path"),
    ("man",),
    ("--version",),
)

RUN = """
import json, sys
from tracker_tui.cli import main
try:
    status = main(sys.argv[2:])
except SystemExit as end:
    status = end.code
with open(sys.argv[1], "w") as out:
    json.dump({"status": status, "modules": sorted(sys.modules)}, out)
"""
"""`tracker-tui ARGS` as the console script runs it, then what it imported."""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A profile with a synced cache and one queued write; its server stopped."""
    folder = tmp_path_factory.mktemp("reads")
    env = {
        **os.environ,
        "TRACKER_HOME": str(folder / "home"),
        "PYTHON_KEYRING_BACKEND": FAIL_KEYRING,
    }
    env.pop("TRACKER_SERVER", None)
    env.pop("TRACKER_API_KEY", None)
    with loopback(folder, 12) as service:
        login = [str(SCRIPT), "login", "--server", service.base_url, "--with-key"]
        for argv, given in (
            ([*login, "--insecure-storage"], service.key),
            ([str(SCRIPT), "sync"], None),
            ([str(SCRIPT), "issues", "edit", "#2", "--title", "queued", "--no-push"], None),
        ):
            done = subprocess.run(
                argv, input=given, capture_output=True, text=True, env=env, timeout=120
            )
            assert done.returncode == 0, done.stderr
    yield env


def run_read(env: dict[str, str], argv: tuple[str, ...], folder: Path) -> tuple[int, str, set[str]]:
    report = folder / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(report), *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(report.read_text())
    return found["status"], done.stdout, set(found["modules"])


def loaded(modules: set[str]) -> list[str]:
    return sorted(
        name
        for name in NOT_FOR_READS
        if any(module == name or module.startswith(name + ".") for module in modules)
    )


@pytest.mark.parametrize("argv", READS, ids=" ".join)
def test_a_read_command_imports_no_network_ui_or_service(
    env: dict[str, str], argv: tuple[str, ...], tmp_path: Path
) -> None:
    status, out, modules = run_read(env, argv, tmp_path)
    assert status == 0
    assert out.strip()
    assert loaded(modules) == []


def test_the_guard_sees_a_command_that_goes_online(env: dict[str, str], tmp_path: Path) -> None:
    """`sync` loads the network layer (and fails here, its server stopped): the check above
    would see it in a read."""
    _, _, modules = run_read(env, ("sync", "--give-up-after", "0.1"), tmp_path)
    assert {"httpx", "pydantic", "sync.client", "sync.engine"} <= set(loaded(modules))
