"""Textual's terminal driver, with output that outlives the terminal it was drawn on.

Textual writes the screen from one thread ("textual-output") that takes text off a queue of 30
and writes it to stderr. When the terminal is closed (its window, an ssh connection), every
write fails with EIO: the exception ends that thread, the queue fills with the next frames, and
the app's own thread then blocks for good on the 31st write. That happened on the way out of
a hung-up demo (`Driver.close` queues the escape codes that restore the terminal): the process
never ended, and the demo's service and temporary folders stayed behind. Here a write to a
terminal that has gone away is dropped instead, so the thread keeps emptying the queue and the
app quits as ctrl+q would.
"""

from __future__ import annotations

import errno
from typing import IO, Any

from textual.drivers.linux_driver import LinuxDriver

GONE = frozenset({errno.EIO, errno.EPIPE, errno.ENXIO, errno.EBADF})
"""What a write to a terminal that has been closed fails with."""


class SurvivingOutput:
    """A text stream that stops writing, without raising, once its terminal has gone away."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self._stream.write(text)
            except OSError as error:
                self._lost(error)
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except OSError as error:
                self._lost(error)

    def fileno(self) -> int:
        return self._stream.fileno()

    def _lost(self, error: OSError) -> None:
        if error.errno not in GONE:
            raise error
        self.gone = True


class TerminalDriver(LinuxDriver):
    """`LinuxDriver`, writing through `SurvivingOutput`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self._file is not None:
            self._file = SurvivingOutput(self._file)  # type: ignore[assignment]
