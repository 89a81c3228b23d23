"""Server-side rate limits: fixed windows counted in SQLite.

The counts live in the service's database rather than in memory because they must hold across
threads, across processes serving the same file and across restarts; one ``BEGIN IMMEDIATE``
transaction per request gives all three without another service.

Limits (the published plans and per-endpoint limits, docs/api.md#plans-and-their-limits, counted
as docs/service.md#rate-limits says), each a counter in its own fixed window:

=================  ===========  ========================================================
counter            subject      window and size
=================  ===========  ========================================================
``key-minute``     API key      minute; 60 free, 300 pro, 1,000 enterprise
``workspace-day``  workspace    UTC day; 1,000 free, 10,000 pro, 100,000 enterprise
``endpoint:<e>``   API key      minute; ``ENDPOINT_LIMITS[e]``, on top of the plan limits
``auth-failures``  address      minute; refused once more than 20 have failed
=================  ===========  ========================================================

Time scale: ``window_seconds`` is the real length of a "minute". A "day" is 1,440 of them,
aligned to multiples of its length from the Unix epoch, which is UTC midnight when unscaled.
Time is handled in integer microseconds so window edges never suffer float rounding.

Which limit the headers describe: after an allowed request, the one with the lowest remaining
count; on a tie the one whose window ends first (the client meets it first); on a further tie
the one with the lower limit. A refused request reports the exhausted limit whose window ends
last, since waiting for any earlier one would not let the request through.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

Clock = Callable[[], datetime]

PLAN_LIMITS: dict[str, tuple[int, int]] = {
    "free": (60, 1_000),
    "pro": (300, 10_000),
    "enterprise": (1_000, 100_000),
}
"""Per plan: (requests per key per minute, requests per workspace per UTC day)."""

ENDPOINT_LIMITS: dict[str, int] = {
    "issues.create": 30,
    "comments.create": 60,
    "search": 30,
    "bulk": 10,
}
"""Per-endpoint requests per key per minute: POST /issues, POST /comments, GET /search,
POST /issues/bulk."""

AUTH_FAILURE_LIMIT = 20
"""More than this many failed authentications from one address in a window, and the address gets 429
(docs/service.md#rate-limits). The 21st failure is still answered (401) and recorded; from then on
the address is refused until the window ends."""

MINUTES_PER_DAY = 1_440
_MICROS = 1_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_BUSY_TIMEOUT_SECONDS = 10.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ratelimit_counters (
    scope TEXT NOT NULL,
    subject TEXT NOT NULL,
    window_end_us INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (scope, subject, window_end_us)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ratelimit_counters_by_end ON ratelimit_counters (window_end_us);
"""


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _ceil_seconds(micros: int) -> int:
    return -(-micros // _MICROS)


@dataclass(frozen=True)
class RateDecision:
    """The outcome of one check, carrying what the response headers must say."""

    allowed: bool
    limit: int
    remaining: int
    reset: int
    """Unix time (whole seconds, rounded up) when the reported window ends."""
    retry_after: int | None
    """Whole seconds (at least 1) until the exceeded window ends; None when allowed."""

    def headers(self) -> dict[str, str]:
        """The ``X-RateLimit-*`` headers, plus ``Retry-After`` on a refusal."""
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset),
        }
        if self.retry_after is not None:
            headers["Retry-After"] = str(self.retry_after)
        return headers


@dataclass(frozen=True)
class _Counter:
    """One limit as it applies to one request: which row counts it and how far it may go."""

    scope: str
    subject: str
    limit: int
    window_end_us: int

    def allowed(self, count_after: int) -> RateDecision:
        return RateDecision(
            allowed=True,
            limit=self.limit,
            remaining=self.limit - count_after,
            reset=_ceil_seconds(self.window_end_us),
            retry_after=None,
        )

    def refused(self, now_us: int) -> RateDecision:
        return RateDecision(
            allowed=False,
            limit=self.limit,
            remaining=0,
            reset=_ceil_seconds(self.window_end_us),
            retry_after=max(1, _ceil_seconds(self.window_end_us - now_us)),
        )


