"""SIGHUP and SIGTERM end the process the way Ctrl-C does: through every `with` and `finally`.

Left to their default, both kill the process on the spot: a demo closed with its terminal
left its seeded service and cache (~19 MB of `tracker-demo-*` folders) behind every time, and
a command lost its chance to say what it had done. Here they raise `Terminated`, a
`KeyboardInterrupt`, because asyncio lets only that and `SystemExit` out of a running loop
(any other exception raised in a callback is logged and swallowed).

An app is asked to quit first (`stop`): Textual then puts the terminal back and returns from
`run()` like after ctrl+q. A second signal, or one that arrives while no event loop runs (the
demo still seeding), raises at once.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from tracker_tui.exit_codes import for_signal

ENDING = (signal.SIGHUP, signal.SIGTERM)


class Terminated(KeyboardInterrupt):
    """The process was asked to end by a signal (the terminal closed, or `kill`)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def status(self) -> int:
        return for_signal(self.signum)


class Ending:
    """Which signal ended the process, if one did. (Not a dataclass: `dataclasses` costs a
    command line's start more than the rest of this module.)"""

    __slots__ = ("signum",)

    def __init__(self, signum: int | None = None) -> None:
        self.signum = signum

    @property
    def status(self) -> int | None:
        return None if self.signum is None else for_signal(self.signum)


@contextmanager
def ending_cleanly(stop: Callable[[], None] | None = None) -> Iterator[Ending]:
    """For the block: SIGHUP and SIGTERM call `stop` on the running event loop (once), else
    raise `Terminated`. Outside the main thread signals cannot be handled: nothing changes."""
    ending = Ending()

    def handler(signum: int, _frame: FrameType | None) -> None:
        first = ending.signum is None
        ending.signum = signum
        # Where asyncio was never imported (a command's `with`), no loop can be running; the
        # command line starts without it (docs/architecture.md#start-up).
        asyncio = sys.modules.get("asyncio")
        if first and stop is not None and asyncio is not None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                pass
            else:
                loop.call_soon_threadsafe(stop)
                return
        raise Terminated(signum)

    try:
        previous = {signum: signal.signal(signum, handler) for signum in ENDING}
    except ValueError:
        yield ending
        return
    try:
        yield ending
    finally:
        for signum, action in previous.items():
            signal.signal(signum, action)
