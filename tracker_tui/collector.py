"""The cyclic garbage collector paused while a short command runs (`tracker_tui.cli.main`).

A command's start makes some 20,000 objects that live until it ends (modules, classes, the
parser), and collecting them again and again as they are made cost about a tenth of a
short command's time (docs/architecture.md#start-up); a command that reads the cache or
queues a write makes next to no cyclic garbage. A command turns it back on as it goes
online (`collect_again`): asyncio, httpx and their retries make cyclic garbage for as long
as it talks to the server. Apart from the command line so that its commands can call it
(they may not import `tracker_tui.cli`).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_paused = False
"""Whether `paused` turned the collector off, and it is still off."""


@contextmanager
def paused(*, ending: bool = False) -> Iterator[None]:
    """The collector off for the block (unless it was off already), and as it was after.

    `ending`: the process ends with the block (the console script, `tracker_tui.cli.run`).
    What is alive then is frozen (`gc.freeze`) before the collector is back: otherwise its
    first collection, at once since the block allocated past every threshold, and the
    interpreter's own at exit each walk the ~17,000 objects the command made, which cost
    `issues list` a tenth of its instructions. Not for `main` called in a process that goes
    on (a test): what is frozen is never collected."""
    global _paused
    collecting = gc.isenabled()
    gc.disable()
    _paused = collecting
    try:
        yield
    finally:
        _paused = False
        if ending:
            gc.freeze()
        if collecting:
            gc.enable()


def collect_again() -> None:
    """The collector back on, where `paused` turned it off."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()
