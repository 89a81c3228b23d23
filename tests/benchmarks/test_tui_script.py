"""`benchmarks/tui.py` names each query it times in its progress lines: a helper that read
the filter's fields through `dataclasses.fields` stopped the whole benchmark once the filter
was no longer a dataclass (c2f96a8), and nothing else runs the script."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from cache import IssueFilter, IssueSort
from tracker_tui.data.source import IssueQuery

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "tui.py"


def _load() -> ModuleType:
    """The script as a module; by path, since `benchmarks/` on sys.path would shadow `cache`."""
    spec = importlib.util.spec_from_file_location("bench_tui", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_tui"] = module
    spec.loader.exec_module(module)
    return module


def test_a_query_is_named_by_its_search_filters_and_sort() -> None:
    shown = _load().shown
    query = IssueQuery(
        IssueFilter(text="parse err", status=frozenset({"todo"})), IssueSort("priority"), True
    )
    assert shown(query) == ("[status=frozenset({'todo'}) text='parse err' mine=True sort=priority]")
    assert shown(None) == "none"
