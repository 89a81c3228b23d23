"""Measure the push engine against the reference service with SPEC's minute scaled to 1 s.

    .venv/bin/python benchmarks/push.py [--window 1.0]

Over real loopback HTTP, the service (`create_app(db, window_seconds=1)`) in a process of its
own, as a real server is: in a thread of this process it shared the client's GIL, and each
request's time included the service's CPU (about 3 ms of a 6 ms create):

- 100 creates on Free, one `POST /issues` each: the binding limit is 30 creates a window, so
  the fastest any client may drain them is `(ceil(100 / 30) - 1)` windows after the first
  request. Goal: within 5 % of that, with zero 429s.
- 1,000 updates with the bulk endpoint: 10 requests of 100 (goal), time and 429s.
- 300 updates on a server without bulk (Free, 60 requests a window), sent as PATCH with the
  conflict check by listing (1 request per edit), and with GET + `If-Match` (2 per edit):
  requests and time against `(ceil(requests / 60) - 1)` windows, requests being 301 (one
  listing, 300 PATCHes) or 600. (Pro's 300 a window would
  measure the client's SQLite at a 1 s window, not the pacing, at about 70 writes a second.)

Each scenario gets a fresh workspace and cache; the session (and its feature probes) is opened
before the clock starts, as in an app that has been running. Each also reports how long the
push took to send its first request and how long it ran on after the last answer: the parts
of a drain that no window explains.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

import httpx

# Run as a script, this folder comes first on sys.path, where benchmarks/cache.py would shadow
# the `cache` package: put the repository root there instead.
if Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import Cache, Cursor, Resource
from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.push import push_outbox
from sync.session import SyncSession, open_session

CREATE_LIMIT = 30
STALL = 30.0
"""Seconds after which a scenario is reported as stalled instead of waited for."""
FREE_PER_WINDOW = 60
SINGLE_UPDATES = 300


@dataclass
class Counted:
    requests: int = 0
    bulk: int = 0
    limited: int = 0
    exchanges: list[tuple[float, float]] = field(default_factory=list)
    """When each request was handed to the transport and answered (`time.monotonic()`)."""


@dataclass
class Result:
    name: str
    seconds: float
    minimum: float
    counted: Counted
    done: int
    first: float
    """Seconds from the start to the first request: what the drain spends before pacing."""
    tail: float
    """Seconds from the last answer to the end of the push."""


def without_bulk(app: Any) -> Any:
    """The service as a server without `POST /issues/bulk` (404, like any unknown path)."""

    async def variant(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/v1/issues/bulk":
            body = json.dumps({"error": {"code": "not_found", "message": "Not found."}})
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": body.encode()})
            return
        await app(scope, receive, send)

    return variant


def serve(
    db: Path, window: float, bulk: bool, ready: multiprocessing.Queue[str], stop: Event
) -> None:
    """The service in a process of its own (see the module's docstring)."""
    app = create_app(db, window_seconds=window)
    with ServiceThread(app if bulk else without_bulk(app)) as service:
        ready.put(service.base_url)
        stop.wait()


def counting(counted: Counted) -> httpx.AsyncBaseTransport:
    """The default transport, counting requests, bulk requests and 429s."""

    class Counting(httpx.AsyncHTTPTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            sent = time.monotonic()
            response = await super().handle_async_request(request)
            counted.exchanges.append((sent, time.monotonic()))
            counted.requests += 1
            counted.bulk += request.url.path.endswith("/issues/bulk")
            counted.limited += response.status_code == 429
            return response

    return Counting()


async def load(session: SyncSession) -> list[str]:
    ids: list[str] = []
    records: list[dict[str, Any]] = []
    page = 1
    while True:
        answer = await session.client.list_issues(page=page, per_page=100)
        records.extend(issue.raw for issue in answer.value.data)
        if answer.value.received < 100:
            break
        page += 1
    ids = [str(record["id"]) for record in records]
    newest = max(str(record["updated_at"]) for record in records) if records else None
    session.cache.apply_page(Resource.ISSUES, records, None if newest is None else Cursor(newest))
    return ids


async def scenario(
    name: str,
    *,
    window: float,
    plan: str,
    issues: int,
    queue: Callable[[Cache, list[str]], None],
    minimum: float,
    bulk: bool = True,
    bulk_creates: bool = True,
    preconditions: bool = True,
) -> Result:
    folder = Path(tempfile.mkdtemp(prefix="bench-push-"))
    db = folder / "server.db"
    key = seed_workspace(db, "bench", issues, plan=plan)
    counted = Counted()
    context = multiprocessing.get_context("spawn")
    ready: multiprocessing.Queue[str] = context.Queue()
    stop = context.Event()
    server = context.Process(target=serve, args=(db, window, bulk, ready, stop), daemon=True)
    server.start()
    try:
        base_url = ready.get(timeout=60)
        resolved = ResolvedProfile(None, base_url, None, Secret(key), KeySource.ENV)
        with Cache.open(folder / "cache.db") as cache:
            async with open_session(
                resolved, cache=cache, transport=counting(counted), window_seconds=window
            ) as session:
                ids = await load(session)
                queue(cache, ids)
                await asyncio.sleep(window * 1.1)
                before = Counted(counted.requests, counted.bulk, counted.limited)
                started = time.monotonic()
                try:
                    pushing = push_outbox(
                        session, bulk_creates=bulk_creates, preconditions=preconditions
                    )
                    report = await asyncio.wait_for(pushing, STALL)
                    done = report.done
                except TimeoutError:
                    done = -1
                ended = time.monotonic()
    finally:
        stop.set()
        server.join(timeout=10)
    spent = Counted(
        counted.requests - before.requests,
        counted.bulk - before.bulk,
        counted.limited - before.limited,
    )
    timed = [(sent, answered) for sent, answered in counted.exchanges if sent >= started]
    first = min((sent for sent, _ in timed), default=ended) - started
    tail = ended - max((answered for _, answered in timed), default=ended)
    return Result(name, ended - started, minimum, spent, done, first, tail)


def creates(cache: Cache, _ids: list[str]) -> None:
    for n in range(100):
        cache.create(Resource.ISSUES, {"title": f"benchmark create {n}"})


def updates(cache: Cache, ids: list[str]) -> None:
    cache.update_many(Resource.ISSUES, ids[:1000], {"title": "benchmark update"})


def few_updates(cache: Cache, ids: list[str]) -> None:
    cache.update_many(Resource.ISSUES, ids[:SINGLE_UPDATES], {"title": "benchmark update"})


async def run(window: float) -> list[Result]:
    def windows(count: int, limit: int) -> float:
        return (math.ceil(count / limit) - 1) * window

    return [
        await scenario(
            "100 creates, Free, one POST each",
            window=window,
            plan="free",
            issues=0,
            queue=creates,
            minimum=windows(100, CREATE_LIMIT),
            bulk_creates=False,
        ),
        await scenario(
            "1,000 updates, bulk endpoint",
            window=window,
            plan="free",
            issues=1000,
            queue=updates,
            minimum=0.0,
        ),
        await scenario(
            f"{SINGLE_UPDATES} updates, no bulk, listing check",
            window=window,
            plan="free",
            issues=SINGLE_UPDATES,
            queue=few_updates,
            minimum=windows(SINGLE_UPDATES + 1, FREE_PER_WINDOW),
            bulk=False,
            preconditions=False,
        ),
        await scenario(
            f"{SINGLE_UPDATES} updates, no bulk, GET + If-Match",
            window=window,
            plan="free",
            issues=SINGLE_UPDATES,
            queue=few_updates,
            minimum=windows(2 * SINGLE_UPDATES, FREE_PER_WINDOW),
            bulk=False,
        ),
    ]


def table(results: Sequence[Result], window: float) -> str:
    rows = ["| figure | measured | goal |", "|---|---|---|"]
    for r in results:
        over = f" ({r.seconds / r.minimum - 1:+.1%} over)" if r.minimum else ""
        if r.done < 0:
            over = f" (stalled: not drained after {STALL:g} s)"
        rows.append(
            f"| {r.name}: drain time (minimum {r.minimum:.2f} s) | {r.seconds:.2f} s{over} | "
            f"{'within 5 % of the minimum' if r.minimum else 'one window or less'} |"
        )
        goal = "10 bulk" if "bulk endpoint" in r.name else "1 per write (+ checks)"
        rows.append(
            f"| {r.name}: requests (bulk) / writes done | {r.counted.requests} "
            f"({r.counted.bulk}) / {r.done} | {goal} |"
        )
        rows.append(f"| {r.name}: 429s received | {r.counted.limited} | 0 |")
        rows.append(
            f"| {r.name}: first request after / end after last answer | "
            f"{r.first * 1000:.1f} ms / {r.tail * 1000:.1f} ms | |"
        )
    rows.append(f"| window (SPEC's minute, scaled) | {window:g} s | |")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--window", type=float, default=1.0, help="seconds per SPEC minute")
    args = parser.parse_args(argv)
    print(table(asyncio.run(run(args.window)), args.window))
    return 0


if __name__ == "__main__":
    sys.exit(main())
