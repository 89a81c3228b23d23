"""Sync state: a JSON key/value store and typed cursors."""

from __future__ import annotations

import pytest

from cache import Cache, Cursor, JsonValue, Resource


@pytest.mark.parametrize(
    "value", [1, 2.5, "x", True, [1, "a", None], {"limits": {"minute": 60, "day": 1000}}]
)
def test_state_round_trips_json_values(cache: Cache, value: JsonValue) -> None:
    cache.set_state("k", value)
    assert cache.get_state("k") == value


def test_missing_state_is_none_and_none_removes(cache: Cache) -> None:
    assert cache.get_state("absent") is None
    cache.set_state("k", 1)
    cache.set_state("k", None)
    assert cache.get_state("k") is None


def test_cursors_are_per_resource_and_scope(cache: Cache) -> None:
    first = Cursor("2026-01-01T00:00:00.000000Z", frozenset({"a", "b"}))
    cache.set_cursor(Resource.ISSUES, first)
    cache.set_cursor(Resource.COMMENTS, Cursor("c"), scope="iss_1")
    assert cache.get_cursor(Resource.ISSUES) == first
    assert cache.get_cursor(Resource.COMMENTS) is None
    assert cache.get_cursor(Resource.COMMENTS, scope="iss_1") == Cursor("c")
    cache.set_cursor(Resource.ISSUES, None)
    assert cache.get_cursor(Resource.ISSUES) is None


def test_clock_offset_defaults_to_zero(cache: Cache) -> None:
    assert cache.clock_offset() == 0.0
    cache.set_clock_offset(-3.5)
    assert cache.clock_offset() == -3.5


def test_sweep_time_survives_cursor_changes(cache: Cache) -> None:
    cache.set_last_full_sweep(Resource.ISSUES, 10.0)
    cache.set_cursor(Resource.ISSUES, Cursor("x"))
    assert cache.last_full_sweep(Resource.ISSUES) == 10.0
    assert cache.last_full_sweep(Resource.PROJECTS) is None
