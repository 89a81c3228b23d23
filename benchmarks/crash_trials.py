"""Crash trials: SIGKILL a syncing child process at random moments; nothing lost, nothing twice.

    .venv/bin/python benchmarks/crash_trials.py [--trials 50] [--seed 8] [--window 1.0]

The reference service runs in a thread on loopback with SPEC's minute scaled to `--window`
seconds, over a small seeded Pro workspace. Before each trial this process queues a batch of
writes in the cache (creates, some edited, commented or deleted while still local, edits,
deletes, comments, a bulk edit); then a child process (this script with `--child`) opens a
session on the same cache and runs one `sync_once` (push, then pull). After the child says it
has started, it is killed with SIGKILL after a random (seeded) delay, unless it finished first;
the next trial restarts it with more writes queued. A last clean run must drain the outbox;
then every queued write must be on the server exactly once, the cache must hold exactly the
server's records, and `PRAGMA integrity_check` must be ok.

The table goes to stdout, progress to stderr. `run_trials` is what the test calls.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Run as a script, this folder comes first on sys.path, where benchmarks/cache.py would shadow
# the `cache` package: put the repository root there instead.
if Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import ACTIVE_STATES, Cache, Resource
from issuefields import PRIORITY
from sync.engine import SyncProgress, sync_once
from sync.pull import PullProgress
from sync.session import SyncSession, open_session

SEEDED = 30
"""Issues in the seeded workspace: the first `DELETABLE` may be deleted, the rest edited."""
DELETABLE = 6

CLEAN_RUNS = 5
"""Unkilled runs allowed at the end to drain what the trials left (a 5xx costs one)."""
SPAN_AFTER_FINISH = 1.2
SPAN_GROWTH = 1.2
"""Kills land uniformly in [0, span) after the child starts syncing. A finished run sets the
span to 1.2 times its length; each kill widens it, as the backlog left behind grows, so kills
keep landing in every phase (reconcile, push, pull) rather than only early ones."""
CHILD_TIMEOUT = 120.0
KEY_ENV = "TRACKER_API_KEY"


@dataclass
class Expected:
    """What the server must hold once every queued write has landed."""

    fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Seeded issue id -> the fields the trials last set (title, priority)."""
    created: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Title of a created issue -> its local id and the fields it must end with."""
    deleted: set[str] = field(default_factory=set)
    """Seeded ids and created titles that must be gone."""
    comments: dict[str, str] = field(default_factory=dict)
    """Comment body -> the seeded id or created title of its issue."""


@dataclass
class Figures:
    trials: int = 0
    mid_run_kills: int = 0
    kills_in_pull: int = 0
    finished_first: int = 0
    child_failures: int = 0
    writes: int = 0
    lost: int = 0
    duplicated: int = 0
    refused: int = 0
    cache_mismatches: int = 0
    integrity_failures: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)


class Trials:
    """The parent side: queues writes into the cache between runs and keeps the expectation."""

    def __init__(self, cache: Cache, seeded: Sequence[str], rng: random.Random) -> None:
        self.cache = cache
        self.rng = rng
        self.deletable = list(seeded[:DELETABLE])
        self.editable = list(seeded[DELETABLE:])
        self.expected = Expected()
        self.plain: list[str] = []
        """Titles of created issues nothing else refers to: candidates for a later delete."""
        self.writes = 0

    def queue(self, trial: int) -> None:
        """One trial's batch, in the order a user might type it."""
        cache, rng, exp = self.cache, self.rng, self.expected
        for n in range(2):
            self._create(f"ct{trial}-c{n}", {"priority": "low"})
            self.plain.append(f"ct{trial}-c{n}")
        parent = self._create(f"ct{trial}-p", {"priority": "medium"})
        cache.update(Resource.ISSUES, parent, {"description": f"local {trial}"})
        self.writes += 1
        exp.created[f"ct{trial}-p"]["description"] = f"local {trial}"
        self._comment(parent, f"ct{trial}-p", f"ct{trial}-on-local")
        for n in range(2):
            target = rng.choice(self.editable)
            self._edit(target, {"title": f"ct{trial}-e{n}"})
        target = rng.choice(self.editable)
        self._comment(target, target, f"ct{trial}-m")
        chosen = rng.sample(self.editable, 4)
        priority = rng.choice(PRIORITY.values)
        cache.update_many(Resource.ISSUES, chosen, {"priority": priority})
        self.writes += len(chosen)
        for target in chosen:
            exp.fields.setdefault(target, {})["priority"] = priority
        if trial % 5 == 0 and self.deletable:
            seeded = self.deletable.pop()
            cache.delete(Resource.ISSUES, seeded)
            self.writes += 1
            exp.deleted.add(seeded)
        title = self.plain.pop(rng.randrange(len(self.plain)))
        local = exp.created[title]["local"]
        self.writes += 1
        cache.delete(Resource.ISSUES, local)
        exp.deleted.add(title)

    def _create(self, title: str, fields: dict[str, Any]) -> str:
        local = self.cache.create(Resource.ISSUES, {"title": title, **fields})
        self.writes += 1
        self.expected.created[title] = {"local": local, **fields}
        return local

    def _edit(self, target: str, changes: dict[str, Any]) -> None:
        self.cache.update(Resource.ISSUES, target, changes)
        self.writes += 1
        self.expected.fields.setdefault(target, {}).update(changes)

    def _comment(self, issue: str, owner: str, body: str) -> None:
        self.cache.create(Resource.COMMENTS, {"issue_id": issue, "body": body})
        self.writes += 1
        self.expected.comments[body] = owner


