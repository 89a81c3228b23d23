"""Full garbage collections wait for the user's pauses (tracker_tui/idle_collector.py).

CPython ran one every fifteen keystrokes or so once the app's start-up heap was frozen, each
50-320 ms on the event loop in the middle of a key. Each test pushes the middle generation
past CPython's own threshold by hand (`gc.collect(1)` ten times), which is what typing does."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest
from tui_support import AppFactory, settle

from tracker_tui import idle_collector
from tracker_tui.idle_collector import FULL_EVERY, PILED

SIZE = (100, 30)


@pytest.fixture(autouse=True)
def _thresholds(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    saved = gc.get_threshold()
    monkeypatch.setattr(idle_collector, "CHECK_EVERY", 0.05)
    yield
    gc.set_threshold(*saved)


def _pile_up() -> None:
    for _ in range(PILED):
        gc.collect(1)


async def test_once_the_list_is_drawn_cpython_collects_everything_rarely(
    app_factory: AppFactory,
) -> None:
    async with app_factory().run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.pause(0.2)
        assert gc.get_threshold()[2] == FULL_EVERY


async def test_no_full_collection_while_keys_keep_coming(
    app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(idle_collector, "IDLE_AFTER", 30.0)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _pile_up()
        for key in "jjkkjjkk":
            await pilot.press(key)
            await asyncio.sleep(0.05)
        await pilot.pause(0.5)
        assert app.idle_collections == 0
        assert gc.get_count()[2] >= PILED


async def test_a_pause_with_garbage_piled_up_collects_it_once(
    app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(idle_collector, "IDLE_AFTER", 0.2)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j")
        _pile_up()
        for _ in range(40):
            await asyncio.sleep(0.05)
            if app.idle_collections:
                break
        await pilot.pause(0.3)
        assert app.idle_collections == 1
        assert gc.get_count()[2] < PILED
