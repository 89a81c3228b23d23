"""The rate limiter against a real SQLite file, with a clock the tests move by hand."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from server.ratelimit import (
    AUTH_FAILURE_LIMIT,
    ENDPOINT_LIMITS,
    PLAN_LIMITS,
    RateDecision,
    RateLimiter,
)

ROOT = Path(__file__).resolve().parents[2]
START = datetime(2026, 11, 21, 15, 33, 15, tzinfo=UTC)
"""45 s before the minute ends, 8 h 26 min 45 s before the UTC day ends."""
MINUTE_END = int(datetime(2026, 11, 21, 15, 34, tzinfo=UTC).timestamp())
MIDNIGHT = int(datetime(2026, 11, 22, tzinfo=UTC).timestamp())


class FakeClock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def db_path(tmp_path: Path) -> Iterator[Path]:
    """A database file held open the whole test, as the service holds its own.

    Without another open connection, each call's connection would be the last to close and
    would checkpoint the WAL, which makes the thousands of calls here several times slower.
    """
    path = tmp_path / "tracker.db"
    RateLimiter(path)
    with closing(sqlite3.connect(path)) as held_open:
        held_open.execute("SELECT count(*) FROM ratelimit_counters").fetchone()
        yield path


@pytest.fixture
def limiter(db_path: Path, clock: FakeClock) -> RateLimiter:
    return RateLimiter(db_path, clock=clock)


def hit(
    limiter: RateLimiter,
    *,
    key: str = "key_a",
    workspace: str = "wsp_a",
    plan: str = "free",
    endpoint: str | None = None,
) -> RateDecision:
    return limiter.hit(key_id=key, workspace_id=workspace, plan=plan, endpoint=endpoint)


def use_up_day(limiter: RateLimiter, clock: FakeClock) -> None:
    """Spend a free workspace's whole day allowance, one minute window at a time."""
    per_minute, per_day = PLAN_LIMITS["free"]
    spent = 0
    while spent < per_day:
        for _ in range(min(per_minute, per_day - spent)):
            assert hit(limiter).allowed
            spent += 1
        clock.advance(60)


@pytest.mark.parametrize(("plan", "per_minute"), [("free", 60), ("pro", 300), ("enterprise", 1000)])
def test_plan_minute_limit_counts_down_then_refuses(
    limiter: RateLimiter, plan: str, per_minute: int
) -> None:
    remaining = [hit(limiter, plan=plan).remaining for _ in range(per_minute)]
    refused = hit(limiter, plan=plan)

    assert remaining == list(range(per_minute - 1, -1, -1))
    assert refused == RateDecision(
        allowed=False, limit=per_minute, remaining=0, reset=MINUTE_END, retry_after=45
    )


@pytest.mark.parametrize(("endpoint", "per_minute"), sorted(ENDPOINT_LIMITS.items()))
def test_endpoint_limit_refuses_on_top_of_the_plan(
    limiter: RateLimiter, endpoint: str, per_minute: int
) -> None:
    allowed = [hit(limiter, plan="pro", endpoint=endpoint) for _ in range(per_minute)]
    refused = hit(limiter, plan="pro", endpoint=endpoint)

    assert [d.limit for d in allowed] == [per_minute] * per_minute
    assert allowed[-1].remaining == 0
    assert (refused.allowed, refused.limit, refused.retry_after) == (False, per_minute, 45)
    assert hit(limiter, plan="pro").allowed, "other endpoints of the key are still open"
    assert hit(limiter, plan="pro", endpoint=endpoint, key="key_b").allowed, "limit is per key"


def test_the_window_resets_at_the_whole_minute(limiter: RateLimiter, clock: FakeClock) -> None:
    for _ in range(10):
        hit(limiter, endpoint="bulk")
    assert not hit(limiter, endpoint="bulk").allowed

    clock.advance(44.999999)
    assert not hit(limiter, endpoint="bulk").allowed
    clock.advance(0.000001)
    after = hit(limiter, endpoint="bulk")

    assert (after.allowed, after.remaining, after.reset) == (True, 9, MINUTE_END + 60)


