"""Waiting for the keys already typed before acting on a key that jumps the queue.

Textual hands each key to the focused widget's own queue, but runs a priority binding (`ctrl+s`
saving a form) on the app's loop as soon as the key arrives. When keys come in one burst (a fast
typist, a terminal multiplexer, a script), the save ran before the field had taken the last
letters typed, and the issue was queued with its title cut short. An action that reads what was
typed awaits `typed_so_far` first.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from textual.screen import Screen

SETTLE_TIMEOUT = 0.5
"""Seconds to wait at most (a widget that never drains must not freeze the action)."""


async def typed_so_far(screen: Screen[Any]) -> None:
    """Return once the focused widget has handled every key sent to it before this call.

    `call_next` runs its callback when the widget's queue is empty, so it runs after the keys
    already queued there."""
    focused = screen.focused
    if focused is None or not focused.is_attached:
        return
    drained = asyncio.Event()
    focused.call_next(drained.set)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(drained.wait(), SETTLE_TIMEOUT)
