"""The layering of the codebase, where import-linter cannot see it.

The layers themselves are import-linter contracts in pyproject.toml, checked by `make lint`:
they read every import statement of the listed packages. Two things escape them, and are
checked here: a top-level package left out of `root_packages` (no contract would look at it),
and a third-party package that loads Textual, the service's packages or the HTTP client behind
our back (import-linter sees `import rich` or `import keyring`, not what they import). So the
modules each contract keeps free of them are imported for real, in a fresh interpreter where
those packages cannot load.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
NOT_SHIPPED = {"tests", "benchmarks"}


def contract(name: str) -> dict[str, Any]:
    (found,) = (each for each in CONFIG["contracts"] if each["id"] == name)
    return found


def test_every_package_is_under_contract() -> None:
    packages = {
        path.parent.name
        for path in ROOT.glob("*/__init__.py")
        if path.parent.name not in NOT_SHIPPED
    }
    assert packages == set(CONFIG["root_packages"])


IMPORT_ALL_BLOCKING = """
import importlib, pkgutil, sys

blocked = set(sys.argv[1].split(","))


class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ImportError(f"{name} is not installed here")
        return None


sys.meta_path.insert(0, Block())
for name in sys.argv[2:]:
    module = importlib.import_module(name)
    for info in pkgutil.walk_packages(getattr(module, "__path__", []), name + "."):
        if not info.name.endswith(".__main__"):
            importlib.import_module(info.name)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in blocked)
assert not loaded, loaded
print("ok")
"""


def import_all(blocked: list[str], modules: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", IMPORT_ALL_BLOCKING, ",".join(blocked), *modules],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


@pytest.mark.parametrize("name", ["textual-in-the-app", "service-extra", "accounts-offline"])
def test_what_a_contract_keeps_out_is_never_loaded(name: str) -> None:
    """Every module of the contract's sources imports with its forbidden packages absent."""
    rule = contract(name)
    done = import_all(rule["forbidden_modules"], rule["source_modules"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_blocker_blocks() -> None:
    done = import_all(["textual"], ["tracker_tui.app"])
    assert done.returncode != 0
    assert "textual is not installed here" in done.stderr
