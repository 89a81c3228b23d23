"""`Cache`: the one object the TUI and the sync engine hold, one per profile.

It opens and closes the files; what it offers is split by who uses it, each part a small
class on the one connection (cache.db), owning its transactions while the modules it calls
own the SQL:

- `reads`: what the screens and the command line show (cache.reads);
- `outbox`: what the user queues and settles (cache.writes);
- `push`: what the push engine does with the outbox (cache.sending);
- `server`: what the pull stores (cache.server_copy);
- `state` and `drafts`: values kept by key (cache.keyed);
- `inbox`: what the pull found changed in the user's issues (cache.inbox);
- `requests`: the rate limiter's log, a file of its own (cache.requestlog).

Reads run in one read transaction (a consistent snapshot across their queries); writes in one
`BEGIN IMMEDIATE` transaction, committed with `synchronous=FULL` when they carry user intent
(outbox writes), since an edit exists nowhere else. Thread and process rules are in cache.db.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from cache import schema
from cache.db import Connector, translated
from cache.keyed import Drafts, State
from cache.paths import ensure_private_dir, ensure_private_file, profile_path

if TYPE_CHECKING:
    from cache.inbox import Inbox
    from cache.reads import Reads
    from cache.requestlog import RequestLog
    from cache.sending import Push
    from cache.server_copy import ServerCopy
    from cache.writes import Outbox


def open_cache(profile: str, *, root: Path | None = None) -> Cache:
    """The profile's cache under `root`, else `$TRACKER_HOME/data`, else the platform's user
    data directory (created 0700)."""
    path = profile_path(profile, root)
    ensure_private_dir(path.parent)
    return Cache.open(path)


class Cache:
    """A profile's local store: server copy, sync state, outbox, request log, search.
    Construct it with `open_cache` or `Cache.open`; use it through its parts."""

    @classmethod
    def open(cls, path: Path, *, clock: Callable[[], float] = time.time) -> Cache:
        """Open (creating if needed) an explicit cache file and bring its schema up to date."""
        if not path.parent.exists():
            ensure_private_dir(path.parent)
        ensure_private_file(path)
        connector = Connector(path)
        try:
            with translated():
                schema.migrate(connector.conn())
        except BaseException:
            connector.close()
            raise
        return cls(connector, clock)

    def __init__(self, connector: Connector, clock: Callable[[], float] = time.time) -> None:
        self._db = connector
        self._clock = clock
        self.state = State(connector)
        self.drafts = Drafts(connector, clock)

    # Each part is made, and its modules imported, when first used: a command that only reads
    # loads nothing of the outbox's, the push's or the pull's code (docs/architecture.md#start-up).

    @cached_property
    def requests(self) -> RequestLog:
        """The rate limiter's log, a file of its own, opened (and its module imported) on first
        use: a read or a write queued with `--no-push` sends no request, and opening the log
        cost each of them a second connection, its schema and a write transaction."""
        from cache.requestlog import open_log

        return open_log(self._db.path)

    @cached_property
    def reads(self) -> Reads:
        from cache.reads import Reads

        return Reads(self._db)

    @cached_property
    def outbox(self) -> Outbox:
        from cache.writes import Outbox

        return Outbox(self._db, self._clock)

    @cached_property
    def push(self) -> Push:
        from cache.sending import Push

        return Push(self._db, self._clock)

    @cached_property
    def server(self) -> ServerCopy:
        from cache.server_copy import ServerCopy

        return ServerCopy(self._db, self._clock)

    @cached_property
    def inbox(self) -> Inbox:
        from cache.inbox import Inbox

        return Inbox(self._db, self._clock)

    @property
    def path(self) -> Path:
        return self._db.path

    def close(self) -> None:
        self._db.close()
        if "requests" in self.__dict__:
            self.requests.close()

    def __enter__(self) -> Cache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def integrity_check(self) -> list[str]:
        """`PRAGMA integrity_check` plus FTS5's check that each index matches its table:
        `["ok"]` when all is well, else the problems found. Reads the whole file: slow."""
        with self._db.write() as conn:
            found = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
            for table in ("issues_fts", "comments_fts"):
                try:
                    conn.execute(
                        f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)"
                    )
                except sqlite3.DatabaseError as error:
                    found = [*(f for f in found if f != "ok"), f"{table}: {error}"]
        log = self.requests.integrity_check()
        if log != ["ok"]:
            found = [*(f for f in found if f != "ok"), *(f"request log: {f}" for f in log)]
        return found
