"""`benchmarks/tui.py` names each query it times in its progress lines: a helper that read
the filter's fields through `dataclasses.fields` stopped the whole benchmark once the filter
was no longer a dataclass (c2f96a8), and nothing else runs the script."""

from __future__ import annotations

from benchmark_scripts import load

from cache import IssueFilter, IssueSort
from tracker_tui.data.source import IssueQuery


def test_a_query_is_named_by_its_search_filters_and_sort() -> None:
    shown = load("tui").shown
    query = IssueQuery(
        IssueFilter(text="parse err", status=frozenset({"todo"})), IssueSort("priority"), True
    )
    assert shown(query) == ("[status=frozenset({'todo'}) text='parse err' mine=True sort=priority]")
    assert shown(None) == "none"
