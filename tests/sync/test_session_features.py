"""Sessions remember what a server supports, including what a pull learned on the way."""

from __future__ import annotations

from pathlib import Path

from test_pull_support import on_list_page, served, session_on

from cache import Cache
from sync.session import remember_features


async def test_features_are_probed_once_and_learned_ones_are_kept(tmp_path: Path) -> None:
    lists: list[int] = []

    async def count(served_count: int) -> None:
        lists.append(served_count)

    with Cache.open(tmp_path / "cache.db") as cache:
        async with served(
            tmp_path, 3, wrap=lambda app: on_list_page(app, "/issues", count)
        ) as service:
            async with session_on(service, cache) as session:
                assert session.features.keyset_order is True
                probed = len(lists)
                session.features = session.features.replace(tombstones=True)
                remember_features(session)
            async with session_on(service, cache) as again:
                assert again.features.tombstones is True
    assert probed == 1 and len(lists) == probed  # the second session sent no probe
