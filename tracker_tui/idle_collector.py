"""Full garbage collections kept short during keys, and the long ones moved to the user's pauses.

Once the start-up heap is frozen (`app.release_collections`), CPython still runs a full
collection whenever ten collections of the middle generation have piled up (and what survived
them grew by a quarter): in the app that came every six keystrokes or so and walked everything
the screens built since the start (cached lines, styles, widgets: some 30,000 objects at
100,000 issues), 50-85 ms on the event loop in the middle of a keystroke
(docs/architecture.md#keys-during-a-pull). Two things keep that walk short:

- What survives a full collection is frozen as it ends (`gc.freeze`), so the next one walks
  only what was made since: 10-33 ms at most instead of 50-64 ms, and half the time in all
  (`benchmarks/tui.py --keys-home`, 2026-11-27).
- Frozen objects are never collected, and some of what was alive at a freeze becomes cyclic
  garbage later (widgets and lines replaced since): the frozen heap grew by 53,000 objects
  over the 464 timed keys of `benchmarks/tui.py --keys-home --samples 200` at 100,000 issues
  (about 500 a key before the list stopped leaving cyclic garbage per line, t18-draw).
  In the user's pauses (no input for `IDLE_AFTER` seconds),
  once `SWEEP_AFTER` objects were frozen since the last sweep, the app unfreezes everything,
  collects and freezes what is left: one long walk (the start-up heap too) where nobody waits
  for it. Should input never pause (a key held down), the sweep runs anyway past
  `SWEEP_ANYWAY`, trading one pause for a bounded heap.

An idle moment also runs an ordinary full collection once `PILED` middle-generation ones have
piled up, so that a user who pauses finds the next burst of keys starting from a collected
heap. CPython's own thresholds stay as they are: raising the full one (to 100) so that only
idle moments collected made one continuous run of typing pay a single collection of 0.9 s,
and raising the young one (to 10,000) made the middle generation's collections as long as
the full ones were (62-79 ms).
"""

from __future__ import annotations

import gc
import time
from typing import Any

from textual import events, on
from textual.app import App

PILED = 5
"""Collections of the middle generation since the last full one that make an idle moment
collect: half of CPython's own threshold, so that the collection it would run next is
rarely reached in a burst of keys."""
IDLE_AFTER = 1.0
"""Seconds without a key or a mouse event that make a moment idle."""
CHECK_EVERY = 0.5
"""Seconds between looks at whether the app is idle with garbage piled up."""
SWEEP_AFTER = 50_000
"""Objects frozen since the last sweep that make an idle moment sweep (about 6 MiB, some
four hundred keys of typing)."""
SWEEP_ANYWAY = 400_000
"""Objects frozen since the last sweep that make the app sweep even while keys keep coming
(about 50 MiB; a sweep then walks half a million objects, some 0.3 s)."""


class IdleCollectingApp(App[str | None]):
    """An app whose full garbage collections walk little, and whose long ones wait for a
    pause in the user's input."""

    def __init__(self) -> None:
        super().__init__()
        self._input_at = time.monotonic()
        self._grown = 0
        """Objects frozen since the last sweep, counted as each full collection freezes them:
        `gc.get_freeze_count` walks the whole frozen heap, 15 ms at 100,000 issues, which
        every look at the heap paid on the event loop (twice a second, into keys' times)."""
        self._sweeping = False
        self.idle_collections = 0
        """Full collections this app ran in idle moments (what tests read)."""
        self.sweeps = 0
        """Times this app collected its frozen heap (what tests read)."""
        self.collecting = False
        """Whether the start-up heap is frozen and this app's collecting began (tests wait
        for it: it comes a frame after the first list)."""

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent):
            self._input_at = time.monotonic()
        await super().on_event(event)

    def collect_when_idle(self) -> None:
        """From now on, freeze what each full collection leaves and collect in the user's
        pauses (after the start-up heap is frozen: before, a collection would walk it)."""
        self._grown = 0
        gc.callbacks.append(self._freeze_survivors)
        self.collecting = True
        self.set_interval(CHECK_EVERY, self._collect_if_idle, name="idle collector")

    def _freeze_survivors(self, phase: str, info: dict[str, Any]) -> None:
        """After a full collection, on whichever thread ran it (a collection holds the GIL)."""
        if phase == "stop" and info["generation"] == 2:
            if not self._sweeping:
                self._grown += len(gc.get_objects(generation=2))  # what this one walked
            gc.freeze()

    @on(events.Unmount)
    def _stop_freezing(self) -> None:
        """The process may go on without this app (tests run many)."""
        if self._freeze_survivors in gc.callbacks:
            gc.callbacks.remove(self._freeze_survivors)

    def _collect_if_idle(self) -> None:
        if not gc.isenabled():
            return
        grown = self._grown
        if grown >= SWEEP_ANYWAY:
            self._sweep()
            return
        if time.monotonic() - self._input_at < IDLE_AFTER:
            return
        if grown >= SWEEP_AFTER:
            self._sweep()
        elif gc.get_count()[2] >= PILED:
            gc.collect()
            self.idle_collections += 1

    def _sweep(self) -> None:
        """Collect the garbage held in the frozen heap, and freeze what is left again."""
        self._sweeping = True
        try:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
        finally:
            self._sweeping = False
        self._grown = 0
        self.sweeps += 1
