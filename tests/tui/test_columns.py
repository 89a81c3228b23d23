"""config.toml's `[columns]` (issue 17, configuring): which list columns show, in what order and
how wide, and which give way first as the terminal narrows; the defaults come from the field
table (`issuefields`), and a table that cannot work is refused naming every problem."""

from __future__ import annotations

import re

import pytest
from tui_support import AppFactory, screen_lines, settle

from issuefields import (
    ASSIGNEE,
    CREATED_AT,
    LABELS,
    NUMBER,
    PRIORITY,
    PROJECT,
    STATUS,
    TITLE,
    UPDATED_AT,
)
from tracker_tui.data.columns import ColumnsError, default_setup, parse_columns
from tracker_tui.widgets.issue_columns import layout_columns


def fields(width: int, table: dict[str, object] | None = None) -> list[object]:
    setup = default_setup() if table is None else parse_columns(table)
    return [column.field for column in layout_columns(width, setup)]


def header(app: object) -> str:
    """The list's header line: the first line with the number column's `#`."""
    return next(line for line in screen_lines(app) if re.match(r"\s+#\s", line))


def test_the_defaults_are_the_field_tables() -> None:
    assert fields(200) == [NUMBER, TITLE, STATUS, PRIORITY, ASSIGNEE, PROJECT, LABELS, UPDATED_AT]
    assert fields(80) == [NUMBER, TITLE, STATUS, PRIORITY, UPDATED_AT]
    assert CREATED_AT not in fields(400), "created is a column only when asked for"


def test_show_picks_the_columns_and_their_order() -> None:
    table = {"show": ["number", "status", "title", "created", "assignee"]}
    assert fields(200, table) == [NUMBER, STATUS, TITLE, CREATED_AT, ASSIGNEE]
    assert fields(200, {"show": ["title"]}) == [TITLE]


def test_width_sets_a_columns_cells_and_the_titles_least() -> None:
    setup = parse_columns({"width": {"assignee": 24, "title": 60}})
    widths = {column.field: column.width for column in layout_columns(200, setup)}
    assert widths[ASSIGNEE] == 24
    # 100 cells: the title would get 24 beside everything; at least 60 drops columns first.
    kept = [column.field for column in layout_columns(100, setup)]
    assert LABELS not in kept
    title = next(column for column in layout_columns(100, setup) if column.field is TITLE)
    assert title.width >= 60


def test_drop_first_gives_way_before_the_defaults() -> None:
    # At 80 columns the defaults drop labels, project and assignee; status first drops status.
    narrow = fields(80, {"drop_first": ["status"]})
    assert STATUS not in narrow
    assert ASSIGNEE in narrow or PROJECT in narrow or LABELS in narrow
    assert fields(200, {"drop_first": ["status"]}) == fields(200), "no room lacks at 200"
    assert NUMBER in fields(20), "the number never gives way unless listed"
    assert NUMBER not in fields(20, {"drop_first": ["number"]})


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ({"show": ["number", "titel"]}, "no column 'titel'; did you mean title?"),
        ({"show": ["number", "status"]}, "show must list the title"),
        ({"show": ["title"], "drop_first": ["status"]}, "drop_first lists status, not shown"),
        ({"width": {"status": 0}}, "width.status must be a whole number of cells, 1 to 80"),
        ({"width": {"title": 5}}, "width.title must be a whole number of cells, 10 to 80"),
        ({"hide": ["labels"]}, "unknown key 'hide'"),
        ({"show": "title"}, "show must be a list of column names"),
    ],
)
def test_a_table_that_cannot_work_is_refused(table: dict[str, object], problem: str) -> None:
    with pytest.raises(ColumnsError, match=re.escape(problem)):
        parse_columns(table)


def test_every_problem_is_named_at_once() -> None:
    with pytest.raises(ColumnsError, match="2 problems") as refused:
        parse_columns({"show": ["title", "prio"], "width": {"assigne": 3}})
    assert "did you mean priority?" in str(refused.value)
    assert "did you mean assignee?" in str(refused.value)


async def test_the_list_shows_the_chosen_columns(app_factory: AppFactory) -> None:
    setup = parse_columns(
        {"show": ["number", "status", "title", "created"], "width": {"status": 14}}
    )
    app = app_factory(columns=setup)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        line = header(app)
        assert re.match(r"\s+#\s+Status\s+Title\s+.*Created", line)
        assert "Priority" not in line and "Assignee" not in line
        assert line.index("Title") - line.index("Status") == 15, "14 cells and a space"


async def test_at_80_columns_the_listed_column_gives_way_first(app_factory: AppFactory) -> None:
    app = app_factory(columns=parse_columns({"drop_first": ["priority"]}))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        line = header(app)
        assert "Priority" not in line
        assert "Status" in line and "Updated" in line