def resolved(base_url: str, key: str) -> ResolvedProfile:
    return ResolvedProfile(None, base_url, None, Secret(key), KeySource.ENV)


async def _child(base_url: str, cache_path: Path, window: float) -> None:
    """One sync pass, as `tracker-tui sync` does it, once the parent says go (see `Children`)."""
    if sys.stdin.readline().strip() != "go":
        return
    with Cache.open(cache_path) as cache:
        profile = resolved(base_url, os.environ[KEY_ENV])
        async with open_session(profile, cache=cache, window_seconds=window) as session:
            print("started", flush=True)
            pulling: list[PullProgress] = []

            def progress(event: SyncProgress) -> None:
                if isinstance(event, PullProgress) and not pulling:
                    pulling.append(event)
                    print("pulling", flush=True)

            report = await sync_once(session, progress=progress)
            push = report.push
            stopped = None if push.stopped is None else push.stopped.message
            answer = {"stopped": stopped, "remaining": push.remaining}
            print(json.dumps(answer), flush=True)


@dataclass
class Run:
    killed: bool
    """Killed after it started syncing and before it said it had finished."""
    pulling: bool
    """The push was over and the pull under way (when it was killed, or at the end)."""
    seconds: float
    answer: dict[str, Any] | None
    failed: bool = False
    """Ended on its own without finishing (its traceback went to stderr)."""


class Children:
    """Starts sync children, one spare always warming up (Python and its imports take longer
    than a sync of a trial's batch), and runs them one at a time."""

    def __init__(self, base_url: str, cache_path: Path, key: str, window: float) -> None:
        self._argv = [sys.executable, __file__, "--child", base_url, str(cache_path)]
        self._argv += ["--window", str(window)]
        self._env = {**os.environ, KEY_ENV: key}
        self._spare = self._spawn()

    def __enter__(self) -> Children:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop(self._spare)

    def _spawn(self) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self._argv, env=self._env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    @staticmethod
    def _stop(child: subprocess.Popen[str]) -> None:
        child.send_signal(signal.SIGKILL)
        child.wait()
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                with contextlib.suppress(BrokenPipeError):  # "go" unread by a dead child
                    stream.close()

    def run(self, kill_after: float | None) -> Run:
        """Let the spare sync; SIGKILL it `kill_after` seconds after it started (None: never)."""
        child, self._spare = self._spare, self._spawn()
        assert child.stdin is not None and child.stdout is not None
        try:
            child.stdin.write("go\n")
            child.stdin.flush()
        except BrokenPipeError:  # it died starting up (its traceback is on stderr)
            self._stop(child)
            return Run(killed=False, pulling=False, seconds=0.0, answer=None, failed=True)
        lines: list[str] = []
        started_at: float | None = None
        deadline = time.monotonic() + CHILD_TIMEOUT
        timed_out = False
        with selectors.DefaultSelector() as selector:
            selector.register(child.stdout, selectors.EVENT_READ)
            while not timed_out:
                if started_at is not None and kill_after is not None:
                    deadline = min(deadline, started_at + kill_after)
                ready = selector.select(timeout=max(0.0, deadline - time.monotonic()))
                if not ready:
                    timed_out = time.monotonic() >= deadline
                    continue
                line = child.stdout.readline()
                if not line:
                    break
                lines.append(line.strip())
                if lines[-1] == "started":
                    started_at = time.monotonic()
        seconds = time.monotonic() - (started_at or time.monotonic())
        self._stop(child)
        answer = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else None
        killed = answer is None and timed_out and started_at is not None
        pulling = "pulling" in lines
        if answer is None and not timed_out:
            return Run(killed=False, pulling=pulling, seconds=seconds, answer=None, failed=True)
        return Run(killed=killed, pulling=pulling, seconds=seconds, answer=answer)


