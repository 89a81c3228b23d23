"""Background work that gives way while it waits for a slot (docs/sync.md#head-first).

The backfill runs a page at a time between the app's passes and checks before each request
whether something else wants the line (a write to push, a pull, a stop). But a request
waiting in the limiter for its slot (the background share of the minute spent, on Free most
of each minute) has passed that check: a write queued meanwhile would wait for that slot,
that request and its answer, not one request's slot. `giving_way(event)` marks the background
requests of the current task: while one waits for its slot and `event` is set, it is not sent
and raises `GaveWay` instead; the caller stops as at its own check, with nothing spent.

A context variable rather than an argument: the wait is deep in the client's request path,
and only the task that set it gives way (tasks it started inherit it; the user's own
requests never run under it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_EVENT: ContextVar[asyncio.Event | None] = ContextVar("give_way", default=None)


class GaveWay(Exception):
    """A background request gave way before it was sent: nothing reached the server."""


@contextmanager
def giving_way(event: asyncio.Event | None) -> Iterator[None]:
    """Background requests of this task give way while `event` is set (None: never)."""
    token = _EVENT.set(event)
    try:
        yield
    finally:
        _EVENT.reset(token)


def event() -> asyncio.Event | None:
    """The event background requests of this task give way to, if any."""
    return _EVENT.get()


async def wait_unless(waiting: Awaitable[object], wanted: asyncio.Event | None) -> None:
    """Await `waiting` (a sleep, an event), cut short once `wanted` is set: then `GaveWay`."""
    if wanted is None:
        await waiting
        return
    waited = asyncio.ensure_future(waiting)
    given = asyncio.ensure_future(wanted.wait())
    try:
        await asyncio.wait({waited, given}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (waited, given):
            task.cancel()
    if wanted.is_set():
        raise GaveWay
