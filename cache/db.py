"""Connections to one cache file: one per thread, the pragmas, transactions, error translation.

Threading rule: a `sqlite3.Connection` is used only by the thread that opened it. `Connector`
keeps one connection per thread in a `threading.local`, opened on the thread's first call, so
Textual's thread workers, the sync engine's thread and the UI thread each read and write
through their own connection. WAL lets readers and the single writer run at once; writers
serialise on SQLite's lock (`BEGIN IMMEDIATE`, waiting up to `BUSY_TIMEOUT_MS`). The same
holds across processes: a `sync` in another terminal is just one more connection.

A thread's connection is closed when the thread ends (its `threading.local` slot is collected)
or at `close()`, whichever comes first. That is why connections are opened with
`check_same_thread=False`: only so that `close()` may close them from the closing thread; they
are still used only by their own thread. `close()` closes the connections of threads that have
ended, and its own; a thread still running (the sync engine's, when the app quits while it
is in the middle of writing a page) keeps its connection until its next call, which closes it
and raises `CacheClosedError`. Closing a connection under a statement another thread is
stepping through crashed the process (a segfault in libsqlite3 while a quitting app ended a
100,000-issue pull).

Durability: `synchronous=NORMAL` in WAL mode survives a killed process but may lose the last
commits on power loss. Server data can be pulled again; the outbox cannot, so writes that
carry user intent pass `durable=True` and commit with `synchronous=FULL` (an fsync of the WAL).
"""

from __future__ import annotations

import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cache.errors import CacheBusyError, CacheClosedError, CacheError, CorruptCacheError

BUSY_TIMEOUT_MS = 5000
CACHE_SIZE_KIB = 4096
"""Each connection's page cache (4 MB). At 1,000,000 issues one count or deep window walks an
index of 45 MB: with 32 MB a connection kept what it walked, and the app at a million held
46.5 MiB more than with an empty cache (issue 18; goal 20). The file's pages stay in the OS's
cache, so a read past the cache costs a copy, not a disk read. Measured at 1,000,000 issues,
32 / 8 / 4 MB: the process's peak RSS after a count, a first window and the pickers' values
30.4 / 26.7 / 22.4 MB (18.8 open), after deep windows and searches 68 / 42 / 38; a first walk
to offset 500,000 costs the same (20-38 ms of CPU), a repeated one 20 ms against 7 when what
it walks fits in 32 MB. At 100,000, 8 against 4 MB, every read took the same time and the
peak after deep windows was 26.7 MB against 22.4. A bulk writer raises its own while it runs
(`records.BULK_CACHE_KIB`)."""

WAL_KEPT_BYTES = 4 * 1024 * 1024
"""What the WAL file is cut back to when a checkpoint empties it. SQLite otherwise keeps the
file at the largest size it ever reached: a cold pull's bulk writes (up to
`records.BULK_CHECKPOINT_PAGES`, 64 MB) or one big page left that much beside the cache for
good (issue 18)."""

INCREMENTAL_VACUUM = 2
"""`PRAGMA auto_vacuum`'s answer for INCREMENTAL. Only a new file takes that mode (before its
first table): pages freed later, by a cold load rebuilding its indexes, can then be given back
(`bulk_load.release_free_pages`). It is set only where the file does not have it already:
setting it again rewrites the file's header, a write transaction of its own that cost every
open of the cache five fsyncs (its commit, then the checkpoint when the connection closes),
a read command's longest wait."""

_PRAGMAS = (
    "PRAGMA synchronous = NORMAL",
    f"PRAGMA journal_size_limit = {WAL_KEPT_BYTES}",
    f"PRAGMA cache_size = -{CACHE_SIZE_KIB}",
    "PRAGMA temp_store = MEMORY",
    "PRAGMA foreign_keys = ON",
)

_CORRUPT_MARKERS = ("not a database", "malformed", "corrupt", "disk image")


def translate(error: sqlite3.Error) -> CacheError:
    """Map a sqlite3 error to the cache's exception tree (see cache.errors)."""
    message = str(error)
    if isinstance(error, sqlite3.DatabaseError) and any(m in message for m in _CORRUPT_MARKERS):
        return CorruptCacheError(f"the cache file is damaged or not a database: {message}")
    if "locked" in message or "busy" in message:
        return CacheBusyError(f"the cache stayed locked by another connection: {message}")
    return CacheError(f"cache operation failed: {message}")


