"""The client installs and runs without the reference service's packages (the `service`
extra); the demo and `tracker-server` need them and say so in one line when they are missing.

"Missing" is made real where it counts: `None` in `sys.modules` is how Python marks a module
that cannot be imported, and `importlib.util.find_spec` then answers None as for one never
installed.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from server import entry
from tracker_tui.cli import main
from tracker_tui.commands import demo
from tracker_tui.exit_codes import Exit

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def names(requirements: list[str]) -> set[str]:
    return {req.split(">")[0].split("<")[0].split("=")[0].split("[")[0] for req in requirements}


def without_service(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("fastapi", "uvicorn"):
        monkeypatch.setitem(sys.modules, name, None)


def test_the_service_packages_are_an_extra_named_alike_everywhere() -> None:
    extra = names(PROJECT["optional-dependencies"]["service"])
    assert extra == set(demo.SERVICE_PACKAGES) == set(entry.SERVICE_PACKAGES)
    assert not extra & names(PROJECT["dependencies"])
    assert "tracker-tui[service]" in PROJECT["optional-dependencies"]["dev"]


def test_demo_without_the_service_extra_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    without_service(monkeypatch)
    status = main(["demo", "--issues", "5"])
    out, err = capsys.readouterr()
    assert status == Exit.USAGE
    assert out == ""
    assert err.count("\n") == 1
    assert "fastapi and uvicorn" in err
    assert "pip install 'tracker-tui[service]'" in err


def test_tracker_server_without_the_service_extra_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    status = entry.main(["serve", "--db", "unused.db"])
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("tracker-server: the service needs uvicorn,")
    assert "pip install 'tracker-tui[service]'" in err
