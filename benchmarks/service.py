"""Measure the reference service over a loopback port with 100,000 issues in its database.

    .venv/bin/python benchmarks/service.py [--issues 100000] [--seconds 4] [--concurrency 12]

The service runs as deployed: uvicorn on a free loopback port (in a thread of this process),
the rate limiter counting every request in SQLite and the webhook dispatcher running. Clients
keep `--concurrency` requests in flight through one `httpx.AsyncClient` for `--seconds` per
workload, and report requests per second and p50/p99 latency for:

- `GET /issues?per_page=100` at pages spread over the whole list;
- `PATCH /issues/:id` changing the title of random issues (every request writes);
- `GET /search?q=` with varied words and prefixes.

The workspace is on the enterprise plan, and requests rotate over a few hundred keys, so the
limiter does its full work on every request without refusing any (a key allows 30 searches a
minute); any 429 that still happens is reported. Client and server share this process and its
GIL, so the figures are a floor for a server with a machine of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import pathlib
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import closing
from dataclasses import dataclass, field

# Run as a script, this file's directory comes first on sys.path: put the repository root there.
if pathlib.Path(sys.path[0]).resolve() == pathlib.Path(__file__).resolve().parent:
    sys.path[0] = str(pathlib.Path(__file__).resolve().parent.parent)

import httpx

from server.app import create_app
from server.db import Database
from server.keys import add_key
from server.models import PERMISSIONS
from server.records.workspaces import workspace_id_by_name
from server.seed import seed_workspace
from server.store import Transaction
from server.thread import ServiceThread
from server.timestamps import utc_now

WORKSPACE = "Bench"
KEYS = 400
SEARCH_TERMS = (
    "crash", "timeout", "export", "sync", "login", "slow", "mobile", "csv", "safari",
    "draft", "upload", "theme", "cras", "upl", "dash", "memory leak", "blank screen",
    "password reset", "offline changes", "large projects",
)  # fmt: skip


@dataclass
class Sample:
    """What one workload measured."""

    latencies: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    elapsed: float = 0.0

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


Send = Callable[[httpx.AsyncClient, dict[str, str], random.Random], Awaitable[httpx.Response]]
"""One request of a workload: the client, the headers (a key), the worker's random source."""


def prepare(db: pathlib.Path, issues: int) -> tuple[list[str], list[str]]:
    """Seed the workspace and make the keys; the keys and a sample of issue ids."""
    seed_workspace(db, WORKSPACE, issues, plan="enterprise")
    database = Database(db)
    try:
        with database.writing() as conn:
            workspace_id = workspace_id_by_name(conn, WORKSPACE)
            assert workspace_id is not None
            tx = Transaction(conn, workspace_id, utc_now)
            (user_id,) = conn.execute(
                "SELECT id FROM users WHERE workspace_id = ? LIMIT 1", (workspace_id,)
            ).fetchone()
            keys = [add_key(tx, user_id, f"bench {n}", list(PERMISSIONS)) for n in range(KEYS)]
    finally:
        database.close()
    with closing(sqlite3.connect(db)) as conn:
        ids = [
            row[0] for row in conn.execute("SELECT id FROM issues ORDER BY random() LIMIT 20000")
        ]
    return keys, ids


async def run(
    base_url: str,
    keys: list[str],
    seconds: float,
    concurrency: int,
    send: Send,
) -> Sample:
    """Keep `concurrency` requests in flight for `seconds`, rotating over the keys."""
    sample = Sample()
    rotation = itertools.cycle(keys)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=30) as client:

        async def worker(seed: int) -> None:
            rng = random.Random(seed)
            while time.perf_counter() < deadline:
                headers = {"Authorization": f"Bearer {next(rotation)}"}
                began = time.perf_counter()
                response = await send(client, headers, rng)
                sample.latencies.append(time.perf_counter() - began)
                sample.statuses[response.status_code] = (
                    sample.statuses.get(response.status_code, 0) + 1
                )

        started = time.perf_counter()
        deadline = started + seconds
        await asyncio.gather(*(worker(n) for n in range(concurrency)))
        sample.elapsed = time.perf_counter() - started
    return sample


def workloads(issues: int, ids: list[str]) -> dict[str, Send]:
    pages = max(1, issues // 100)

    async def list_page(
        client: httpx.AsyncClient, headers: dict[str, str], rng: random.Random
    ) -> httpx.Response:
        page = rng.randint(1, pages)
        return await client.get("/issues", params={"per_page": 100, "page": page}, headers=headers)

    async def patch(
        client: httpx.AsyncClient, headers: dict[str, str], rng: random.Random
    ) -> httpx.Response:
        title = f"Benchmark edit {rng.randrange(10**9)}"
        return await client.patch(
            f"/issues/{rng.choice(ids)}", json={"title": title}, headers=headers
        )

    async def search(
        client: httpx.AsyncClient, headers: dict[str, str], rng: random.Random
    ) -> httpx.Response:
        return await client.get("/search", params={"q": rng.choice(SEARCH_TERMS)}, headers=headers)

    return {
        "GET /issues (100 per page)": list_page,
        "PATCH /issues/:id": patch,
        "GET /search?q=": search,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--issues", type=int, default=100_000, help="issues in the workspace")
    parser.add_argument("--seconds", type=float, default=4.0, help="seconds per workload")
    parser.add_argument("--concurrency", type=int, default=12, help="requests in flight")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        db = pathlib.Path(folder) / "service.db"
        began = time.perf_counter()
        keys, ids = prepare(db, args.issues)
        print(
            f"seeded {args.issues:,} issues in {time.perf_counter() - began:.1f} s", file=sys.stderr
        )
        results: dict[str, Sample] = {}
        with ServiceThread(create_app(db)) as service:
            for name, send in workloads(args.issues, ids).items():
                results[name] = asyncio.run(
                    run(service.base_url, keys, args.seconds, args.concurrency, send)
                )
                print(f"{name}: {results[name].statuses}", file=sys.stderr)

    print(f"Service over loopback: {args.issues:,} issues, {args.concurrency} requests in flight, "
          f"{args.seconds:g} s per workload.\n")  # fmt: skip
    print("| figure | measured | goal |")
    print("|---|---|---|")
    refused = 0
    for name, sample in results.items():
        ok = sum(n for status, n in sample.statuses.items() if status < 300)
        refused += sample.statuses.get(429, 0)
        print(f"| {name}: requests/s | {ok / sample.elapsed:,.0f} | — |")
        print(f"| {name}: p50 latency | {sample.percentile(50) * 1000:.1f} ms | — |")
        print(f"| {name}: p99 latency | {sample.percentile(99) * 1000:.1f} ms | < 250 ms |")
    print(f"| 429 answers (should be none) | {refused} | 0 |")
    failed = [
        (name, status)
        for name, sample in results.items()
        for status in sample.statuses
        if status >= 300
    ]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