class RateLimiter:
    """Counts requests against every limit that applies, atomically, in a SQLite file.

    One limiter may be shared by any number of threads: each call checks a connection out of a
    small pool (opening one costs more than the check itself), and this process's writers queue
    on a lock rather than in SQLite's busy handler, whose sleeps of up to 100 ms would dominate
    latency under concurrency; other processes still serialize through SQLite. Use one time
    scale per database file: counters are keyed by window end. `close` closes idle connections.
    """

    def __init__(
        self, db_path: str | Path, *, window_seconds: float = 60, clock: Clock | None = None
    ) -> None:
        minute_us = round(window_seconds * _MICROS)
        if minute_us <= 0:
            raise ValueError(f"window_seconds must be positive, not {window_seconds!r}")
        self._path = str(db_path)
        self._minute_us = minute_us
        self._day_us = minute_us * MINUTES_PER_DAY
        self._clock = clock or _utc_now
        self._next_prune_us = 0
        self._idle: list[sqlite3.Connection] = []
        self._pool_lock = threading.Lock()
        self._write_lock = threading.Lock()
        with closing(self._open()) as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)

    def hit(
        self, *, key_id: str, workspace_id: str, plan: str, endpoint: str | None
    ) -> RateDecision:
        """Count one authenticated request, unless a limit is exhausted (a 429 does not count)."""
        now_us = self._now_us()
        counters = self._counters(key_id, workspace_id, plan, endpoint, now_us)
        with self._transaction() as conn:
            counts = [_count(conn, counter) for counter in counters]
            exhausted = [c for c, n in zip(counters, counts, strict=True) if n >= c.limit]
            if exhausted:
                return max(exhausted, key=lambda c: c.window_end_us).refused(now_us)
            for counter in counters:
                _increment(conn, counter)
            self._prune_now_and_then(conn, now_us)
        tightest, count = min(
            zip(counters, counts, strict=True),
            key=lambda cn: (cn[0].limit - cn[1], cn[0].window_end_us, cn[0].limit),
        )
        return tightest.allowed(count + 1)

    def auth_failure_block(self, address: str) -> RateDecision | None:
        """A refusal if ``address`` failed authentication more than the limit this minute."""
        now_us = self._now_us()
        counter = self._auth_counter(address, now_us)
        with self._connection() as conn:
            failures = _count(conn, counter)
        return counter.refused(now_us) if failures > counter.limit else None

    def record_auth_failure(self, address: str) -> None:
        """Count one failed authentication from ``address``."""
        now_us = self._now_us()
        with self._transaction() as conn:
            _increment(conn, self._auth_counter(address, now_us))
            self._prune_now_and_then(conn, now_us)

    def _counters(
        self, key_id: str, workspace_id: str, plan: str, endpoint: str | None, now_us: int
    ) -> list[_Counter]:
        if plan not in PLAN_LIMITS:
            raise ValueError(f"unknown plan {plan!r}; expected one of {sorted(PLAN_LIMITS)}")
        per_minute, per_day = PLAN_LIMITS[plan]
        minute_end = self._window_end(now_us, self._minute_us)
        counters = [
            _Counter("key-minute", key_id, per_minute, minute_end),
            _Counter(
                "workspace-day", workspace_id, per_day, self._window_end(now_us, self._day_us)
            ),
        ]
        if endpoint is not None:
            if endpoint not in ENDPOINT_LIMITS:
                raise ValueError(
                    f"unknown endpoint {endpoint!r}; expected one of {sorted(ENDPOINT_LIMITS)}"
                )
            counters.append(
                _Counter(f"endpoint:{endpoint}", key_id, ENDPOINT_LIMITS[endpoint], minute_end)
            )
        return counters

    def _auth_counter(self, address: str, now_us: int) -> _Counter:
        end = self._window_end(now_us, self._minute_us)
        return _Counter("auth-failures", address, AUTH_FAILURE_LIMIT, end)

    @staticmethod
    def _window_end(now_us: int, span_us: int) -> int:
        return (now_us // span_us + 1) * span_us

    def _now_us(self) -> int:
        now = self._clock()
        if now.tzinfo is None:
            raise ValueError("the clock must return an aware datetime")
        return (now - _EPOCH) // timedelta(microseconds=1)

    def _prune_now_and_then(self, conn: sqlite3.Connection, now_us: int) -> None:
        """Drop ended windows about once a minute, so the table holds only live counters."""
        if now_us < self._next_prune_us:
            return
        conn.execute("DELETE FROM ratelimit_counters WHERE window_end_us <= ?", (now_us,))
        self._next_prune_us = now_us + self._minute_us

    def close(self) -> None:
        """Close the idle connections; a later call opens new ones."""
        with self._pool_lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self._path,
            timeout=_BUSY_TIMEOUT_SECONDS,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """A pooled connection, used by this thread alone until the block ends."""
        with self._pool_lock:
            conn = self._idle.pop() if self._idle else None
        conn = conn or self._open()
        try:
            yield conn
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            with self._pool_lock:
                self._idle.append(conn)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken up front so concurrent checks queue instead of racing."""
        with self._write_lock, self._connection() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")


def _count(conn: sqlite3.Connection, counter: _Counter) -> int:
    row = conn.execute(
        "SELECT count FROM ratelimit_counters"
        " WHERE scope = ? AND subject = ? AND window_end_us = ?",
        (counter.scope, counter.subject, counter.window_end_us),
    ).fetchone()
    return int(row[0]) if row else 0


def _increment(conn: sqlite3.Connection, counter: _Counter) -> None:
    conn.execute(
        "INSERT INTO ratelimit_counters (scope, subject, window_end_us, count)"
        " VALUES (?, ?, ?, 1)"
        " ON CONFLICT (scope, subject, window_end_us) DO UPDATE SET count = count + 1",
        (counter.scope, counter.subject, counter.window_end_us),
    )
