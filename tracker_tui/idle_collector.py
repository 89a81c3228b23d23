"""Full garbage collections run in the moments the user is not typing.

Once the start-up heap is frozen (`app.release_collections`), CPython still runs a full
collection whenever ten collections of the middle generation have piled up (and what survived
them grew by a quarter): in the app that came every fifteen keystrokes or so and walked what
the screens built since (styles, cached lines, widgets), 50-320 ms on the event loop in the
middle of a keystroke (docs/architecture.md#keys-during-a-pull). The app runs one itself when
no input has come for `IDLE_AFTER` seconds and `PILED` middle-generation collections have piled
up, so that a user who pauses finds the next burst of keys starting from a collected heap.

CPython's own thresholds stay as they are: raising the full one (to 100) so that only idle
moments collected made one continuous run of typing pay a single collection of 0.9 s instead
of several of at most 0.2-0.3 s (`benchmarks/tui.py --keys-home`, 2026-11-27).
"""

from __future__ import annotations

import gc
import time

from textual import events
from textual.app import App

PILED = 5
"""Collections of the middle generation since the last full one that make an idle moment
collect: half of CPython's own threshold, so that the collection it would run next is
rarely reached in a burst of keys."""
IDLE_AFTER = 1.0
"""Seconds without a key or a mouse event that make a moment idle."""
CHECK_EVERY = 0.5
"""Seconds between looks at whether the app is idle with garbage piled up."""


class IdleCollectingApp(App[str | None]):
    """An app that runs full garbage collections when the user has paused."""

    def __init__(self) -> None:
        super().__init__()
        self._input_at = time.monotonic()
        self.idle_collections = 0
        """Full collections this app ran in idle moments (what tests read)."""

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent):
            self._input_at = time.monotonic()
        await super().on_event(event)

    def collect_when_idle(self) -> None:
        """From now on, collect in the user's pauses (after the start-up heap is frozen:
        before, a collection would walk it)."""
        self.set_interval(CHECK_EVERY, self._collect_if_idle, name="idle collector")

    def _collect_if_idle(self) -> None:
        if not gc.isenabled() or gc.get_count()[2] < PILED:
            return
        if time.monotonic() - self._input_at < IDLE_AFTER:
            return
        gc.collect()
        self.idle_collections += 1
