"""Hold back the screen's next frame while a new query's first rows are read, a little while.

A keystroke that changes the list's query (typing a search, `m`, a filter dialog) changes other
widgets at once: the search field, the chips, the dialog closing. Drawn straight away, that
frame is followed by the rows a few milliseconds later, and Textual's frame timer, after a
frame that comes in after an idle spell, waits one to two frame periods (17 to 33 ms at 60 fps)
before it draws the next: the rows arrive, then wait. Holding the first frame (the app's
`batch_update`) until the rows are in draws everything the key changed in one frame as soon as
they arrive, the way `PLACEHOLDER_DELAY` keeps old rows rather than flashing placeholders.
The hold never lasts more than `FRAME_HOLD`, so a slow query only delays the echo that long.
"""

from __future__ import annotations

from contextlib import ExitStack

from textual.timer import Timer
from textual.widget import Widget

FRAME_HOLD = 0.08
"""Seconds a query change may hold back the frame that shows it (a key's echo waits no more)."""


class FrameHold:
    """One hold of the app's frames at a time, released on demand or after `FRAME_HOLD`."""

    def __init__(self, owner: Widget, limit: float | None = None) -> None:
        self._owner = owner
        self._limit = FRAME_HOLD if limit is None else limit
        """Read when the list is built, not when this module loads, so a test on a loaded
        machine can lengthen it where the limit is not what it checks."""
        self._batch: ExitStack | None = None
        self._timer: Timer | None = None

    @property
    def held(self) -> bool:
        """Whether frames are held back now."""
        return self._batch is not None

    def hold(self) -> None:
        """Hold frames until `release`, or `FRAME_HOLD` after the first of several holds:
        keys typed in a burst do not push the echo of the first one further back."""
        if self._batch is not None:
            return
        batch = ExitStack()
        batch.enter_context(self._owner.app.batch_update())
        self._batch = batch
        self._timer = self._owner.set_timer(self._limit, self.release, name="frame-hold")

    def release(self) -> None:
        """Let the next frame be drawn (whatever changed meanwhile goes into it)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self._batch is not None:
            batch, self._batch = self._batch, None
            batch.close()
