"""The seam between the app and the sync engine.

The app never talks to the network for issues: it reads the cache and writes the outbox. What
it needs from the engine is small, so it is a Protocol the lead wires the real engine to:
start it with a way to post messages to the app, nudge it after a local write, make it sync
now when the user asks, stop it on exit.
The engine reports by posting `SyncStatusChanged` (complete reports; the latest wins), and
`CacheChanged` whenever it changed the cache (a pull landed, an outbox entry was sent, failed or
conflicted), which makes every open screen re-read.
`OfflineLink` is the engine-less default: offline is a normal state, not an error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from textual.message import Message

Poster = Callable[[Message], bool]
"""`App.post_message`: thread-safe, so the engine may call it from any thread or task."""


class SyncLink(Protocol):
    """What the app asks of the sync engine."""

    async def start(self, post: Poster) -> None:
        """Begin syncing in the background; return at once. Report through `post`."""
        ...

    def poke(self) -> None:
        """A write was queued in the outbox: send it soon. Called on the event loop."""
        ...

    def sync_now(self) -> None:
        """The user asked to sync: push and pull at once, cutting short any wait before a
        retry. Called on the event loop; returns at once."""
        ...

    def issue_opened(self, issue_id: str) -> None:
        """The user opened an issue: fetch what the cache may not hold yet (its comments,
        during a backfill) ahead of background work. Called on the event loop; returns at
        once."""
        ...

    def search_typed(self, text: str) -> None:
        """The list's search text changed: while the cache is incomplete, ask the server's
        search too (debounced). Called on the event loop; returns at once."""
        ...

    def user_typed(self) -> None:
        """The user pressed a key: background pulls wait for a pause in their typing
        (sync.foreground). Called on the event loop for every key; returns at once."""
        ...

    async def stop(self) -> None:
        """Stop syncing (the app is closing); unsent writes stay in the outbox. Also called
        when `start` never was (the user quit the login screen)."""
        ...


class OfflineLink:
    """No sync engine: writes wait in the outbox, the status bar says offline."""

    def __init__(self) -> None:
        self.pokes = 0
        """How many writes were announced (tests check that saving pokes the engine)."""
        self.syncs = 0
        """How many times the user asked to sync now."""
        self.opened: list[str] = []
        """The issues the user opened, in order (tests check that the detail asks)."""
        self.searched: list[str] = []
        """The search texts typed, in order."""
        self.keys = 0
        """How many keys the user pressed (tests check that the app tells each)."""

    async def start(self, post: Poster) -> None:
        return None

    def poke(self) -> None:
        self.pokes += 1

    def sync_now(self) -> None:
        self.syncs += 1

    def issue_opened(self, issue_id: str) -> None:
        self.opened.append(issue_id)

    def search_typed(self, text: str) -> None:
        self.searched.append(text)

    def user_typed(self) -> None:
        self.keys += 1

    async def stop(self) -> None:
        return None