def trial_loop(
    trials: int,
    seed: int,
    window: float,
    folder: Path,
    report: Callable[[str], None],
) -> Figures:
    # Here rather than at the top: the child, which is this module too, must not pay for
    # importing the service (fastapi) on every start.
    from server.app import create_app
    from server.seed import seed_workspace
    from server.thread import ServiceThread

    figures = Figures(trials=trials)
    rng = random.Random(seed)
    db, cache_path = folder / "server.db", folder / "cache.db"
    key = seed_workspace(db, "crash", SEEDED, plan="pro", rng_seed=seed)
    with (
        ServiceThread(create_app(db, window_seconds=window)) as service,
        Children(service.base_url, cache_path, key, window) as children,
    ):
        base = service.base_url
        first = children.run(None)
        if first.answer is None:
            raise RuntimeError("the first sync did not finish")
        span = SPAN_AFTER_FINISH * first.seconds
        with Cache.open(cache_path) as cache:
            work = Trials(cache, _seeded_ids(cache, base, key, window), rng)
            for trial in range(trials):
                work.queue(trial)
                run = children.run(rng.uniform(0.0, span))
                figures.mid_run_kills += run.killed
                figures.kills_in_pull += run.killed and run.pulling
                figures.finished_first += run.answer is not None
                figures.child_failures += run.failed
                span = SPAN_AFTER_FINISH * run.seconds if run.answer else span * SPAN_GROWTH
                if trial % 10 == 9 or trial == trials - 1:
                    report(
                        f"trial {trial + 1}/{trials}: {figures.mid_run_kills} killed mid-run, "
                        f"{work.writes} writes queued"
                    )
            figures.writes = work.writes
            for _ in range(CLEAN_RUNS):
                answer = children.run(None).answer or {}
                if answer.get("stopped") is None and answer.get("remaining") == 0:
                    break
            figures.refused = len(cache.outbox(ACTIVE_STATES))
            figures.integrity_failures = int(cache.integrity_check() != ["ok"])
            asyncio.run(check(figures, cache, work.expected, base, key, window))
    return figures


def _seeded_ids(cache: Cache, base: str, key: str, window: float) -> list[str]:
    issues, _ = asyncio.run(_server_state(cache, base, key, window))
    return sorted(str(issue["id"]) for issue in issues)


