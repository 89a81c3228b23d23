"""`records.prepare` works a page out a column at a time (`ResourceSpec.cells_of`), taking a
column as it came when its values need no converting: whatever the values, each record's
cells, `extra` and labels are what converting it alone gives."""

from __future__ import annotations

from typing import Any

from cache_factories import issue, stamp
from hypothesis import given, settings
from hypothesis import strategies as st

from cache import Resource, records
from cache.resources import SPECS, as_timestamp, dumps, labels_of

ISSUE_COLUMNS_SPEC = SPECS[Resource.ISSUES]
MEMBERS = ("number", "title", "description", "status", "priority", "assignee", "project_id")
STAMPS = ("created_at", "updated_at")

value = st.one_of(
    st.none(),
    st.just(""),
    st.sampled_from(["todo", "done", "urgent", "low", "p9", "usr_1", "prj_1", "Zeta"]),
    st.integers(-5, 2**40),
    st.booleans(),
    st.floats(allow_nan=False),
    st.lists(st.sampled_from(["bug", "ui", 7]), max_size=3),
    st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 3), max_size=2),
)
moment = st.one_of(
    st.integers(0, 10**7).map(stamp),
    st.sampled_from(["2026-01-01T00:00:04+00:00", "yesterday", "", "2026-19-39T29:59:69.000000Z"]),
    st.none(),
    st.integers(0, 10),
)


@st.composite
def records_of_any_shape(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 10**6))
    if draw(st.integers(0, 9)) == 0:
        return {"id": f"iss_{n:06d}", "deleted": True, "updated_at": draw(moment)}
    record = issue(n)
    for member in (*MEMBERS, *STAMPS, "labels", "custom"):
        choice = draw(st.integers(0, 3))
        if choice == 0:
            record.pop(member, None)
        elif choice == 1:
            record[member] = draw(moment if member in STAMPS else value)
    return record


def alone(record: dict[str, Any]) -> records.Prepared:
    """The record prepared by itself, a value at a time (`cells`), `extra` by its rule."""
    if record.get("deleted") is True:
        return records.Prepared(record["id"], as_timestamp(record.get("updated_at")), True)
    cells = ISSUE_COLUMNS_SPEC.cells(record)
    rest = {key: held for key, held in record.items() if key != "id"}
    for place, name in enumerate(ISSUE_COLUMNS_SPEC.column_names):
        held, cell = record.get(name), cells[place]
        if name in rest and held not in (None, "") and type(held) is type(cell) and held == cell:
            del rest[name]
    stamp_at = ISSUE_COLUMNS_SPEC.column_names.index("updated_at")
    stamped = cells[stamp_at]
    return records.Prepared(
        record["id"],
        stamped if stamped is None or isinstance(stamped, str) else dumps(stamped),
        False,
        cells,
        dumps(rest),
        labels_of(record),
    )


@settings(max_examples=300)
@given(st.lists(records_of_any_shape(), max_size=12))
def test_a_page_prepared_column_by_column_is_each_record_prepared_alone(
    page: list[dict[str, Any]],
) -> None:
    assert records.prepare(ISSUE_COLUMNS_SPEC, page) == [alone(record) for record in page]


def test_a_page_of_plain_records_takes_its_columns_as_they_came() -> None:
    """The common page: every column already what it holds, read as it came."""
    page = [issue(n, assignee="usr_1", project_id="prj_1", labels=["bug"]) for n in range(1, 6)]
    assert records.prepare(ISSUE_COLUMNS_SPEC, page) == [alone(record) for record in page]
