"""`tracker-tui sync`'s progress lines over a real pull (the reference service in-process): what
was fetched of an estimated total, and a line saying the pull waits for the rate limit and for
how long, rather than a bar that stops (issue 14, defect 10)."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import httpx
import pytest

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import Cache
from server.app import create_app
from server.seed import seed_workspace
from sync.connection import Connection, ConnectionState, ConnectionWatch
from sync.engine import sync_once
from sync.pull import PullProgress
from sync.push import PushReport
from sync.session import open_session
from tracker_tui.progress import ProgressDisplay

WINDOW = 2.0
BASE = "http://service.test/v1"


async def test_sync_prints_fetched_of_total_and_the_wait_for_the_rate_limit(
    tmp_path: Path,
) -> None:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "Acme", 250, plan="free")
    app = create_app(db, window_seconds=WINDOW)
    profile = ResolvedProfile("t", BASE, None, Secret(key), KeySource.ENV)
    stream = io.StringIO()
    async with app.router.lifespan_context(app):
        with Cache.open(tmp_path / "cache.db") as cache, ProgressDisplay(stream=stream) as shown:
            watch = ConnectionWatch(on_change=shown, shown_wait=WINDOW / 60)
            async with open_session(
                profile,
                cache=cache,
                transport=httpx.ASGITransport(app),
                window_seconds=WINDOW,
                observer=watch.observe,
                sleep=watch.sleep,
            ) as session:
                now = time.time()
                for _ in range(session.limiter.plan.per_minute):
                    cache.requests.reserve_request(now, "other", [])  # another process spent them
                await sync_once(session, progress=shown)
    lines = stream.getvalue().splitlines()
    issues = [line for line in lines if line.startswith("issues:")]
    assert issues[-1] == "issues: 250/250"
    counts = [line.split()[1].split("/") for line in issues]
    assert all(int(done) <= int(total) for done, total in counts)
    waits = [line for line in lines if line.startswith("waiting for the rate limit, ")]
    assert waits and lines.index(waits[0]) < lines.index(issues[0])
    assert 1 <= int(waits[0].split(", ")[1].removesuffix(" s")) <= 3


def test_a_wait_is_told_once_with_its_seconds() -> None:
    stream = io.StringIO()
    display = ProgressDisplay(stream=stream)
    display.update(ConnectionState(Connection.RATE_LIMITED, until=time.monotonic() + 5.5))
    assert stream.getvalue() == "waiting for the rate limit, 6 s\n"
    display.update(ConnectionState(Connection.RATE_LIMITED, until=time.monotonic() + 4.5))
    display.update(ConnectionState(Connection.ONLINE))
    assert stream.getvalue() == "waiting for the rate limit, 6 s\n"  # one line per wait
    assert display.waiting_until is None


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_wait_shows_beside_the_bar_that_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    stream = Terminal()
    with ProgressDisplay(stream=stream) as shown:
        shown(PullProgress("issues", pages=1, received=100, total=450))
        shown(ConnectionState(Connection.RATE_LIMITED, until=time.monotonic() + 30.5))
    drawn = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", stream.getvalue())
    assert re.search(r"issues .*100/450 +waiting for the rate limit, (31|30) s", drawn)


def test_a_push_round_is_told_only_when_it_says_something() -> None:
    """Every round of a push reports; an empty outbox printed "push: 0 sent, 0 left" on each."""
    stream = io.StringIO()
    display = ProgressDisplay(stream=stream)
    for done, remaining in [(0, 0), (0, 3), (2, 1), (2, 1), (3, 0), (0, 0)]:
        display.update(PushReport(done=done, remaining=remaining))
    assert stream.getvalue().splitlines() == [
        "push: 0 sent, 3 left",
        "push: 2 sent, 1 left",
        "push: 3 sent, 0 left",
    ]
