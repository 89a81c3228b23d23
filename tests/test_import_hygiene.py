"""The layering rules of the codebase, enforced.

The core packages must stay usable without the UI (a sync in CI, the service on a server), and
the client must rely on the published API alone rather than on the reference service's code.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN: dict[str, set[str]] = {
    "cache": {"textual", "sync", "accounts", "tracker_tui", "server"},
    "accounts": {"textual", "sync", "cache", "tracker_tui", "server"},
    "sync": {"textual", "tracker_tui", "server"},
    "server": {"textual", "cache", "sync", "accounts", "tracker_tui"},
}


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_stay_in_their_layer(package: str) -> None:
    offenders = {
        f"{path.relative_to(ROOT)} imports {name}"
        for path in (ROOT / package).rglob("*.py")
        for name in imported_roots(path) & FORBIDDEN[package]
    }
    assert not offenders, sorted(offenders)


def test_imported_roots_sees_every_import_form(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import a.b\nfrom c.d import e\nfrom . import f\ndef g():\n    import h\n")
    assert imported_roots(sample) == {"a", "c", "h"}


BLOCK_TEXTUAL = """
import importlib, pkgutil, sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "textual" or name.startswith("textual."):
            raise ImportError("textual is blocked in the core")
        return None

sys.meta_path.insert(0, Block())
for package in ("cache", "accounts", "sync", "server"):
    module = importlib.import_module(package)
    for info in pkgutil.walk_packages(module.__path__, package + "."):
        importlib.import_module(info.name)
assert not any(m == "textual" or m.startswith("textual.") for m in sys.modules)
print("ok")
"""


def test_core_packages_import_without_textual() -> None:
    result = subprocess.run(
        [sys.executable, "-c", BLOCK_TEXTUAL], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
