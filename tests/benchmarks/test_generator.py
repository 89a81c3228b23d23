"""The issue generator of `benchmarks/cache.py`, which every size figure of the cache and the
app is measured on: it makes the number of issues asked, each well formed, the same ones for
the same seed."""

from __future__ import annotations

import re

from benchmark_scripts import load

bench = load("cache")
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
ISSUES = bench.generate(3000, 7)


def test_makes_n_distinct_issues_sorted_by_update() -> None:
    issues = ISSUES
    assert len(issues) == 3000
    assert len({issue["id"] for issue in issues}) == 3000
    assert sorted(issue["number"] for issue in issues) == list(range(1, 3001))
    stamps = [issue["updated_at"] for issue in issues]
    assert stamps == sorted(stamps)


def test_each_issue_is_well_formed() -> None:
    for issue in ISSUES:
        assert 4 <= len(issue["title"].split()) <= 8
        assert 40 <= len(issue["description"].split()) <= 80
        assert issue["status"] in bench.STATUSES
        assert issue["priority"] in bench.PRIORITIES
        assert issue["assignee"] in (*bench.USERS, None)
        assert issue["project_id"] in (*bench.PROJECTS, None)
        assert set(issue["labels"]) <= set(bench.LABELS)
        assert len(set(issue["labels"])) == len(issue["labels"]) <= 3
        assert STAMP.fullmatch(issue["created_at"]) and STAMP.fullmatch(issue["updated_at"])
        assert issue["created_at"] <= issue["updated_at"]
    assert len({issue["title"] for issue in ISSUES}) > 2990


def test_the_same_seed_makes_the_same_issues() -> None:
    assert bench.generate(300, 7) == bench.generate(300, 7)
    assert bench.generate(300, 7) != bench.generate(300, 8)


def test_stamp_formats_as_iso_does() -> None:
    days: dict[int, str] = {}
    for seconds in (1_767_225_600.0, 1_767_225_600.5, 1_800_000_000.123456, 1_767_225_659.999999):
        assert bench.stamp(seconds, days) == bench.iso(seconds)
