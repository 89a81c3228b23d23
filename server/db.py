"""SQLite connections for a threaded server.

FastAPI runs sync endpoints on a thread pool, and a sqlite3 connection must not be used by two
threads at once. `Database` keeps a pool of connections opened with `check_same_thread=False`;
each is checked out by one thread at a time and returned afterwards, so a connection (and its
page cache) is reused without ever being shared. WAL lets readers run beside the one writer.
Writers of this process queue on a lock before asking SQLite for the write lock: waiting in
SQLite's busy handler means sleeps of up to 100 ms, which dominate latency under concurrency.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from server.migrations import migrate

BUSY_TIMEOUT_MS = 10_000


class Database:
    """A database file, migrated on open, handing out pooled connections."""

    def __init__(self, path: str | Path) -> None:
        if str(path) == ":memory:":
            raise ValueError(
                "the service needs a database file: every pooled connection would "
                "see its own empty :memory: database"
            )
        self.path = str(path)
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._closed = False
        with self.connection() as conn:
            migrate(conn)

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """A connection for this thread alone until the block ends."""
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._open()
        try:
            yield conn
        finally:
            if conn.in_transaction:
                conn.rollback()
            with self._lock:
                if self._closed:
                    conn.close()
                else:
                    self._idle.append(conn)

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: a count and the page it describes see the same snapshot."""
        with self.connection() as conn:
            conn.execute("BEGIN")
            yield conn
            conn.execute("COMMIT")

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, taken at once so writers queue instead of failing to upgrade."""
        with self._write_lock, self.connection() as conn:
            conn.execute("BEGIN IMMEDIATE")
            yield conn
            conn.execute("COMMIT")

    def close(self) -> None:
        """Close idle connections now and busy ones when they are returned."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
