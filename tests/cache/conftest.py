"""Fixtures for the cache tests: a fresh database file per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cache_factories import Clock, Record

from cache import Cache, Resource


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def cache(tmp_path: Path, clock: Clock) -> Iterator[Cache]:
    opened = Cache.open(tmp_path / "cache.db", clock=clock)
    yield opened
    opened.close()


@pytest.fixture
def add_issues(cache: Cache) -> Callable[..., list[Record]]:
    def add(*records: Record) -> list[Record]:
        cache.server.apply_page(Resource.ISSUES, list(records))
        return list(records)

    return add
