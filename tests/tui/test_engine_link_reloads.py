"""How often the engine asks the app to re-read while a pull lands pages.

Each `CacheChanged` makes every open screen read and redraw (25 ms of the app's event loop at
100,000 issues), and a key pressed meanwhile waits for it: pages landing back to back must
cost one re-read an interval, never one a page, and the last of them must still be read
(docs/architecture.md#keys-during-a-pull). The engine's own thread is not started here: its
listener is fed the loop's events on this test's loop, with a clock the test moves.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.message import Message

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import Cache
from sync.pull import PullProgress, PullReport
from sync.pull.backfill import StepReport, Stop
from sync.pull.report import ResourceReport
from tracker_tui.engine_link import EngineLink
from tracker_tui.messages import CacheChanged, SyncStatusChanged

INTERVAL = 2.0
UNREACHABLE = "http://127.0.0.1:9/v1"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def link_for(
    cache: Cache, clock: Clock, interval: float = INTERVAL
) -> tuple[EngineLink, list[Message]]:
    resolved = ResolvedProfile("t", UNREACHABLE, None, Secret("trk_" + "a" * 40), KeySource.ENV)
    link = EngineLink(resolved, cache, reload_interval=interval, monotonic=clock)
    posted: list[Message] = []

    def post(message: Message) -> bool:
        posted.append(message)
        return True

    link._post = post
    link._engine_loop = asyncio.get_running_loop()
    return link, posted


def reloads(posted: list[Message]) -> int:
    return sum(isinstance(message, CacheChanged) for message in posted)


def page(n: int) -> PullProgress:
    return PullProgress("issues", pages=n, received=100 * n, total=100_000)


async def test_pages_landing_back_to_back_cost_one_reread_an_interval(tmp_path: Path) -> None:
    """Forty pages, one every 0.2 s: the first is read at once, the others when the interval
    ends (one every half second made fourteen re-reads of them at once)."""
    clock = Clock()
    with Cache.open(tmp_path / "cache.db") as cache:
        link, posted = link_for(cache, clock)
        for n in range(1, 41):
            link._heard(page(n))
            clock.now += 0.2
        assert reloads(posted) == 1  # the first page at once; the rest wait for the interval
        link._reload_now()  # what the interval's timer does when it ends
        assert reloads(posted) == 2
        link._heard(page(41))
        assert reloads(posted) == 2  # within the interval again: waits


async def test_the_last_page_of_a_burst_is_read_when_the_interval_ends(tmp_path: Path) -> None:
    clock = Clock()
    with Cache.open(tmp_path / "cache.db") as cache:
        link, posted = link_for(cache, clock, interval=0.05)
        link._heard(page(1))
        clock.now += 0.01
        link._heard(page(2))
        link._heard(page(3))
        assert reloads(posted) == 1
        clock.now += 0.05
        await asyncio.sleep(0.2)  # the engine's loop runs the timer
        assert reloads(posted) == 2
        await asyncio.sleep(0.1)
        assert reloads(posted) == 2  # one timer for the burst, not one a page


async def test_backfill_steps_are_paced_like_pages_and_a_finished_pull_is_read_at_once(
    tmp_path: Path,
) -> None:
    clock = Clock()
    with Cache.open(tmp_path / "cache.db") as cache:
        link, posted = link_for(cache, clock)
        for _ in range(10):
            link._heard(StepReport(Stop.YIELDED, requests=1, received=100))
            clock.now += 0.1
        assert reloads(posted) == 1
        link._heard(PullReport(resources={"issues": ResourceReport("issues", inserted=5)}))
        assert reloads(posted) == 2
        assert link._reload_later is None  # the pending paced re-read is the one just sent


async def test_a_poll_that_found_nothing_asks_for_no_reread(tmp_path: Path) -> None:
    """Polls come every few seconds for the whole session, and most bring nothing: each used
    to make every open screen read and redraw. One that stored a record still does, at once."""
    clock = Clock()
    with Cache.open(tmp_path / "cache.db") as cache:
        link, posted = link_for(cache, clock)
        nothing = PullReport(resources={"issues": ResourceReport("issues", unchanged=3)})
        for _ in range(5):
            link._heard(nothing)
            clock.now += 10.0
        assert reloads(posted) == 0
        assert any(isinstance(message, SyncStatusChanged) for message in posted)
        link._heard(PullReport(resources={"issues": ResourceReport("issues", updated=1)}))
        assert reloads(posted) == 1
        stepped = StepReport(Stop.YIELDED, requests=1, received=100)
        link._heard(PullReport(backfill=stepped))
        assert reloads(posted) == 2
