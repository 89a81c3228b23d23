"""The benchmark scripts as modules, for tests of their parts.

Loaded by path: `benchmarks/` on sys.path would let `benchmarks/cache.py` shadow the `cache`
package that every script imports."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

FOLDER = Path(__file__).resolve().parents[2] / "benchmarks"


def load(name: str) -> ModuleType:
    """`benchmarks/<name>.py`, imported once as `bench_<name>`."""
    module_name = f"bench_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, FOLDER / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
