"""The WAL file does not stay at the largest size a big write ever gave it (issue 18)."""

from __future__ import annotations

from cache_factories import issue

from cache import Cache, Resource
from cache.db import WAL_KEPT_BYTES


def test_the_wal_is_cut_back_after_a_big_write(cache: Cache) -> None:
    wal = cache.path.with_name(cache.path.name + "-wal")
    cache.server.bulk_writes(True)
    cache.server.apply_page(
        Resource.ISSUES, [issue(n, description="words " * 200) for n in range(1, 5001)]
    )
    grown = wal.stat().st_size
    cache.server.bulk_writes(False)
    cache.server.checkpoint()
    cache.state.set("after", 1)  # the next write starts the emptied WAL over
    assert grown > 2 * WAL_KEPT_BYTES
    assert wal.stat().st_size <= WAL_KEPT_BYTES
