"""`LaterLink`: the engine's link built after the first list is drawn. What the user did before
it was built reaches the engine once it runs: a write's poke, a sync asked for, the issue last
opened and the search last typed (the engine fetches what the cache lacks of them)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from textual.message import Message

from tracker_tui.later_link import LaterLink
from tracker_tui.sync_link import OfflineLink, Poster

if TYPE_CHECKING:
    from sync.admin import AdminApi

T = TypeVar("T")


class RecordingEngine(OfflineLink):
    """What the engine link was told, in order (the real one needs a server)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = False

    async def start(self, post: Poster) -> None:
        self.started = True

    async def admin(self, work: Callable[[AdminApi], Awaitable[T]]) -> T:
        raise AssertionError("no admin call in these tests")


async def started(link: LaterLink, posted: list[Message]) -> None:

    def post(message: Message) -> bool:
        posted.append(message)
        return True

    await link.start(post)
    for _ in range(200):
        if link._link is not None:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the engine was never built: {posted}")


async def test_what_happened_before_the_engine_ran_is_passed_on_once_it_does() -> None:
    engine = RecordingEngine()
    link = LaterLink(lambda: engine)
    link.issue_opened("iss_1")
    link.issue_opened("iss_2")
    link.search_typed("crash")
    link.search_typed("crash on save")
    link.poke()
    link.user_typed()  # no pull to hold back yet
    posted: list[Message] = []
    await started(link, posted)
    assert engine.keys == 0
    assert engine.started
    assert engine.opened == ["iss_2"]
    assert engine.searched == ["crash on save"]
    assert engine.pokes == 1
    link.issue_opened("iss_3")
    link.search_typed("")
    link.user_typed()
    assert engine.keys == 1
    assert engine.opened == ["iss_2", "iss_3"]
    assert engine.searched == ["crash on save", ""]
    await link.stop()
    assert posted == []


async def test_nothing_is_passed_on_that_did_not_happen() -> None:
    engine = RecordingEngine()
    link = LaterLink(lambda: engine)
    await started(link, [])
    assert (engine.opened, engine.searched, engine.pokes, engine.syncs) == ([], [], 0, 0)
    await link.stop()