async def _server_state(
    cache: Cache, base: str, key: str, window: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every live issue and comment on the server, read through the API."""
    async with open_session(resolved(base, key), cache=cache, window_seconds=window) as session:
        return await _all(session, "issues"), await _all(session, "comments")


async def _all(session: SyncSession, what: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    page = 1
    lister = session.client.list_issues if what == "issues" else session.client.list_comments
    while True:
        answer = await lister(page=page, per_page=100)
        found.extend(record.raw for record in answer.value.data)
        if answer.value.received < 100:
            return found
        page += 1


async def check(
    figures: Figures, cache: Cache, exp: Expected, base: str, key: str, window: float
) -> None:
    """Count lost and duplicated writes, and records where the cache and the server differ."""
    issues, comments = await _server_state(cache, base, key, window)
    by_id = {str(issue["id"]): issue for issue in issues}
    titles: dict[str, list[dict[str, Any]]] = {}
    for issue in issues:
        titles.setdefault(str(issue["title"]), []).append(issue)

    def problem(kind: str, text: str) -> None:
        figures.problems.append(f"{kind}: {text}")
        if kind == "lost":
            figures.lost += 1
        elif kind == "duplicated":
            figures.duplicated += 1
        else:
            figures.cache_mismatches += 1

    for title, wanted in exp.created.items():
        found = titles.get(title, [])
        gone = title in exp.deleted
        if len(found) > 1:
            problem("duplicated", f"{len(found)} issues titled {title!r}")
        if gone and found:
            problem("lost", f"the delete of created {title!r}")
        elif not gone and not found:
            problem("lost", f"the create of {title!r}")
        for name, value in wanted.items():
            if name != "local" and found and found[0].get(name) != value:
                problem("lost", f"{name}={value!r} on created {title!r}")
    for seeded, wanted in exp.fields.items():
        issue = by_id.get(seeded)
        if issue is None:
            problem("lost", f"seeded issue {seeded} is gone")
            continue
        for name, value in wanted.items():
            if issue.get(name) != value:
                problem("lost", f"{name}={value!r} on {seeded} (server has {issue.get(name)!r})")
    for seeded in exp.deleted.intersection(by_id):
        problem("lost", f"the delete of {seeded}")
    bodies: dict[str, list[dict[str, Any]]] = {}
    for comment in comments:
        bodies.setdefault(str(comment["body"]), []).append(comment)
    for body, owner in exp.comments.items():
        found = bodies.get(body, [])
        issue_id = owner if owner in by_id else str((titles.get(owner) or [{"id": None}])[0]["id"])
        if len(found) > 1:
            problem("duplicated", f"{len(found)} comments {body!r}")
        elif not found or str(found[0].get("issue_id")) != issue_id:
            problem("lost", f"the comment {body!r}")
    _compare_cache(cache, Resource.ISSUES, issues, problem)
    _compare_cache(cache, Resource.COMMENTS, comments, problem)


def _compare_cache(
    cache: Cache,
    resource: Resource,
    records: list[dict[str, Any]],
    problem: Callable[[str, str], None],
) -> None:
    if cache.local_count(resource) != len(records):
        problem("cache", f"{cache.local_count(resource)} {resource.value} cached, {len(records)}")
    for record in records:
        held = cache.server_record(resource, str(record["id"]))
        if held != record:
            problem("cache", f"{resource.value} {record['id']} differs")


def table(figures: Figures, window: float) -> str:
    f = figures
    rows = [
        "| figure | measured | goal |",
        "|---|---|---|",
        f"| trials (SIGKILL at a random moment of a sync, then restart) | {f.trials} | |",
        f"| kills that landed mid-run | {f.mid_run_kills} | at least 1 in 4 trials |",
        f"| ... of which in the push / in the pull | {f.mid_run_kills - f.kills_in_pull} / "
        f"{f.kills_in_pull} | both |",
        f"| runs that finished before their kill | {f.finished_first} | |",
        f"| runs that failed on their own (an error, not a kill) | {f.child_failures} | 0 |",
        f"| writes queued (creates, edits, deletes, comments, bulk) | {f.writes} | |",
        f"| writes lost | {f.lost} | 0 |",
        f"| writes duplicated | {f.duplicated} | 0 |",
        f"| writes left refused or unsent after a clean run | {f.refused} | 0 |",
        f"| records where cache and server differ | {f.cache_mismatches} | 0 |",
        f"| integrity check failures | {f.integrity_failures} | 0 |",
        f"| wall time | {f.seconds:.1f} s | |",
        f"| window (SPEC's minute, scaled) | {window:g} s | |",
    ]
    return "\n".join(rows)


def run_trials(
    trials: int,
    *,
    seed: int = 8,
    window: float = 1.0,
    report: Callable[[str], None] = lambda line: None,
) -> Figures:
    """Run the trials in a temporary folder and return the figures (see the module docstring)."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="crash-trials-") as folder:
        figures = trial_loop(trials, seed, window, Path(folder), report)
    figures.seconds = time.monotonic() - started
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--window", type=float, default=1.0, help="seconds per SPEC minute")
    parser.add_argument("--child", nargs=2, metavar=("BASE_URL", "CACHE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        asyncio.run(_child(args.child[0], Path(args.child[1]), args.window))
        return 0

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    figures = run_trials(args.trials, seed=args.seed, window=args.window, report=progress)
    for line in figures.problems[:20]:
        progress(line)
    print(table(figures, args.window))
    failed = figures.lost + figures.duplicated + figures.integrity_failures + figures.refused
    return 1 if failed or figures.cache_mismatches or figures.child_failures else 0


if __name__ == "__main__":
    sys.exit(main())
