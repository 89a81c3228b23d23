"""The rows of `cache.models` written out as `Frozen` classes behave as the frozen dataclasses
they replaced: built by position or keyword, compared and hashed by value (leaving out the
whole `record`, as `field(compare=False)` did), immutable, copied and pickled whole."""

from __future__ import annotations

import copy
import pickle

import pytest

from cache.models import (
    ApplyResult,
    CommentRow,
    Conflict,
    Cursor,
    FieldConflict,
    IssueSort,
    LogCheck,
    ProjectRow,
    Resolution,
    SyncState,
    UserRow,
    WorkspaceRow,
)
from issuefields.frozen import Frozen


def comment(body: str = "hello", record: dict[str, object] | None = None) -> CommentRow:
    return CommentRow(
        "c1", "i1", body, "u1", "2026-01-01", None, SyncState.SYNCED, record or {"id": "c1"}
    )


EXAMPLES: tuple[Frozen, ...] = (
    ApplyResult(1, 2),
    Cursor("2026-01-01T00:00:00Z", frozenset({"a"})),
    IssueSort("priority", descending=False),
    LogCheck(1.5, 10, None),
    UserRow("u1", "Ann", None),
    comment(),
    ProjectRow("p1", "WEB", "Web", "", "active", None, None, None, SyncState.PENDING, {}),
    WorkspaceRow("w1", "Acme", None, SyncState.SYNCED, (), {"id": "w1"}),
    FieldConflict("title", "a", "b", "c"),
    Conflict(1, 2, "title", "a", "b", "c", 3.0, Resolution.MINE, None),
)


@pytest.mark.parametrize("row", EXAMPLES, ids=lambda row: type(row).__name__)
def test_a_row_is_a_value(row: Frozen) -> None:
    again = copy.copy(row)
    assert again == row and again is not row
    assert copy.deepcopy(row) == row
    assert pickle.loads(pickle.dumps(row)) == row
    assert repr(row).startswith(f"{type(row).__name__}(")
    assert row != row._key(row) and row != tuple(getattr(row, name) for name in row._fields)


@pytest.mark.parametrize("row", EXAMPLES, ids=lambda row: type(row).__name__)
def test_a_row_cannot_change(row: Frozen) -> None:
    name = row._fields[0]
    with pytest.raises(AttributeError):
        setattr(row, name, None)
    with pytest.raises(AttributeError):
        delattr(row, name)
    with pytest.raises(AttributeError):
        row.extra = 1  # type: ignore[attr-defined]


def test_defaults_keywords_and_the_fields_shown() -> None:
    assert ApplyResult() == ApplyResult(0, 0, 0, 0)
    assert ApplyResult(deleted=3).deleted == 3
    assert Cursor("t").ids == frozenset()
    assert IssueSort() == IssueSort("updated", True)
    assert repr(UserRow("u1", "Ann", None)) == "UserRow(id='u1', name='Ann', email=None)"


def test_an_unknown_sort_key_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown sort key"):
        IssueSort("colour")


def test_the_record_is_carried_but_not_compared() -> None:
    """Two reads of one comment whose stored JSON differs only in members the client does not
    show are the same row, and hash alike: the record is a dict, which has no hash."""
    one, two = comment(record={"id": "c1", "x": 1}), comment(record={"id": "c1", "x": 2})
    assert one == two and hash(one) == hash(two)
    assert one != comment(body="changed")
    assert len({one, two, comment(body="changed")}) == 2


def test_rows_hash_alike_when_equal() -> None:
    assert hash(UserRow("u1", "Ann", None)) == hash(UserRow("u1", "Ann", None))
    assert {Cursor("t", frozenset({"a"})): 1}[Cursor("t", frozenset({"a"}))] == 1
    assert UserRow("u1", "Ann", None) != UserRow("u1", "Bob", None)
