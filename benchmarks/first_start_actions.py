"""User actions beside the backfill, for `benchmarks/first_start.py` (issue 19: "user actions
never wait behind the backfill for more than one request's slot", Free plan).

The app's loop (`SyncLoop`, as the engine runs it: head and views as the user's first pass,
then the backfill as background work between passes) runs against the reference service on
the Free plan with its minute scaled to `window` seconds, long enough that the backfill
spends the background share of a minute (54 of 60 requests) well within it and then waits
for its next slot, as it does on a real Free minute. Meanwhile, at random moments (exponential
gaps), the user acts through the same session, as the app does (`tracker_tui/engine_link.py`):

- **open** an issue the cache does not hold the comments of: `on_demand.issue_comments`, a
  task of its own beside the loop;
- **search**: `search_server`, a task of its own beside the loop;
- **write**: an edit queued in the outbox and `SyncLoop.poke()`; the loop's push sends it.
  The loop runs with `push_delay=0`: the app's 0.2 s gathering of a burst of edits is a
  choice of its own, not a wait behind the backfill.

An action's **wait** is from being asked (the call, or the poke) to its request reaching the
transport (past the limiter, on its way to the server). **One request's slot** is the time one
backfill request holds the line: from reaching the transport to its page stored in the cache
(the loop tells its progress; storing runs on the loop, so the engine's other work waits for
it), the 99th percentile over the backfill's requests in the same run, plus the limiter's
spacing of one request at the plan's rate (a window / 60 on Free). An action asked just as a
backfill request left waits at most for that request, if it had to wait for it at all (the
loop sends a write only between the backfill's requests); anything longer is a wait behind
the backfill's pacing or its day's stop, or the machine's.
"""

from __future__ import annotations

import asyncio
import bisect
import math
import pathlib
import random
import sqlite3
import time
from dataclasses import dataclass, field

import httpx

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import Cache, Resource
from sync.backfill_progress import pending, progress
from sync.engine import SyncLoop
from sync.pull import PullProgress, PullReport, on_demand
from sync.pull.backfill import StepReport, Stop
from sync.server_search import search_server
from sync.session import open_session

WORDS = ("crash", "timeout", "export", "draft", "upload", "theme", "password", "label")


@dataclass
class Action:
    kind: str
    asked: float
    state: str
    sent: float | None = None