def test_day_limit_holds_across_minute_windows(limiter: RateLimiter, clock: FakeClock) -> None:
    use_up_day(limiter, clock)
    refused = hit(limiter)

    assert refused.limit == 1000
    assert refused.reset == MIDNIGHT
    assert refused.retry_after == MIDNIGHT - int(clock.now.timestamp())
    clock.now = datetime(2026, 11, 22, tzinfo=UTC)
    assert hit(limiter).allowed


def test_day_limit_is_shared_by_the_keys_of_a_workspace(
    limiter: RateLimiter, clock: FakeClock
) -> None:
    spent = 0
    while spent < 1000:
        for key in ("key_a", "key_b"):
            for _ in range(min(60, 1000 - spent)):
                assert hit(limiter, key=key).allowed
                spent += 1
        clock.advance(60)

    assert not hit(limiter, key="key_a").allowed
    assert not hit(limiter, key="key_c").allowed
    assert hit(limiter, key="key_d", workspace="wsp_b").allowed


def test_headers_describe_the_lowest_remaining_then_the_earliest_end(
    limiter: RateLimiter,
) -> None:
    for key in range(16):
        for _ in range(60 if key < 15 else 40):
            hit(limiter, key=f"key_{key}")
    # The workspace has 60 left today and key_a 60 left this minute: a tie.
    tie = hit(limiter)
    assert (tie.limit, tie.remaining, tie.reset) == (60, 59, MINUTE_END)

    hit(limiter, key="key_other")
    day = hit(limiter)
    assert (day.limit, day.remaining, day.reset) == (1000, 57, MIDNIGHT)


def test_a_refusal_names_the_exhausted_limit_that_ends_last(limiter: RateLimiter) -> None:
    for key in range(16):
        for _ in range(60 if key < 15 else 40):
            hit(limiter, key=f"key_{key}")
    for _ in range(60):
        assert hit(limiter).allowed
    # Both key_a's minute and the workspace's day are used up: only midnight helps.
    refused = hit(limiter)

    assert (refused.limit, refused.reset) == (1000, MIDNIGHT)
    assert refused.retry_after == MIDNIGHT - int(START.timestamp())


def test_a_refused_request_is_not_counted(limiter: RateLimiter) -> None:
    for _ in range(10):
        hit(limiter, endpoint="bulk")
    refusals = [hit(limiter, endpoint="bulk") for _ in range(5)]

    assert not any(d.allowed for d in refusals)
    assert hit(limiter).remaining == 60 - 10 - 1


def test_counters_survive_a_restart(db_path: Path, clock: FakeClock) -> None:
    first = RateLimiter(db_path, clock=clock)
    for _ in range(10):
        hit(first)

    assert hit(RateLimiter(db_path, clock=clock)).remaining == 60 - 11


def test_fifty_threads_at_once_never_exceed_the_limit(db_path: Path, clock: FakeClock) -> None:
    limiters = [RateLimiter(db_path, clock=clock) for _ in range(5)]
    start = threading.Barrier(50)
    decisions: list[RateDecision] = []

    def one_request(limiter: RateLimiter) -> None:
        start.wait()
        decisions.append(hit(limiter, plan="pro", endpoint="bulk"))

    threads = [threading.Thread(target=one_request, args=(limiters[i % 5],)) for i in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    allowed = [d for d in decisions if d.allowed]
    assert len(decisions) == 50
    assert sorted(d.remaining for d in allowed) == list(range(10))


PROCESS_SCRIPT = """
import sys
from datetime import datetime
from server.ratelimit import RateLimiter

now = datetime.fromisoformat(sys.argv[2])
limiter = RateLimiter(sys.argv[1], clock=lambda: now)
decisions = [
    limiter.hit(key_id="key_a", workspace_id="wsp_a", plan="pro", endpoint="bulk")
    for _ in range(10)
]
print(sum(d.allowed for d in decisions))
"""


def test_processes_sharing_the_file_never_exceed_the_limit(db_path: Path) -> None:
    command = [sys.executable, "-c", PROCESS_SCRIPT, str(db_path), START.isoformat()]
    processes = [
        subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True) for _ in range(4)
    ]
    allowed = [int(process.communicate(timeout=30)[0]) for process in processes]

    assert [process.returncode for process in processes] == [0] * 4
    assert sum(allowed) == 10


