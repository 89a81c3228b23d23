"""Two small stores of values by key, each read and written by whoever holds the key: what
the sync engine remembers about the server (`State`), and what the user typed and has not
sent (`Drafts`)."""

from __future__ import annotations

from collections.abc import Callable

from cache import drafts, syncstate
from cache.db import Connector
from cache.models import JsonObject, JsonValue


class State:
    """`Cache.state`: JSON values by key that describe the server itself (its clock, plan,
    limits, features, the last pull), kept across runs and processes."""

    def __init__(self, connector: Connector) -> None:
        self._db = connector

    def get(self, key: str) -> JsonValue:
        with self._db.read() as conn:
            return syncstate.get_state(conn, key)

    def set(self, key: str, value: JsonValue) -> None:
        """Store a JSON value under `key`; `None` removes it."""
        with self._db.write() as conn:
            syncstate.set_state(conn, key, value)

    def set_clock_offset(self, seconds: float) -> None:
        """Server clock minus local clock, as measured from `Date` headers."""
        self.set(syncstate.CLOCK_OFFSET_KEY, seconds)

    def clock_offset(self) -> float:
        with self._db.read() as conn:
            return syncstate.clock_offset(conn)


class Drafts:
    """`Cache.drafts`: what the user typed in a form or a comment box, by the key of what it
    is for, until it is sent or discarded."""

    def __init__(self, connector: Connector, clock: Callable[[], float]) -> None:
        self._db = connector
        self._clock = clock

    def save(self, key: str, value: JsonObject) -> None:
        """Keep what the user typed under `key`, replacing the draft there. A commit in WAL
        mode survives the process being killed, which is what a draft is for; an fsync per
        keystroke pause (`durable`) would guard against power loss at a cost paid while typing."""
        with self._db.write() as conn:
            drafts.save(conn, key, value, self._clock())

    def get(self, key: str) -> JsonObject | None:
        with self._db.read() as conn:
            return drafts.load(conn, key)

    def discard(self, key: str) -> None:
        with self._db.write() as conn:
            drafts.discard(conn, key)