@contextmanager
def translated() -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as error:
        raise translate(error) from error


class ThreadState:
    """Per-thread connection plus what that thread memoised about the database.

    The memo is valid while the database is unchanged: `PRAGMA data_version` moves when
    another connection commits, `writes` when this one does (through `Connector.write`).
    Writes to this connection's TEMP tables move neither, so they can hold memoised data.
    A plain class: a dataclass compiles its methods as its module loads, on every command's
    start (docs/architecture.md#start-up).
    """

    __slots__ = ("__weakref__", "_memo", "_token", "conn", "kept", "writes")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.writes = 0
        self._token: tuple[int, int] = (-1, -1)
        self._memo: dict[object, object] = {}
        self.kept: dict[object, object] = {}
        """What this thread keeps across changes to the database: each entry checks itself
        against what changed before it is used (cache.hits's probe index)."""

    def memo(self) -> dict[object, object]:
        """What this thread remembered about the current state of the database."""
        token = (int(self.conn.execute("PRAGMA data_version").fetchone()[0]), self.writes)
        if token != self._token:
            self._memo.clear()
            self._token = token
        return self._memo


def connect(path: Path) -> sqlite3.Connection:
    """Open with driver autocommit (`isolation_level=None`) so transactions are explicit."""
    with translated():
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != INCREMENTAL_VACUUM:
                conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
            for pragma in _PRAGMAS:
                conn.execute(pragma)
            mode = _switch_to_wal(conn)
        except BaseException:
            conn.close()
            raise
    if str(mode).lower() != "wal":
        conn.close()
        raise CacheBusyError(f"could not switch the cache to WAL mode (got {mode})")
    return conn


def _switch_to_wal(conn: sqlite3.Connection) -> str:
    """`journal_mode = WAL` needs the file to itself for a moment, and when several
    connections switch a file still in rollback mode (an old cache, opened by two processes
    at once) SQLite answers "locked" at once instead of waiting out the busy timeout: wait
    here instead, up to that timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
        time.sleep(0.005)


class Connector:
    """Hands each thread its own connection to `path` (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._closed = False
        self._lock = threading.Lock()
        self._finalizers: list[tuple[threading.Thread, weakref.finalize[[], ThreadState]]] = []

    def state(self) -> ThreadState:
        current: ThreadState | None = getattr(self._local, "state", None)
        if self._closed:
            self._local.state = None  # its finalizer closes this thread's connection
            raise CacheClosedError(f"the cache {self.path} is closed")
        if current is None:
            current = ThreadState(connect(self.path))
            self._local.state = current
            closer = weakref.finalize(current, current.conn.close)
            with self._lock:
                self._finalizers = [(owner, f) for owner, f in self._finalizers if f.alive] + [
                    (threading.current_thread(), closer)
                ]
        return current

    def conn(self) -> sqlite3.Connection:
        return self.state().conn

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction, so the several queries of one answer see one snapshot."""
        conn = self.conn()
        with translated():
            if conn.in_transaction:
                yield conn
                return
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")

    @contextmanager
    def write(self, *, durable: bool = False) -> Iterator[sqlite3.Connection]:
        """`BEGIN IMMEDIATE`: take the write lock up front so a read-then-write transaction
        never fails to upgrade when another process committed in between."""
        state = self.state()
        conn = state.conn
        state.writes += 1
        with translated():
            if conn.in_transaction:
                raise CacheError("nested cache write transactions are not supported")
            if durable:
                conn.execute("PRAGMA synchronous = FULL")
            try:
                conn.execute("BEGIN IMMEDIATE")
                yield conn
                conn.execute("COMMIT")
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if durable:
                    conn.execute("PRAGMA synchronous = NORMAL")

    def close(self) -> None:
        """Close this thread's connection and those of ended threads; a running thread's is
        closed by that thread on its next call (see the module docstring)."""
        self._closed = True
        self._local.state = None
        me = threading.current_thread()
        with self._lock:
            finalizers, self._finalizers = self._finalizers, []
        for owner, close in finalizers:
            if owner is me or not owner.is_alive():
                close()
