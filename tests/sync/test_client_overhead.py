"""Per-request overhead of the API client that no response shows: work repeated per request."""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Iterator, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

import pytest

from accounts.secret import Secret
from cache import Cache
from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.client import ApiClient
from sync.ratelimit import RateLimiter


class ImportLookups(importlib.abc.MetaPathFinder):
    """Records every module the import system searches for (a failed import searches again
    each time: nothing caches a miss)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        self.names.append(fullname)
        return None


@pytest.fixture
def lookups() -> Iterator[ImportLookups]:
    finder = ImportLookups()
    sys.meta_path.insert(0, finder)
    yield finder
    sys.meta_path.remove(finder)


async def test_requests_over_a_real_socket_search_for_no_module(
    tmp_path: Path, lookups: ImportLookups
) -> None:
    """httpcore imports sniffio for every lock and event it makes; where sniffio was missing
    (it is now a dependency), each attempt searched all of sys.path: a tenth of a cold sync's
    client CPU."""
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 5, plan="pro")
    with (
        ServiceThread(create_app(db, window_seconds=1.0)) as service,
        Cache.open(tmp_path / "cache.db") as cache,
    ):
        limiter = RateLimiter(cache, window_seconds=1.0, plan="pro")
        async with ApiClient(service.base_url, Secret(key), limiter=limiter) as client:
            await client.list_issues(per_page=2)  # modules loaded once, on first use
            lookups.names.clear()
            for _ in range(5):
                page = (await client.list_issues(per_page=2)).value
                assert len(page.data) == 2
    assert lookups.names == []
