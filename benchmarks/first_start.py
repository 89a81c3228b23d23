"""Measure a first start (docs/sync.md#head-first): how soon the newest issues are in the cache
the list draws, what the backfill then costs, a Free plan's backfill across days, and how
long user actions wait beside the backfill.

    .venv/bin/python benchmarks/first_start.py [--issues 100000] [--free-issues 100000]
        [--pages N] [--actions-issues 100000] [--actions-window 30] [--actions-seconds 150]

The reference service runs on a loopback port in a process of its own. Figures:

- time and issue requests until the newest 50 issues (by `updated_at`) are all in the cache,
  on the Pro plan with the service's minute scaled to a second: the app's head-first pull, and
  today's on main, the cold pull oldest first (`head_first=False`), side by side; the session's
  opening (the features' probe, `/me`) is counted apart;
- the whole backfill after the head: issue requests against ceil(N / 100), records read twice
  (the views' and each request's one-record overlap), 429s. At 1,000,000 issues the backfill
  and the oldest-first pull are 10,000 requests each, an hour or more of the service's time
  here: `--pages N` measures their first N requests and extrapolates from that pace (the
  rows say so; the backfill's count is then not measured);
- Free plan: the app's loop's work (head, views, then the backfill on the background budget)
  with the service's minute scaled to 0.1 s, so its day lasts 144 s: what day one holds, how
  many days the backfill takes, records read twice, 429s;
- Free plan, user actions at random moments during the backfill, against one request's slot
  (defined in `benchmarks/first_start_actions.py`), with the minute scaled to 30 s so that
  the backfill waits for its slots as on a real Free minute (at 10 s its waits are too short
  to tell main's pacing from the give-way's: benchmarks/RESULTS.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import pathlib
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from multiprocessing.synchronize import Event

if pathlib.Path(sys.path[0]).resolve() == pathlib.Path(__file__).resolve().parent:
    sys.path[0] = str(pathlib.Path(__file__).resolve().parent.parent)

import contextlib

import httpx

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from benchmarks.first_start_actions import actions_beside_backfill
from cache import Cache, Resource
from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.backfill_progress import pending, progress
from sync.pull import pull
from sync.pull.backfill import Stop
from sync.pull.engine import backfill_step
from sync.server_search import search_server
from sync.session import open_session

PAGE = 100
PRO_WINDOW = 1.0
FREE_WINDOW = 0.1
MARGIN_SHARE = 5.0
"""The limiter's padding, in windows of the scaled service: whole-second `Date` headers and
resets are ±1 s, which a window of a second or less cannot absorb (benchmarks/sync.py)."""
NEWEST = 50


class Counting(httpx.AsyncBaseTransport):
    """The wire: issue list requests, the ids they answered, and 429s."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.lists = 0
        self.view_lists = 0
        self.requests = 0
        self.refused = 0
        self.ids: Counter[str] = Counter()
        self.view_ids: set[str] = set()
        self.sent: list[float] = []
        """Wall-clock time of each issue list request (the Free run's days are counted in them)."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        response = await self.inner.handle_async_request(request)
        if response.status_code == 429:
            self.refused += 1
        if request.method == "GET" and request.url.path.endswith("/issues"):
            self.lists += 1
            self.sent.append(time.time())
            content = await response.aread()
            if response.status_code == 200:
                ids = [item["id"] for item in json.loads(content)["data"]]
                self.ids.update(ids)
                if "assignee" in request.url.params:
                    self.view_ids.update(ids)
                    self.view_lists += 1
            return httpx.Response(response.status_code, headers=response.headers, content=content)
        return response

    def twice(self) -> int:
        return sum(1 for key, seen in self.ids.items() if seen > 1 and key not in self.view_ids)


def newest_ids(db: pathlib.Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT id FROM issues ORDER BY updated_at DESC, id DESC LIMIT ?", (NEWEST,)
        ).fetchall()
    return {str(row[0]) for row in rows}


def serve(db: pathlib.Path, window: float, ready: multiprocessing.Queue[str], stop: Event) -> None:
    with ServiceThread(create_app(db, window_seconds=window)) as service:
        ready.put(service.base_url)
        stop.wait()


class Served:
    def __init__(self, db: pathlib.Path, window: float) -> None:
        context = multiprocessing.get_context("spawn")
        self._ready: multiprocessing.Queue[str] = context.Queue()
        self._stop = context.Event()
        self._process = context.Process(
            target=serve, args=(db, window, self._ready, self._stop), daemon=True
        )

    def __enter__(self) -> str:
        self._process.start()
        return self._ready.get(timeout=120)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._process.join(timeout=15)


async def to_newest(
    base_url: str,
    key: str,
    cache_path: pathlib.Path,
    newest: set[str],
    *,
    head: bool,
    old: pathlib.Path | None = None,
    pages: int | None = None,
) -> tuple[float, int, int, Counting, tuple[float, int], tuple[float, int]]:
    """(seconds, issue list requests, the opening's requests) until the newest are cached;
    with `old` (the service's database), the seconds and hits of a search, during the
    backfill, for a word only old issues hold; then (seconds, requests) of the backfill.

    `pages` cuts the long part short, for an extrapolation from its pace: head first, the
    backfill after `pages` requests (as the app's loop does when it yields); oldest first,
    the cold pull after `pages` requests, before it reaches the newest (seconds NaN then)."""
    wire = Counting()
    resolved = ResolvedProfile("bench", base_url, None, Secret(key), KeySource.ENV)
    with Cache.open(cache_path) as cache:
        async with open_session(
            resolved,
            cache=cache,
            transport=wire,
            window_seconds=PRO_WINDOW,
            margin=PRO_WINDOW * MARGIN_SHARE,
        ) as session:
            opening = wire.requests
            at_open = wire.lists
            if not head:
                wire.ids.clear()  # the probe's page is not the oldest-first pull's reading
            began = time.perf_counter()
            reached: list[tuple[float, int]] = []

            def seen(_: object) -> None:
                if not head and pages is not None and wire.lists - at_open >= pages:
                    if not cut:
                        cut.append((time.perf_counter() - began, wire.lists - at_open))
                        pulling.cancel()
                    return
                if reached:
                    return
                held = all(
                    cache.server.server_record(Resource.ISSUES, key) is not None for key in newest
                )
                if held:
                    reached.append((time.perf_counter() - began, wire.lists - at_open))

            cut: list[tuple[float, int]] = []
            pulling = asyncio.ensure_future(
                pull(session, head_first=head, finish_backfill=False, progress=seen)
            )
            with contextlib.suppress(asyncio.CancelledError):
                await pulling
            searched = (math.nan, 0)
            if old is not None:
                word = old_word(old, cache)
                began = time.perf_counter()
                hits = await search_server(session, word)
                searched = (time.perf_counter() - began, hits.new)
            backfilled = cut[0] if cut else (math.nan, 0)
            if head:
                at_backfill, began = wire.lists, time.perf_counter()
                if pages is None:
                    await pull(session)  # the backfill, to its end
                else:
                    await backfill_step(
                        session, should_yield=lambda: wire.lists - at_backfill >= pages
                    )
                backfilled = (time.perf_counter() - began, wire.lists - at_backfill)
    seconds, lists = reached[0] if reached else (math.nan, -1)
    return seconds, lists, opening, wire, searched, backfilled


OLD_WORD = "zanzibarquux"


def old_word(db: pathlib.Path, cache: Cache) -> str:
    """Put a word in the titles of three old issues the cache does not hold (their
    `updated_at` unchanged, so only the server's search can find them); return it."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT id FROM issues ORDER BY updated_at LIMIT 2000").fetchall()
        old = [str(row[0]) for row in rows if cache.reads.issue(str(row[0])) is None][-3:]
        conn.executemany(
            "UPDATE issues SET title = title || ' ' || ? WHERE id = ?",
            [(OLD_WORD, key) for key in old],
        )
    return OLD_WORD


async def free_days(base_url: str, key: str, cache_path: pathlib.Path) -> dict[str, object]:
    """The app's loop on Free: head and views as the user's, then the backfill on the
    background budget, waiting for each next day."""
    wire = Counting()
    resolved = ResolvedProfile("bench", base_url, None, Secret(key), KeySource.ENV)
    found: dict[str, object] = {}
    with Cache.open(cache_path) as cache:
        async with open_session(
            resolved,
            cache=cache,
            transport=wire,
            window_seconds=FREE_WINDOW,
            margin=max(FREE_WINDOW / 60, 0.02),
        ) as session:
            await pull(session, head_first=True, finish_backfill=False)
            shown = progress(cache)
            found["views"] = None if shown is None else shown.views
            found["day one head"] = cache.server.local_count(Resource.ISSUES)
            began = len(wire.sent)
            days = 1
            stops: list[int] = []
            while pending(cache):
                step = await backfill_step(session, should_yield=lambda: False)
                assert step is not None
                if step.stop is Stop.BUDGET and step.resumes_at is not None:
                    stops.append(cache.server.local_count(Resource.ISSUES))
                    days += 1
                    await asyncio.sleep(max(0.0, step.resumes_at - session.limiter.now()))
            found["days"] = days
            length = session.limiter.day_seconds
            # The service's days: whole multiples of its scaled day on its (here, the same) clock.
            per_day = Counter(int(at // length) for at in wire.sent[began:])
            found["per day"] = [per_day[day] for day in range(min(per_day), max(per_day) + 1)]
            found["held at each stop"] = stops
            found["issues"] = cache.server.local_count(Resource.ISSUES)
    found["lists"] = wire.lists
    found["twice"] = wire.twice()
    found["429"] = wire.refused
    return found


def pro_rows(
    folder: pathlib.Path, n: int, *, oldest_first: bool, pages: int | None
) -> list[tuple[str, str, str]]:
    db = folder / "pro.db"
    began = time.perf_counter()
    key = seed_workspace(db, "Bench", n, plan="pro")
    seeded = time.perf_counter() - began
    newest = newest_ids(db)
    with Served(db, PRO_WINDOW) as base_url:
        head = asyncio.run(
            to_newest(base_url, key, folder / "head.db", newest, head=True, old=db, pages=pages)
        )
        main_ = (
            asyncio.run(
                to_newest(base_url, key, folder / "main.db", newest, head=False, pages=pages)
            )
            if oldest_first
            else None
        )
    seconds, lists, opening, wire, (searched, found), (filled, filling) = head
    whole = math.ceil(n / PAGE)
    rows = [
        (f"seeding the service with {n:,} issues", f"{seeded:.0f} s", "-"),
        (
            f"newest {NEWEST} of {n:,} issues cached, head first (Pro, 1 s minute)",
            f"{lists} issue requests, {seconds:.2f} s (after the opening's {opening}, "
            "whose probe page is the head's oldest)",
            "≤ 3 requests, ≤ 2 s",
        ),
    ]
    if main_ is not None:
        rows.append(oldest_first_row(n, main_[0], main_[1], main_[5], whole))
    if pages is None:
        rows.append(
            (
                "head, views and whole backfill: issue requests",
                f"{wire.lists} (the views' {wire.view_lists} and the probe's page included)",
                f"{whole} + ≤ 2 % = {math.ceil(whole * 1.02)} (+ views)",
            )
        )
    else:
        rows.append(
            (
                f"backfill's first {filling} requests (Pro, 1 s minute)",
                f"{filled:.1f} s, {filling / filled:.1f} requests/s: the whole backfill's "
                f"{whole:,} at that pace ≈ {whole / (filling / filled) / 60:.0f} min "
                "(extrapolated; its count not measured)",
                f"{whole:,} + ≤ 2 %",
            )
        )
    return [
        *rows,
        ("records read twice (not the views')", f"{wire.twice():,}", "one per request"),
        ("429s (Pro)", str(wire.refused), "0"),
        (
            "search during the backfill for a word only 3 old issues hold",
            f"{found} found on the server in {searched:.2f} s",
            "3, ≤ 1 s",
        ),
    ]


def oldest_first_row(
    n: int, seconds: float, lists: int, cut: tuple[float, int], whole: int
) -> tuple[str, str, str]:
    """Main today's cold pull: measured to the newest, or its first pages' pace extrapolated
    to the `whole + 1` requests it takes to reach them."""
    figure = f"newest {NEWEST} of {n:,} issues cached, oldest first (main today)"
    if not math.isnan(seconds):
        return figure, f"{lists} issue requests, {seconds:.1f} s", "-"
    spent, sent = cut
    rate = sent / spent
    return (
        figure,
        f"extrapolated: {whole + 1:,} issue requests; its first {sent} took {spent:.1f} s "
        f"({rate:.1f}/s), so ≈ {(whole + 1) / rate / 60:.0f} min on this service; on Pro's "
        f"real minute (300) ≥ {(whole + 1) / 300:.0f} min, and the day's 10,000 requests",
        "-",
    )


def free_rows(folder: pathlib.Path, n: int) -> list[tuple[str, str, str]]:
    free_db = folder / "free.db"
    free_key = seed_workspace(free_db, "Free", n, plan="free")
    with Served(free_db, FREE_WINDOW) as base_url:
        free = asyncio.run(free_days(base_url, free_key, folder / "free-cache.db"))
    return [
        (
            f"Free, {n:,} issues: day one",
            f"{free['day one head']} issues (head and views: {free['views']}), "
            f"backfill stopped holding {free['held at each stop']}",
            "head and my open issues",
        ),
        (
            "Free: days to the whole backfill, issue requests",
            f"{free['days']} days, {free['lists']} requests, {free['issues']:,} issues",
            f"{math.ceil(n / PAGE)} + ≤ 2 %",
        ),
        (
            "Free: backfill requests in each of the service's days (144 s)",
            ", ".join(str(count) for count in free["per day"]),  # type: ignore[attr-defined]
            "≤ 400 (80 % of the background half of 1,000)",
        ),
        (
            "Free: records read twice (not the views'), 429s",
            f"{free['twice']:,}, {free['429']}",
            "one per request, 0",
        ),
    ]


def actions_rows(
    folder: pathlib.Path, n: int, window: float, seconds: float
) -> list[tuple[str, str, str]]:
    db = folder / "actions.db"
    key = seed_workspace(db, "Actions", n, plan="free")
    with Served(db, window) as base_url:
        found = asyncio.run(
            actions_beside_backfill(
                base_url,
                key,
                folder / "actions-cache.db",
                db,
                window=window,
                seconds=seconds,
                mean_gap=window / 5,
            )
        )
    worst = "; ".join(
        f"{wait * 1000:.0f} ms ({kind}, {state}, {held} sent in the window before)"
        for wait, kind, state, held in found["worst"]  # type: ignore[attr-defined]
    )
    return [
        (
            f"Free, {n:,} issues, minute scaled to {window:g} s: user actions during the backfill",
            f"{found['actions']} ({found['by kind']}; asked while: {found['by state']}), "
            f"{found['unsent']} unsent; backfill: {found['backfill lists']} list requests, "
            f"{found['yields']} yields, {found['budget stops']} day stops; 429s {found['429']}",
            "-",
        ),
        (
            "Free: user action's wait, asked to sent: max, p99 (worst three)",
            f"{found['max'] * 1000:.0f} ms, {found['p99'] * 1000:.0f} ms ({worst}); "
            f"{found['over']} over the slot",
            f"≤ one request's slot: {found['slot'] * 1000:.0f} ms here (a backfill request "
            f"held the line {found['held p50'] * 1000:.0f} ms at the median)",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--issues", type=int, default=100_000, help="0 skips the Pro run")
    parser.add_argument("--free-issues", type=int, default=100_000, help="0 skips the Free run")
    parser.add_argument(
        "--no-oldest-first",
        action="store_true",
        help="skip the comparison with the cold pull oldest first (minutes at 100,000)",
    )
    parser.add_argument(
        "--pages",
        type=int,
        default=None,
        help="measure only this many requests of the Pro backfill and of the oldest-first "
        "pull, and extrapolate their pace (at 1,000,000 each is 10,000 requests)",
    )
    parser.add_argument(
        "--actions-issues",
        type=int,
        default=100_000,
        help="issues of the Free workspace the user acts in during the backfill; 0 skips it",
    )
    parser.add_argument(
        "--actions-window",
        type=float,
        default=30.0,
        help="seconds of the service's minute for the actions' run (the backfill must spend "
        "the background share of a minute well within one, as on a real Free minute)",
    )
    parser.add_argument(
        "--actions-seconds", type=float, default=150.0, help="how long the user acts"
    )
    args = parser.parse_args()
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-first-") as temp:
        folder = pathlib.Path(temp)
        if args.issues:
            rows += pro_rows(
                folder, args.issues, oldest_first=not args.no_oldest_first, pages=args.pages
            )
        if args.free_issues:
            rows += free_rows(folder, args.free_issues)
        if args.actions_issues:
            rows += actions_rows(
                folder, args.actions_issues, args.actions_window, args.actions_seconds
            )
    lines = ["| figure | measured | goal |", "|---|---|---|"]
    lines += [f"| {figure} | {measured} | {goal} |" for figure, measured, goal in rows]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
