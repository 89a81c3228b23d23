"""Sync state: a JSON key/value store and typed cursors."""

from __future__ import annotations

import pytest

from cache import Cache, Cursor, JsonValue, Resource


@pytest.mark.parametrize(
    "value", [1, 2.5, "x", True, [1, "a", None], {"limits": {"minute": 60, "day": 1000}}]
)
def test_state_round_trips_json_values(cache: Cache, value: JsonValue) -> None:
    cache.state.set("k", value)
    assert cache.state.get("k") == value


def test_missing_state_is_none_and_none_removes(cache: Cache) -> None:
    assert cache.state.get("absent") is None
    cache.state.set("k", 1)
    cache.state.set("k", None)
    assert cache.state.get("k") is None


def test_cursors_are_per_resource_and_scope(cache: Cache) -> None:
    first = Cursor("2026-01-01T00:00:00.000000Z", frozenset({"a", "b"}))
    cache.server.apply_page(Resource.ISSUES, [], first)
    cache.server.apply_page(Resource.COMMENTS, [], Cursor("c"), scope="iss_1")
    assert cache.server.cursor(Resource.ISSUES) == first
    assert cache.server.cursor(Resource.COMMENTS) is None
    assert cache.server.cursor(Resource.COMMENTS, scope="iss_1") == Cursor("c")


def test_clock_offset_defaults_to_zero(cache: Cache) -> None:
    assert cache.state.clock_offset() == 0.0
    cache.state.set_clock_offset(-3.5)
    assert cache.state.clock_offset() == -3.5


def test_sweep_time_survives_cursor_changes(cache: Cache) -> None:
    cache.server.delete_missing(Resource.ISSUES, [], swept_at=10.0)
    cache.server.apply_page(Resource.ISSUES, [], Cursor("x"))
    assert cache.server.last_full_sweep(Resource.ISSUES) == 10.0
    assert cache.server.last_full_sweep(Resource.PROJECTS) is None
