"""Search that does not wait for the backfill (docs/sync.md#head-first): while the cache does
not hold every issue, a search typed in the list is also sent to the server's `GET /search`,
and its hits are stored, so the list's own search finds them at once.

`GET /search` allows 30 requests a minute, so a query is sent only once the user has stopped
typing for `DEBOUNCE` seconds, only when the local answer could be incomplete (a backfill is
pending), never twice in a row for the same words, and only for the free words of the query
(qualifiers such as `status:todo` are the local search's). A user's request: it goes before
background work and never counts against the backfill's share.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from cache import Resource
from sync.backfill_progress import pending
from sync.errors import SyncError
from sync.models import Tombstone
from sync.session import SyncSession

DEBOUNCE = 0.3
"""Seconds without a keystroke before a search goes to the server."""
PAGE = 100
MIN_LENGTH = 2
"""Shorter free text (one letter) is not worth one of the minute's 30 searches."""


@dataclass(frozen=True)
class ServerHits:
    """What the server's search found for `text`: `ids` best first, of which `new` were not
    in the cache before (the backfill had not reached them)."""

    text: str
    ids: tuple[str, ...]
    new: int


def free_words(text: str) -> str | None:
    """The words of a query the server's search should get: no qualifiers (`word:value`,
    `-word`), None when nothing is left worth a request."""
    words = [word for word in text.split() if ":" not in word and not word.startswith("-")]
    joined = " ".join(words)
    return joined if len(joined) >= MIN_LENGTH else None


async def search_server(session: SyncSession, text: str) -> ServerHits:
    """One `GET /search` for `text`; its hits are stored as server records (current ones: an
    older copy in the cache is replaced, a newer one kept), those the cache did not hold
    marked as the search's until a pull reaches them (the list shows them "from the
    server")."""
    listing = (await session.client.search(text, page=1, per_page=PAGE)).value
    items = [item for item in listing.items if not isinstance(item, Tombstone)]
    held = {key for key in (item.id for item in items) if _held(session, key)}
    session.cache.server.apply_page(Resource.ISSUES, [item.raw for item in items], from_search=True)
    ids = tuple(item.id for item in items)
    return ServerHits(text, ids, sum(1 for key in ids if key not in held))


def _held(session: SyncSession, key: str) -> bool:
    return session.cache.server.server_record(Resource.ISSUES, key) is not None


class ServerSearch:
    """The latest query typed, sent after a pause; `found` hears each answer."""

    def __init__(
        self,
        session: SyncSession,
        found: Callable[[ServerHits], None],
        *,
        debounce: float = DEBOUNCE,
    ) -> None:
        self._session = session
        self._found = found
        self._debounce = debounce
        self._task: asyncio.Task[None] | None = None
        self._sent: str | None = None
        self.requests = 0

    def typed(self, text: str) -> None:
        """The query is now `text`: a pending send of an older one is dropped."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        words = free_words(text)
        if words is None or words == self._sent or not pending(self._session.cache):
            return
        self._task = asyncio.ensure_future(self._send(words))

    async def _send(self, words: str) -> None:
        await asyncio.sleep(self._debounce)
        self._sent = words
        self.requests += 1
        try:
            hits = await search_server(self._session, words)
        except SyncError:
            self._sent = None  # the connection state shows why; typing again retries
            return
        self._found(hits)

    def cancel(self) -> None:
        """Drop a send not yet made (the session is closing)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