def test_scaled_windows_compute_reset_and_retry_after(db_path: Path) -> None:
    clock = FakeClock(datetime.fromtimestamp(1_000_000.25, UTC))
    limiter = RateLimiter(db_path, window_seconds=1, clock=clock)

    for _ in range(60):
        last = hit(limiter)
    assert (last.remaining, last.reset) == (0, 1_000_001)
    assert hit(limiter).retry_after == 1

    clock.advance(0.75)
    assert hit(limiter).reset == 1_000_002

    # A scaled day lasts 1,440 s: this one spans [999,360, 1,000,800) and 61 requests are spent.
    clock.advance(1)
    for _ in range(15):
        for _ in range(60):
            assert hit(limiter).allowed
        clock.advance(1)
    for _ in range(1000 - 61 - 15 * 60):
        assert hit(limiter).allowed
    refused = hit(limiter)

    assert clock.now.timestamp() == 1_000_017
    assert (refused.limit, refused.reset) == (1000, 1_000_800)
    assert refused.retry_after == 1_000_800 - 1_000_017


def test_scaled_minute_not_on_a_whole_second_rounds_reset_up(db_path: Path) -> None:
    clock = FakeClock(datetime.fromtimestamp(1000, UTC))
    limiter = RateLimiter(db_path, window_seconds=0.6, clock=clock)

    for _ in range(10):
        hit(limiter, endpoint="bulk")
    refused = hit(limiter, endpoint="bulk")

    # The window [999.6, 1000.2) ends 0.2 s from now.
    assert (refused.reset, refused.retry_after) == (1001, 1)


def test_failed_authentications_block_the_address_for_the_window(
    limiter: RateLimiter, clock: FakeClock
) -> None:
    for _ in range(AUTH_FAILURE_LIMIT):
        limiter.record_auth_failure("10.0.0.7")
    assert limiter.auth_failure_block("10.0.0.7") is None  # 20 is not "more than 20"

    limiter.record_auth_failure("10.0.0.7")
    block = limiter.auth_failure_block("10.0.0.7")

    assert block == RateDecision(
        allowed=False, limit=AUTH_FAILURE_LIMIT, remaining=0, reset=MINUTE_END, retry_after=45
    )
    assert block.headers()["Retry-After"] == "45"
    assert limiter.auth_failure_block("10.0.0.8") is None
    clock.advance(45)
    assert limiter.auth_failure_block("10.0.0.7") is None


def test_headers_carry_retry_after_only_on_a_refusal() -> None:
    allowed = RateDecision(allowed=True, limit=60, remaining=3, reset=1700000060, retry_after=None)
    refused = RateDecision(allowed=False, limit=60, remaining=0, reset=1700000060, retry_after=7)

    assert allowed.headers() == {
        "X-RateLimit-Limit": "60",
        "X-RateLimit-Remaining": "3",
        "X-RateLimit-Reset": "1700000060",
    }
    assert refused.headers() == {
        "X-RateLimit-Limit": "60",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": "1700000060",
        "Retry-After": "7",
    }


def test_ended_windows_are_pruned(limiter: RateLimiter, db_path: Path, clock: FakeClock) -> None:
    hit(limiter, endpoint="search")
    limiter.record_auth_failure("10.0.0.7")
    clock.advance(86_400)
    hit(limiter)

    with closing(sqlite3.connect(db_path)) as conn:
        scopes = {row[0] for row in conn.execute("SELECT scope FROM ratelimit_counters")}
    assert scopes == {"key-minute", "workspace-day"}
    assert hit(limiter).remaining == 58


@pytest.mark.parametrize(
    ("plan", "endpoint", "message"),
    [("gold", None, "unknown plan"), ("free", "issues.delete", "unknown endpoint")],
)
def test_unknown_plans_and_endpoints_are_programming_errors(
    limiter: RateLimiter, plan: str, endpoint: str | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        hit(limiter, plan=plan, endpoint=endpoint)


def test_a_naive_clock_is_refused(db_path: Path) -> None:
    limiter = RateLimiter(db_path, clock=lambda: datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="aware"):
        hit(limiter)
