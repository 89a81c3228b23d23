"""Full garbage collections run in the user's pauses (tracker_tui/idle_collector.py).

CPython ran one every fifteen keystrokes or so once the app's start-up heap was frozen, each
50-320 ms on the event loop in the middle of a key. Each test piles up collections of the
middle generation by hand (`gc.collect(1)`), which is what typing does."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Callable

import pytest
from textual import events
from textual.app import App
from textual.pilot import Pilot
from tui_support import AppFactory, settle

from tracker_tui import idle_collector
from tracker_tui.idle_collector import PILED

SIZE = (100, 30)


@pytest.fixture(autouse=True)
def _look_often(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(idle_collector, "CHECK_EVERY", 0.05)


async def _type(
    app: App[object], seconds: float, until: Callable[[], bool] = lambda: False
) -> None:
    """`j` and `k` every 0.05 s, posted as the terminal driver posts them: `Pilot.press` waits
    for the app to be idle after each key, which under load left gaps of 0.6-0.8 s."""
    loop = asyncio.get_running_loop()
    typing_ends = loop.time() + seconds
    while loop.time() < typing_ends and not until():
        for key in "jk":
            app.post_message(events.Key(key, key))
        await asyncio.sleep(0.05)


def _pile_up() -> None:
    for _ in range(PILED):
        gc.collect(1)


async def test_no_collection_of_its_own_while_keys_keep_coming(
    app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys come every 0.05 s for three seconds, three times as long as the idle moment. The
    first key is pressed before the garbage piles up: until a key comes, the app has been idle
    since it started (a check queued before the first typed key found it so)."""
    monkeypatch.setattr(idle_collector, "IDLE_AFTER", 1.0)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j")
        _pile_up()
        before = app.idle_collections
        await _type(app, 3.0)
        assert app.idle_collections == before


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


KNOTS = 20_000
"""Cycles a test drops after they were frozen. The bounds are set at half of it: the app's own
objects, frozen before and freed since, take up to 2,000 off the frozen count meanwhile."""


class _Knot:
    """A cycle of objects: only the collector frees it, never reference counting."""

    def __init__(self) -> None:
        self.me = self


async def _collecting(pilot: Pilot[object]) -> None:
    """Settled, and the app's own collecting begun (a frame after the first list)."""
    await settle(pilot)
    for _ in range(40):
        if pilot.app.collecting:
            return
        await pilot.pause(0.05)
    raise AssertionError("the app never began collecting")


async def _wait_for_sweeps(app: object, sweeps: int) -> None:
    for _ in range(60):
        if getattr(app, "sweeps", 0) >= sweeps:
            return
        await asyncio.sleep(0.05)


async def test_what_a_full_collection_leaves_is_frozen(app_factory: AppFactory) -> None:
    """So that the next full collection walks only what was made since."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _collecting(pilot)
        knot = _Knot()
        assert any(thing is knot for thing in gc.get_objects())
        gc.collect()
        assert not any(thing is knot for thing in gc.get_objects())  # frozen: out of reach
    frozen = gc.get_freeze_count()
    gc.collect()
    # Frozen objects still die by their counts (the list's reader thread ends after its app,
    # its connection with it), which lowers the count; a callback left freezing raises it.
    assert gc.get_freeze_count() <= frozen, "an app that ended still freezes"


async def test_a_pause_sweeps_the_garbage_held_frozen(
    app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cycle alive at a freeze and dropped after it is freed by the sweep of an idle
    moment, and by no ordinary collection before it."""
    monkeypatch.setattr(idle_collector, "IDLE_AFTER", 0.3)
    monkeypatch.setattr(idle_collector, "SWEEP_AFTER", KNOTS // 2)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _collecting(pilot)
        await pilot.press("j")
        knots = [_Knot() for _ in range(KNOTS)]
        gc.collect()
        held = weakref.ref(knots[0])
        del knots
        gc.collect()
        assert held() is not None
        assert app.sweeps == 0
        await _wait_for_sweeps(app, 1)
        assert app.sweeps >= 1
        assert held() is None


async def test_keys_that_never_pause_sweep_once_too_much_is_held(
    app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No moment is idle here (`IDLE_AFTER` is a minute): the sweep comes from the bound."""
    monkeypatch.setattr(idle_collector, "IDLE_AFTER", 60.0)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await _collecting(pilot)
        knots = [_Knot() for _ in range(KNOTS)]
        gc.collect()
        held = weakref.ref(knots[0])
        del knots
        monkeypatch.setattr(idle_collector, "SWEEP_ANYWAY", KNOTS // 2)
        await _type(app, 1.0, until=lambda: held() is None)
        assert app.sweeps >= 1
        assert app.idle_collections == 0
        assert held() is None
