"""Full garbage collections run in the user's pauses (tracker_tui/idle_collector.py).

CPython ran one every fifteen keystrokes or so once the app's start-up heap was frozen, each
50-320 ms on the event loop in the middle of a key. Each test piles up collections of the
middle generation by hand (`gc.collect(1)`), which is what typing does."""

from __future__ import annotations

import asyncio
import gc

import pytest
from tui_support import AppFactory, settle

from tracker_tui import idle_collector
from tracker_tui.idle_collector import PILED

SIZE = (100, 30)


@pytest.fixture(autouse=True)
def _look_often(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(idle_collector, "CHECK_EVERY", 0.05)


def _pile_up() -> None:
    for _ in range(PILED):
        gc.collect(1)


async def test_no_collection_of_its_own_while_keys_keep_coming(
    app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys come every 0.05 s for two seconds, four times as long as the idle moment."""
    monkeypatch.setattr(idle_collector, "IDLE_AFTER", 0.5)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _pile_up()
        typing_ends = asyncio.get_running_loop().time() + 2.0
        while asyncio.get_running_loop().time() < typing_ends:
            await pilot.press("j", "k")
            await asyncio.sleep(0.05)
        assert app.idle_collections == 0


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
