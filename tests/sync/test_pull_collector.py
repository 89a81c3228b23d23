"""The collector's youngest-generation threshold is raised while pulls run, then restored."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_pull_support import FAST_RETRY, App, on_list_page, served, session_on

from cache import Cache
from sync.pull import pull
from sync.pull.collector import YOUNG_THRESHOLD, fewer_collections


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    gc.set_threshold(500, 7, 9)
    yield (500, 7, 9)
    gc.set_threshold(*saved)


async def test_a_pull_raises_the_young_threshold_and_puts_the_old_ones_back(
    tmp_path: Path, cache: Cache, thresholds: tuple[int, int, int]
) -> None:
    seen: list[tuple[int, int, int]] = []
    counting = False

    async def look(served_count: int) -> None:
        if counting:
            seen.append(gc.get_threshold())

    def wrap(app: App) -> App:
        return on_list_page(app, "/issues", look)

    async with served(tmp_path, 250, wrap=wrap) as service:
        async with session_on(service, cache):
            pass  # features probed before counting: the pull below sends only list requests
        counting = True
        async with session_on(service, cache) as session:
            await pull(session, retry=FAST_RETRY)
    assert seen and set(seen) == {(YOUNG_THRESHOLD, 7, 9)}
    assert gc.get_threshold() == thresholds


def test_overlapping_pulls_restore_the_thresholds_when_the_last_ends(
    thresholds: tuple[int, int, int],
) -> None:
    first, second = fewer_collections(), fewer_collections()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert gc.get_threshold() == (YOUNG_THRESHOLD, 7, 9)
    second.__exit__(None, None, None)
    assert gc.get_threshold() == thresholds


def test_the_older_thresholds_set_during_a_pull_stay_when_it_ends(
    thresholds: tuple[int, int, int],
) -> None:
    """The app makes full collections rare once its first list is drawn, which may be while
    the first pull runs: the pull's end must not bring CPython's default back."""
    with fewer_collections():
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, 100)
    assert gc.get_threshold() == (500, 7, 100)


def test_a_process_that_turned_automatic_collection_off_keeps_it_off() -> None:
    saved = gc.get_threshold()
    gc.set_threshold(0)
    try:
        with fewer_collections():
            assert gc.get_threshold()[0] == 0
        assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*saved)
