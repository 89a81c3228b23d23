"""Full garbage collections moved to the moments the user is not typing.

Once the start-up heap is frozen (`app.release_collections`), CPython still runs a full
collection whenever ten collections of the middle generation have piled up: in the app that
came every fifteen keystrokes or so and walked what the screens built since (styles, cached
lines, widgets), 50-320 ms on the event loop in the middle of a keystroke, the cause of most
slow keys (docs/architecture.md#keys-during-a-pull). While the app runs, CPython's own full
collection comes only after `FULL_EVERY` such collections, a backstop for a user who never
pauses, and the app runs one itself when no input has come for `IDLE_AFTER` seconds and at
least as many have piled up as CPython would have waited for.
"""

from __future__ import annotations

import gc
import time

from textual import events
from textual.app import App

FULL_EVERY = 100
"""Collections of the middle generation before CPython runs a full one by itself (its own
default is 10)."""
PILED = 10
"""Collections of the middle generation since the last full one that make an idle moment
collect: CPython's default threshold, so memory is reclaimed as often as before."""
IDLE_AFTER = 1.0
"""Seconds without a key or a mouse event that make a moment idle."""
CHECK_EVERY = 0.5
"""Seconds between looks at whether the app is idle with garbage piled up."""


def collect_rarely() -> None:
    """Keep CPython's young and middle thresholds; make its own full collections rare."""
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_EVERY)


class IdleCollectingApp(App[str | None]):
    """An app that runs full garbage collections when the user has paused."""

    def __init__(self) -> None:
        super().__init__()
        self._input_at = time.monotonic()
        self.idle_collections = 0
        """Full collections this app ran in idle moments (what tests and benchmarks read)."""

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent):
            self._input_at = time.monotonic()
        await super().on_event(event)

    def collect_when_idle(self) -> None:
        """From now on, full collections wait for the user to pause (after the start-up heap
        is frozen: before, they would walk it)."""
        collect_rarely()
        self.set_interval(CHECK_EVERY, self._collect_if_idle, name="idle collector")

    def _collect_if_idle(self) -> None:
        if not gc.isenabled() or gc.get_count()[2] < PILED:
            return
        if time.monotonic() - self._input_at < IDLE_AFTER:
            return
        gc.collect()
        self.idle_collections += 1
