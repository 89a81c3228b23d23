"""Cell text: relative times, fitting to a width in terminal cells, labels."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from rich.cells import cell_len

from issuefields import PRIORITY, STATUS
from tracker_tui.formatting import (
    count_label,
    fit,
    issue_reference,
    relative_time,
)

NOW = datetime(2026, 11, 21, 15, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("age", "expected"),
    [
        (timedelta(seconds=0), "just now"),
        (timedelta(seconds=59), "just now"),
        (timedelta(minutes=1), "1m ago"),
        (timedelta(minutes=59, seconds=59), "59m ago"),
        (timedelta(hours=3), "3h ago"),
        (timedelta(days=1), "1d ago"),
        (timedelta(days=29), "29d ago"),
        (timedelta(days=30), "1mo ago"),
        (timedelta(days=364), "12mo ago"),
        (timedelta(days=365), "1y ago"),
        (timedelta(days=800), "2y ago"),
        (-timedelta(minutes=10), "just now"),
    ],
)
def test_relative_time_uses_the_coarsest_unit(age: timedelta, expected: str) -> None:
    assert relative_time(NOW - age, NOW) == expected


@pytest.mark.parametrize(
    ("text", "width", "expected"),
    [
        ("short", 8, "short   "),
        ("exactly8", 8, "exactly8"),
        ("much too long", 8, "much to…"),
        ("anything", 0, ""),
        ("ab", 1, "…"),
    ],
)
def test_fit_pads_or_cuts_with_an_ellipsis(text: str, width: int, expected: str) -> None:
    assert fit(text, width) == expected


def test_fit_counts_wide_characters_as_two_cells() -> None:
    fitted = fit("修复登录表单的问题", 9)
    assert cell_len(fitted) == 9
    assert fitted.endswith("…")


def test_labels_prettify_known_values_and_keep_unknown_ones() -> None:
    assert STATUS.label_of("in_progress") == "In progress"
    assert STATUS.label_of("blocked") == "blocked"
    assert PRIORITY.label_of("urgent") == "Urgent"
    assert PRIORITY.label_of("none") == "No priority"
    assert PRIORITY.label_of("p0") == "p0"


def test_references_and_counts() -> None:
    assert issue_reference(42, "iss_x") == "#42"
    assert issue_reference(None, "iss_x") == "iss_x"
    assert count_label(1, "issue") == "1 issue"
    assert count_label(12345, "issue") == "12,345 issues"
