"""The sync engine's link, built when the app starts syncing rather than before it draws.

`tracker_tui.engine_link` brings the whole network layer with it (httpx, the pydantic models,
the pull and push engines), which took longer to import than the app takes to draw its list
from the cache, and the first screen needs none of it. So `tracker_tui.launch` hands the app a
`LaterLink`: its `start` returns at once, imports and builds the real link on a worker thread
(the event loop keeps drawing meanwhile), then starts it. A write queued or a sync asked for in
between is passed on once the engine runs, as are the issue last opened and the search last typed
(the engine fetches what the cache lacks of them); an admin call before then fails as it does while
the engine has no session. See docs/architecture.md#start-up.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from tracker_tui.admin_link import OFFLINE_NOTICE, AdminUnavailable
from tracker_tui.messages import SyncFailed
from tracker_tui.sync_link import Poster

if TYPE_CHECKING:
    from sync.admin import AdminApi

T = TypeVar("T")


class EngineLinkLike(Protocol):
    """What `LaterLink` passes on to (`tracker_tui.engine_link.EngineLink`)."""

    async def start(self, post: Poster) -> None: ...

    def poke(self) -> None: ...

    def sync_now(self) -> None: ...

    def issue_opened(self, issue_id: str) -> None: ...

    def search_typed(self, text: str) -> None: ...

    def user_typed(self) -> None: ...

    async def stop(self) -> None: ...

    async def admin(self, work: Callable[[AdminApi], Awaitable[T]]) -> T: ...


class LaterLink:
    """A `SyncLink` and `AdminLink` over the link `build` returns, called on a worker thread
    by the first `start`."""

    def __init__(self, build: Callable[[], EngineLinkLike]) -> None:
        self._build = build
        self._link: EngineLinkLike | None = None
        self._starting: asyncio.Task[None] | None = None
        self._stopped = False
        self._poked = False
        self._sync_asked = False
        self._opened: str | None = None
        self._searched: str | None = None

    async def start(self, post: Poster) -> None:
        if self._starting is None and not self._stopped:
            self._starting = asyncio.create_task(self._build_and_start(post))

    async def _build_and_start(self, post: Poster) -> None:
        """No one awaits this task until the app closes, so a failure to build the engine is
        told here (the app goes on offline, its writes kept in the outbox)."""
        try:
            link = await asyncio.to_thread(self._build)
        except Exception as error:
            post(
                SyncFailed(f"The sync engine could not start ({error}). Writes wait in the outbox.")
            )
            return
        if self._stopped:
            return
        self._link = link
        await link.start(post)
        if self._sync_asked:
            link.sync_now()
        elif self._poked:
            link.poke()
        if self._opened is not None:
            link.issue_opened(self._opened)
        if self._searched is not None:
            link.search_typed(self._searched)

    def poke(self) -> None:
        if self._link is not None:
            self._link.poke()
        else:
            self._poked = True

    def sync_now(self) -> None:
        if self._link is not None:
            self._link.sync_now()
        else:
            self._sync_asked = True

    def issue_opened(self, issue_id: str) -> None:
        if self._link is not None:
            self._link.issue_opened(issue_id)
        else:
            self._opened = issue_id

    def search_typed(self, text: str) -> None:
        if self._link is not None:
            self._link.search_typed(text)
        else:
            self._searched = text

    def user_typed(self) -> None:
        if self._link is not None:
            self._link.user_typed()

    async def stop(self) -> None:
        """Stop the engine if it runs; one still being built is never started."""
        self._stopped = True
        if self._starting is not None:
            self._starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._starting
        if self._link is not None:
            await self._link.stop()

    async def admin(self, work: Callable[[AdminApi], Awaitable[T]]) -> T:
        if self._link is None:
            raise AdminUnavailable(OFFLINE_NOTICE)
        return await self._link.admin(work)