@dataclass
class Watched(httpx.AsyncBaseTransport):
    """The wire: when each request reached it, how long issue lists were in flight, and
    which request answers the action waiting to be sent."""

    inner: httpx.AsyncBaseTransport = field(default_factory=httpx.AsyncHTTPTransport)
    in_flight: list[tuple[float, float]] = field(default_factory=list)
    """(sent, answered) of each issue list."""
    lists_open: int = 0
    refused: int = 0
    waiting: tuple[Action, str] | None = None
    times: list[float] = field(default_factory=list)
    """When each request reached the wire."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        now = time.perf_counter()
        self.times.append(now)
        if self.waiting is not None and _matches(request, self.waiting[1]):
            self.waiting[0].sent = now
            self.waiting = None
        listing = request.method == "GET" and request.url.path.endswith("/issues")
        self.lists_open += listing
        try:
            response = await self.inner.handle_async_request(request)
            await response.aread()
        finally:
            self.lists_open -= listing
        if listing:
            self.in_flight.append((now, time.perf_counter()))
        self.refused += response.status_code == 429
        return response


def _matches(request: httpx.Request, kind: str) -> bool:
    path = request.url.path
    if kind == "open":
        return request.method == "GET" and path.endswith("/comments")
    if kind == "search":
        return request.method == "GET" and path.endswith("/search")
    return request.method != "GET"


async def actions_beside_backfill(
    base_url: str,
    key: str,
    cache_path: pathlib.Path,
    server_db: pathlib.Path,
    *,
    window: float,
    seconds: float,
    mean_gap: float,
    seed: int = 0,
) -> dict[str, object]:
    """Run the app's loop for `seconds` after its first pass, acting at random moments."""
    rng = random.Random(seed)
    with sqlite3.connect(server_db) as conn:
        every = [str(row[0]) for row in conn.execute("SELECT id FROM issues")]
    wire = Watched()
    resolved = ResolvedProfile("bench", base_url, None, Secret(key), KeySource.ENV)
    heard: list[object] = []
    stored: list[float] = []
    actions: list[Action] = []

    def listen(event: object) -> None:
        heard.append(event)
        if isinstance(event, PullProgress):
            stored.append(time.perf_counter())

    with Cache.open(cache_path) as cache:
        async with open_session(
            resolved, cache=cache, transport=wire, window_seconds=window, margin=window / 60
        ) as session:
            loop = SyncLoop(session, listener=listen, push_delay=0, wake_debounce=0)
            loop.wake()  # as the app starts it
            running = asyncio.create_task(loop.run())
            while not any(isinstance(item, PullReport) for item in heard):
                await asyncio.sleep(0.01)
            lists_before = len(wire.in_flight)
            ends = time.perf_counter() + seconds
            while time.perf_counter() < ends and pending(cache):
                await asyncio.sleep(rng.expovariate(1 / mean_gap))
                kind = rng.choice(("open", "search", "write"))
                shown = progress(cache)
                state = (
                    "backfill stopped for the day"
                    if shown is not None and shown.paused_until is not None
                    else "backfill request in flight"
                    if wire.lists_open
                    else "backfill between requests"
                )
                action = Action(kind, time.perf_counter(), state)
                wire.waiting = (action, kind)
                actions.append(action)
                if kind == "open":
                    task = asyncio.ensure_future(
                        on_demand.issue_comments(session, rng.choice(every))
                    )
                elif kind == "search":
                    task = asyncio.ensure_future(search_server(session, rng.choice(WORDS)))
                else:
                    target = _cached_issue(cache_path, rng)  # the user edits what is on screen
                    cache.outbox.update(
                        Resource.ISSUES, target, {"title": f"edited {len(actions)}"}
                    )
                    loop.poke()
                    task = None
                while action.sent is None and time.perf_counter() < action.asked + 10 * window:
                    await asyncio.sleep(0.001)
                if task is not None:
                    await task
            loop.stop()
            await running
    lists = [_held(sent, answered, stored) for sent, answered in wire.in_flight[lists_before:]]
    slot = _p99(lists) + window / 60
    waits = [a.sent - a.asked for a in actions if a.sent is not None]
    steps = [item for item in heard if isinstance(item, StepReport)]
    return {
        "actions": len(actions),
        "by kind": {k: sum(1 for a in actions if a.kind == k) for k in ("open", "search", "write")},
        "by state": {
            s: sum(1 for a in actions if a.state == s) for s in sorted({a.state for a in actions})
        },
        "unsent": sum(1 for a in actions if a.sent is None),
        "max": max(waits, default=math.nan),
        "p99": _p99(waits),
        "slot": slot,
        "held p50": sorted(lists)[len(lists) // 2] if lists else math.nan,
        "over": sum(1 for wait in waits if wait > slot),
        "worst": sorted(
            (
                (a.sent - a.asked, a.kind, a.state, _in_window(wire.times, a.asked, window))
                for a in actions
                if a.sent is not None
            ),
            reverse=True,
        )[:3],
        "backfill lists": len(lists),
        "yields": sum(1 for s in steps if s.stop is Stop.YIELDED),
        "budget stops": sum(1 for s in steps if s.stop is Stop.BUDGET),
        "429": wire.refused,
    }


def _held(sent: float, answered: float, stored: list[float]) -> float:
    """How long one backfill request held the line: sent to its page stored (the first
    progress told after its answer), or to its answer when none was told within a second."""
    after = stored[bisect.bisect_left(stored, answered) :][:1]
    end = after[0] if after and after[0] - answered < 1 else answered
    return end - sent


def _in_window(times: list[float], at: float, window: float) -> int:
    """Requests sent in the minute's window (and the limiter's margin) before `at`: a full
    one (60 on Free) says the minute's limit, not the backfill's pace, held the action."""
    return sum(1 for sent in times if at - window * 61 / 60 <= sent < at)


def _cached_issue(cache_path: pathlib.Path, rng: random.Random) -> str:
    with sqlite3.connect(cache_path) as conn:
        (count,) = conn.execute("SELECT count(*) FROM issues").fetchone()
        (found,) = conn.execute(
            "SELECT id FROM issues LIMIT 1 OFFSET ?", (rng.randrange(count),)
        ).fetchone()
    return str(found)


def _p99(values: list[float]) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]
