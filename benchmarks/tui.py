"""Measure the app at 0 and at 100,000 cached issues: start-up, memory, keystroke to redraw.

    .venv/bin/python benchmarks/tui.py [--issues 100000] [--starts 5] [--samples 60]
        [--pull 100000] [--pull-runs 1] [--pull-only] [--pull-engines thread,process]
        [--pull-window 1.0] [--pull-keep FILE] [--keys-home DIR]

Figures (a Markdown table on stdout, progress on stderr):

- start-up: wall time from starting the real `tracker-tui` process (under a pseudo-terminal,
  120x40, against an unreachable server, so it runs offline as after a sync) to the first frame
  showing the issue list; the list writes that moment into the file named by
  `TRACKER_TUI_FIRST_DRAW` (`tracker_tui/probes.py`), with the CPU time the process used until
  then (which a loaded machine disturbs less than wall time). Starts alternate between the two
  caches and the medians are compared (goal: 100k / 0 at most 1.3);
- memory: the process's peak RSS (`VmHWM`) after it drew the list and loaded the filter values,
  100k minus 0 (goal: under 20 MiB);
- keystroke to redrawn list, with the app in this process (`App.run_test`, headless) over the
  100k cache: from a key press to the frame after the list's `Counted` message, which comes with
  the new query's first rows. Search: typing words into `/` one letter at a time, then
  deleting them; filter: `m` (only mine) and `F` (clear filters), and apart from those `ctrl+s`
  in the filter dialog (one status ticked), whose time also covers closing the dialog (Textual
  lays out the list screen again). Goal: p50 and p99 under 50 ms. Each figure also gives the
  process's CPU time for the same keys (all threads: the SQLite read runs in a worker), which
  shows what a key costs when the wall time is mostly waiting for a core. The app holds its
  frames after a query change until the query's first rows are in (at most 80 ms,
  `tracker_tui/widgets/frame_hold.py`), so the frame timed is the first one drawn after the
  key: it shows the typed letter, the chips and the closed dialog together with the rows.

- keystroke to redrawn list while a cold pull of `--pull` issues (0: none) fills an empty
  cache from the reference service (seeded, its issues given the English-like text of the
  caches below, on a loopback port in a process of its own, its rate-limit window scaled to
  `--pull-window` seconds so that the pull goes as fast as the two ends can): rounds of a
  search word, `m`, `m`, the dialog and `F`, from the first 2 % of the issues in until the
  last issue and the last comment (which a first pull stores after the issues' backfill)
  are in, once with the app's own sync engine (its thread, in the app's process, as on a first
  start: head, then backfill) and once with the pull in a process of its own writing the same
  file, the app told to re-read at the engine's pace (the alternative issue 18 asks to
  compare, when the GIL is what the thread costs). After each pull the same rounds are timed
  again on the full cache with no engine: the idle figure beside it, in the same run. Goal:
  p99 under 50 ms. Here CPU time is the whole process's, the engine's thread included; the
  re-reads the engine asked for (`CacheChanged`) during the keys are counted, and the time the
  engine's pull waited for pauses in them (`sync/foreground.py`: it asks for no page until
  0.2 s after a key, 1 s at most).

- with `--keys-home DIR`, only the idle keystrokes, against the env-profile cache of an existing
  TRACKER_HOME (one `build_home` made, e.g. with the same `--issues` and `--seed`: its titles,
  read in the order they were stored, give the same words), skipping the generator, the cache's
  build and the starts (about ten minutes at 1,000,000). The app writes to that cache as it runs
  (its state, its own tables): give it a copy of a home shared with others.

The caches are the English-like issues of `benchmarks/cache.py`, in one `apply_page`. On a
shared machine the wall times include waiting for a core: the load average is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import gc
import importlib.util
import multiprocessing
import os
import pathlib
import pty
import random
import shutil
import sqlite3
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from functools import partial
from multiprocessing.synchronize import Event
from types import ModuleType

# Run as a script, this file's directory comes first on sys.path and `cache.py` beside it would
# shadow the `cache` package: put the repository root there instead.
if pathlib.Path(sys.path[0]).resolve() == pathlib.Path(__file__).resolve().parent:
    sys.path[0] = str(pathlib.Path(__file__).resolve().parent.parent)

from textual import events
from textual.app import App
from textual.message import Message
from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import Cache, Cursor, Resource
from cache.paths import profile_path
from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.pull import pull
from sync.session import open_session
from tracker_tui.app import TrackerApp, make_app
from tracker_tui.data.source import IssueQuery
from tracker_tui.engine_link import RELOAD_INTERVAL, EngineLink
from tracker_tui.messages import CacheChanged
from tracker_tui.probes import FIRST_DRAW_ENV
from tracker_tui.widgets.issue_window import IssueWindow

HERE = pathlib.Path(__file__).resolve().parent
SIZE = (120, 40)
UNREACHABLE = "http://127.0.0.1:9/v1"
"""The discard port: nothing listens, so the app is offline from its first request."""
KEY = "trk_" + "b" * 40
RATIO_GOAL, MEMORY_GOAL_MIB, KEY_GOAL_MS = 1.3, 20.0, 50.0
AFTER_DRAW = 1.5
"""Seconds the app runs on after its first frame (filter values, the sync engine's first try)
before it is asked to quit, so its peak memory covers a settled list, not only the frame."""


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def cache_bench() -> ModuleType:
    """`benchmarks/cache.py`, for its issue generator (its name shadows the `cache` package)."""
    spec = importlib.util.spec_from_file_location("bench_cache", HERE / "cache.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def build_home(home: pathlib.Path, issues: list[dict[str, object]]) -> pathlib.Path:
    """A TRACKER_HOME whose env-profile cache (what TRACKER_SERVER runs use) holds `issues`."""
    path = profile_path("env", home / "data")
    with Cache.open(path) as cache:
        if issues:
            last = issues[-1]
            cursor = Cursor(str(last["updated_at"]), frozenset({str(last["id"])}))
            cache.server.apply_page(Resource.ISSUES, issues, cursor)
    return path


@dataclass(frozen=True)
class Start:
    seconds: float
    cpu_seconds: float
    """The process's CPU time up to its first drawn list (all threads)."""
    peak_rss_kib: int


def start_once(home: pathlib.Path) -> Start:
    """Start `tracker-tui` on a pseudo-terminal, wait for its first drawn list, quit it."""
    mark = home / "first-draw"
    mark.unlink(missing_ok=True)
    master, slave = pty.openpty()
    columns, rows = SIZE
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    env = {
        **os.environ,
        "TRACKER_HOME": str(home),
        "TRACKER_SERVER": UNREACHABLE,
        "TRACKER_API_KEY": KEY,
        FIRST_DRAW_ENV: str(mark),
        "TERM": "xterm-256color",
        "TEXTUAL_ANIMATIONS": "none",
    }
    executable = pathlib.Path(sys.executable).parent / "tracker-tui"
    started = time.time()
    process = subprocess.Popen(
        [str(executable)], stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
    )
    os.close(slave)
    threading.Thread(target=drain, args=(master,), daemon=True).start()
    try:
        drawn, cpu = wait_for(mark, process, timeout=120.0)
        time.sleep(AFTER_DRAW)
        peak = peak_rss_kib(process.pid)
        os.write(master, b"\x11")  # ctrl+q
        process.wait(30.0)
    finally:
        if process.returncode is None:
            process.kill()
            process.wait()
        os.close(master)
    if process.returncode != 0:
        raise RuntimeError(f"tracker-tui exited with status {process.returncode}")
    return Start(drawn - started, cpu, peak)


def peak_rss_kib(pid: int) -> int:
    """The process's peak RSS so far (`VmHWM`). Not `wait4`'s `ru_maxrss`: Linux keeps that
    across `exec`, so a child forked from this process (which holds every generated issue)
    would report this process's size."""
    for line in pathlib.Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc: peak memory is measured on Linux only")


def drain(master: int) -> None:
    """Read the terminal's output so the app never blocks writing a frame."""
    try:
        while os.read(master, 65536):
            pass
    except OSError:
        return


def wait_for(
    mark: pathlib.Path, process: subprocess.Popen[bytes], timeout: float
) -> tuple[float, float]:
    """The wall-clock and CPU time the app wrote when it first drew its list."""
    deadline = time.monotonic() + timeout
    while not mark.exists():
        if process.poll() is not None:
            raise RuntimeError(f"tracker-tui exited ({process.returncode}) before drawing")
        if time.monotonic() > deadline:
            raise RuntimeError(f"no list drawn within {timeout:.0f} s")
        time.sleep(0.002)
    wall, cpu = mark.read_text(encoding="utf-8").split()
    return float(wall), float(cpu)


Sample = tuple[float, float]
"""Wall and CPU seconds (the process's, all threads) of one keystroke."""


@dataclass
class Keys:
    search: list[Sample]
    filter: list[Sample]
    dialog: list[Sample]
    reloads: int = 0
    """`CacheChanged` messages (each a re-read of every open screen) while the keys ran."""
    counted: list[float] = field(default_factory=list)
    """Wall seconds from a key to the frame showing its query's count (the list draws a new
    query's rows first, then counts it)."""
    pauses: Pauses | None = None
    """The garbage collector's pauses while the rounds ran."""
    machine: list[float] = field(default_factory=list)
    """Wall seconds of `Machine`'s fixed job, run after each idle search key."""
    unchanged: list[str] = field(default_factory=list)
    """Keys that changed no query (nothing for the list to redraw): not timed."""
    late: list[str] = field(default_factory=list)
    """Keys whose list was not redrawn within `KEY_LIMIT`: not timed, each said on stderr."""


class Pauses:
    """The garbage collector's pauses on every thread of this process while it is entered
    (`gc.callbacks`): a collection holds the GIL, so the app's loop waits through it
    whichever thread set it off. Young ones (generations 0 and 1) are summed; full ones are
    kept one by one, since each walks every object not frozen (50-320 ms at 100,000 issues,
    docs/architecture.md#keys-during-a-pull)."""

    def __init__(self) -> None:
        self.young = 0.0
        self.full: list[float] = []
        self.seconds = 0.0
        """How long it was entered."""
        self._began: dict[int, float] = {}
        self._entered = 0.0

    def __enter__(self) -> Pauses:
        self._entered = time.perf_counter()
        gc.callbacks.append(self._heard)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._heard)
        self.seconds += time.perf_counter() - self._entered

    def _heard(self, phase: str, info: dict[str, int]) -> None:
        now, thread = time.perf_counter(), threading.get_ident()
        if phase == "start":
            self._began[thread] = now
            return
        began = self._began.pop(thread, None)
        if began is None:
            return
        if info["generation"] == 2:
            self.full.append(now - began)
        else:
            self.young += now - began


KEY_LIMIT = 10.0
"""Seconds a key may take to its redrawn list; one slower is reported and left untimed."""
QUIET = 1.0
"""Seconds after a key, twice over, with the list's query unchanged: the key changed nothing
(a space typed into the search, which is stripped), so no frame is waited for."""


@dataclass
class Redraws:
    """Times keys to the frame after the list's next `Counted` for a query other than the one
    before the key (its new query's first rows): while a pull lands pages, the list also
    counts again for the query it already shows, which must not end a key's time."""

    app: App[object]
    event: asyncio.Event = field(default_factory=asyncio.Event)
    seen: set[int] = field(default_factory=set)
    """`Counted` messages already seen: a bubbling message is posted again to each parent."""
    window: IssueWindow | None = None
    before: IssueQuery | None = None
    """The list's query when the key being timed was sent."""

    reloads: int = 0
    stamp: Sample = (0.0, 0.0)
    """Wall and CPU clocks when the frame after the awaited `Counted` was drawn."""

    asked: IssueQuery | None = None
    """The list's query before the last key timed (kept after its rows came)."""
    counted_at: float = 0.0
    count_waits: list[float] = field(default_factory=list)
    """Per key whose count came: wall seconds from the key to the frame showing it."""
    unchanged: list[str] = field(default_factory=list)
    late: list[str] = field(default_factory=list)
    key_at: float = 0.0
    heard: list[str] = field(default_factory=list)
    """What the list and the app heard since the key being timed (said for a late key)."""

    def drawn(self) -> None:
        """Read the clocks as the frame is done, not when the timing coroutine next runs: on a
        loaded machine that can be milliseconds later, and the list's count, which starts
        once the rows are drawn (`tracker_tui/widgets/issue_window.py`), would be timed too."""
        if not self.event.is_set():
            self.stamp = time.perf_counter(), time.process_time()
            self.event.set()

    def count_drawn(self) -> None:
        self.counted_at = time.perf_counter()

    def hook(self, message: Message) -> None:
        if isinstance(message, CacheChanged):
            self.reloads += 1
            self.heard.append(f"{self.since()} CacheChanged")
        if isinstance(message, IssueWindow.Counted) and id(message) not in self.seen:
            self.seen.add(id(message))
            self.window = message.issue_list
            query = shown(message.issue_list.issue_query)
            self.heard.append(f"{self.since()} Counted {message.count} for {query}")
            if self.before is None or message.issue_list.issue_query != self.before:
                message.issue_list.call_after_refresh(self.drawn)
            if message.count is not None and message.issue_list.issue_query != self.asked:
                message.issue_list.call_after_refresh(self.count_drawn)

    def told(self, keys: Keys) -> None:
        """Give `keys` what was measured beside the keys' times."""
        keys.counted = self.count_waits
        keys.unchanged, keys.late = self.unchanged, self.late

    async def first_list(self) -> None:
        await asyncio.wait_for(self.event.wait(), 60.0)
        await self.settle()

    async def settle(self) -> None:
        """Let every read and message of the last key finish, so none is counted for the next."""
        await self.workers_done()
        await asyncio.sleep(0.05)
        await self.workers_done()
        self.seen.clear()

    async def workers_done(self) -> None:
        """Wait for the running workers; one the list cancels (a pull's refresh overtaken by
        the next) is waited past."""
        while True:
            try:
                await self.app.workers.wait_for_complete()
                return
            except WorkerCancelled:
                continue

    def since(self) -> str:
        return f"{(time.perf_counter() - self.key_at) * 1000:.0f} ms"

    async def time_key(self, samples: list[Sample], key: str, word: str = "") -> None:
        """Add to `samples` the seconds from a key event (posted as the terminal driver does,
        without `Pilot.press`, whose waits for an idle process would be timed too) to the
        list redrawn for it. A key that changes no query, or whose list is not redrawn within
        `KEY_LIMIT`, is counted apart instead (`Keys.unchanged`, `Keys.late`), not timed."""
        self.event.clear()
        self.before = None if self.window is None else self.window.issue_query
        self.asked, self.counted_at = self.before, 0.0
        self.heard = []
        started, cpu = time.perf_counter(), time.process_time()
        self.key_at = started
        self.app.post_message(events.Key(key, key if len(key) == 1 else None))
        outcome = await self.redrawn(started)
        took = self.stamp[0] - started, self.stamp[1] - cpu
        name = f"{key!r}" + (f" of {word!r}" if word else "")
        if outcome == "unchanged":
            self.unchanged.append(name)
        elif outcome == "late":
            self.late.append(name)
            now = self.window.issue_query if self.window is not None else None
            say(
                f"key {name} not redrawn within {KEY_LIMIT:.0f} s: the list's query"
                f" {shown(self.before)} -> {shown(now)}; read workers running:"
                f" {sum(w.is_running for w in self.app.workers)}; heard: {self.heard}"
            )
        self.before = None
        await self.settle()
        if outcome is None:
            samples.append(took)
            if self.counted_at > started:
                self.count_waits.append(self.counted_at - started)

    async def redrawn(self, started: float) -> str | None:
        """Wait for the frame of the key sent at `started`: None once it is drawn,
        "unchanged" when the list's query stayed as it was for two `QUIET` spells (the key
        changed nothing), "late" when `KEY_LIMIT` passed first."""
        quiet = 0
        while not self.event.is_set():
            left = started + KEY_LIMIT - time.perf_counter()
            if left <= 0:
                return "late"
            try:
                await asyncio.wait_for(self.event.wait(), min(QUIET, left))
            except TimeoutError:
                still = self.window is not None and self.window.issue_query == self.before
                quiet = quiet + 1 if still else 0
                if quiet >= 2:
                    return "unchanged"
        return None


def shown(query: IssueQuery | None) -> str:
    """A query in a line of progress: what is searched and filtered, and the sort."""
    if query is None:
        return "none"
    flt = query.filter
    terms = [
        f"{name}={value!r}"
        for name in type(flt)._fields
        if (value := getattr(flt, name)) and name != "me"
    ]
    return f"[{' '.join(terms)} mine={query.mine} sort={query.sort.key}]"


async def keystrokes(path: pathlib.Path, words: list[str], samples: int, me: str) -> Keys:
    """Search and filter keystrokes against the cache at `path`, in this process."""
    with Cache.open(path) as cache:
        return await typing(make_app(cache=cache, me=me), words, samples)


async def typing(app: TrackerApp, words: list[str], samples: int) -> Keys:
    """`samples` search keys, then as many filter keys (`m`, `F`) and dialogs."""
    keys = Keys([], [], [])
    redraws = Redraws(app)
    pauses = Pauses()
    machine = Machine()
    async with app.run_test(size=SIZE, message_hook=redraws.hook) as pilot:
        await redraws.first_list()
        await pilot.press("slash")
        with pauses:
            for word in words:  # keys not timed (`Keys.unchanged`, `late`) must not loop forever
                if len(keys.search) >= samples:
                    break
                await search_round(redraws, keys, word, machine)
            await pilot.press("escape")
            await redraws.settle()
            for _ in range(samples):
                if len(keys.filter) >= samples:
                    break
                await filter_round(redraws, keys, pilot)
    redraws.told(keys)
    keys.pauses = pauses
    return keys


async def search_round(
    redraws: Redraws, keys: Keys, word: str, machine: Machine | None = None
) -> None:
    """`word` typed into the search one letter at a time, then deleted; with `machine`, its
    fixed job run after each key."""
    for key in [*word, *["backspace"] * len(word)]:
        await redraws.time_key(keys.search, key, word)
        if machine is not None and keys.search:
            keys.machine.append(machine.job(keys.search))


class Machine:
    """The machine's own tail, beside the keys': a fixed CPU job as long as the median search
    key's CPU time so far, run in the app's loop after each key has settled. On the shared
    2-core machine a job that took 16 ms at the median took 54 ms at p99 with no other process
    running (2026-11-27): the keys' p99 is read beside it. Run a hundred times in a row
    instead, the same job once had a p99 of 20 ms: the machine's slow spells come and go."""

    def __init__(self) -> None:
        rounds = 100_000
        self.per_second = rounds / statistics.median(self._timed(rounds) for _ in range(7))

    @staticmethod
    def _timed(rounds: int) -> float:
        started = time.perf_counter()
        total = 0
        for step in range(rounds):
            total += step * step
        return time.perf_counter() - started

    def job(self, samples: list[Sample]) -> float:
        """The wall seconds of one job as long as the median of `samples`' CPU times."""
        cpu = statistics.median(cpu for _, cpu in samples)
        return self._timed(max(1, round(self.per_second * cpu)))


async def filter_round(redraws: Redraws, keys: Keys, pilot: Pilot[object]) -> None:
    """`m` twice, the filter dialog with one status ticked applied, and `F`."""
    await redraws.time_key(keys.filter, "m")
    await redraws.time_key(keys.filter, "m")
    await pilot.press("f", "tab", "space")
    await redraws.settle()
    await redraws.time_key(keys.dialog, "ctrl+s")
    await redraws.time_key(keys.filter, "F")


def serve(db: pathlib.Path, window: float, ready: multiprocessing.Queue[str], stop: Event) -> None:
    """The reference service on a loopback port, in a process of its own (as a real server
    is: in this one it would take the GIL from the app it is measured against), its rate-limit
    "minute" `window` seconds long (docs/service.md#window-scaling)."""
    with ServiceThread(create_app(db, window_seconds=window)) as service:
        ready.put(service.base_url)
        stop.wait()


async def mixed_typing(
    app: TrackerApp,
    words: list[str],
    ready: Callable[[], bool],
    going: Callable[[Keys], bool],
) -> Keys:
    """Rounds of a word typed into `/` and deleted, then `m`, `m`, the filter dialog (one
    status ticked, `ctrl+s`) and `F`, from when `ready` says so for as long as `going` (told
    the keys so far) does: every kind of key is timed all through a pull, not only at its
    start."""
    keys = Keys([], [], [])
    redraws = Redraws(app)
    pauses = Pauses()
    async with app.run_test(size=SIZE, message_hook=redraws.hook) as pilot:
        await redraws.first_list()
        while not ready():
            await asyncio.sleep(0.05)
        with pauses:
            for word in words:
                if not going(keys):
                    break
                await pilot.press("slash")
                await search_round(redraws, keys, word)
                await pilot.press("escape")
                await redraws.settle()
                await filter_round(redraws, keys, pilot)
    keys.reloads = redraws.reloads
    redraws.told(keys)
    keys.pauses = pauses
    return keys


@dataclass
class PullKeys:
    engine: str
    keys: Keys
    held: tuple[int, int]
    """Issues in the cache when the first and the last key was timed."""
    total: int
    seconds: float
    """From the first key timed to the last issue and comment in."""
    idle: Keys | None = None
    """The same rounds of keys on the same cache once the pull is over, with no engine."""
    waited: float | None = None
    """Seconds the engine's pull waited for pauses in the keys (sync.foreground); None for
    the pull in its own process, which hears of no key."""


PULL_WINDOW = 1.0
"""The service's (and the client limiter's) rate-limit "minute" during the pull, in seconds:
an enterprise key's 1,000 requests a window then never hold the pull back, which runs as fast
as the two ends can go (docs/service.md#window-scaling)."""
IDLE_KEYS = 60
"""Search keys at least in the idle figure taken after each pull."""


def pull_elsewhere(path: pathlib.Path, base_url: str, key: str, window: float) -> None:
    """A cold pull into the cache at `path`, in a process of its own (the alternative to the
    engine's thread in the app's process: they share only the cache file)."""

    async def run() -> None:
        resolved = ResolvedProfile("bench", base_url, None, Secret(key), KeySource.ENV)
        with Cache.open(path) as cache:
            async with open_session(resolved, cache=cache, window_seconds=window) as session:
                await pull(session)

    asyncio.run(run())


def told(app: TrackerApp, puller: multiprocessing.process.BaseProcess) -> None:
    """What the pipe from an engine in its own process would tell the app: the cache
    changed, at the pace the engine's thread tells it (`RELOAD_INTERVAL`), so both ways
    cost the app the same re-reads."""
    while puller.is_alive():
        time.sleep(RELOAD_INTERVAL)
        app.post_message(CacheChanged())


def fewer(enough: int, keys: Keys) -> bool:
    return len(keys.search) < enough


def english_issues(db: pathlib.Path, seed: int) -> None:
    """Give the seeded service's issues the English-like titles and descriptions of
    `benchmarks/cache.py` (those the idle figures search), and its comments the descriptions'
    words too. The seed's own titles and comments are made of a few dozen words, each in a
    tenth to nine tenths of them: typing one costs a count of tens of thousands of hits
    (150-280 ms of CPU for "the" at 100,000, idle), which would measure the search, not the
    pull beside it."""
    with closing(sqlite3.connect(db)) as conn, conn:
        seqs = [seq for (seq,) in conn.execute("SELECT seq FROM issues ORDER BY seq")]
        issues = cache_bench().generate(len(seqs), seed)
        conn.executemany(
            "UPDATE issues SET title = ?, description = ? WHERE seq = ?",
            [
                (issue["title"], issue["description"], seq)
                for issue, seq in zip(issues, seqs, strict=True)
            ],
        )
        rowids = [rowid for (rowid,) in conn.execute("SELECT rowid FROM comments ORDER BY rowid")]
        conn.executemany(
            "UPDATE comments SET body = ? WHERE rowid = ?",
            [
                (" ".join(str(issue["description"]).split()[:20]).capitalize() + ".", rowid)
                for issue, rowid in zip(reversed(issues), rowids, strict=False)
            ],
        )


def keys_during_pulls(
    folder: pathlib.Path,
    n: int,
    seed: int,
    engines: list[str],
    window: float = PULL_WINDOW,
    kept: pathlib.Path | None = None,
) -> list[PullKeys]:
    """Keystrokes in the app while a cold pull of `n` issues from the reference service (on a
    loopback port, in its own process) fills an empty cache, once for each of `engines`:
    `thread`, the app's own sync engine on its thread in the app's process, as on a first
    start (head, then backfill); `process`, the pull in a process of its own writing the same
    cache file. Keys start once the first pages are in and stop when the cache has all the
    issues and all the comments; then the same rounds are timed again on the full cache with
    no engine running (the idle figure, in the same run). With `kept`, the seeded service's
    database is taken from there, or kept there for the next run (seeding 100,000 takes
    minutes)."""
    db = folder / "server.db"
    if kept is not None and kept.exists():
        shutil.copyfile(kept, db)
        key = kept.with_suffix(".key").read_text(encoding="utf-8")
    else:
        key = seed_workspace(db, "Bench", n, plan="enterprise")
        english_issues(db, seed)
        if kept is not None:
            shutil.copyfile(db, kept)
            kept.with_suffix(".key").write_text(key, encoding="utf-8")
    with closing(sqlite3.connect(db)) as conn:
        (me,) = conn.execute("SELECT id FROM users ORDER BY id LIMIT 1").fetchone()
        titles = [str(title) for (title,) in conn.execute("SELECT title FROM issues")]
        (comments,) = conn.execute("SELECT count(*) FROM comments").fetchone()
    rnd = random.Random(seed)
    words = [w.lower() for title in rnd.sample(titles, min(200, n)) for w in title.split()]
    rnd.shuffle(words)
    context = multiprocessing.get_context("spawn")
    ready: multiprocessing.Queue[str] = context.Queue()
    stop = context.Event()
    server = context.Process(target=serve, args=(db, window, ready, stop), daemon=True)
    server.start()
    results = []
    try:
        base_url = ready.get(timeout=120)
        resolved = ResolvedProfile("bench", base_url, None, Secret(key), KeySource.ENV)
        for run, engine in enumerate(engines):
            path = folder / f"pulled-{run}.db"
            with Cache.open(path) as cache:
                held: list[int] = []
                began: list[float] = []

                def count(cache: Cache = cache, held: list[int] = held) -> int:
                    held.append(cache.server.local_count(Resource.ISSUES))
                    return held[-1]

                def started(held: list[int] = held, began: list[float] = began) -> bool:
                    if count() < n // 50:
                        return False
                    del held[:-1]
                    began.append(time.perf_counter())
                    return True

                puller = None
                if engine == "thread":
                    link = EngineLink(resolved, cache, window_seconds=window)
                    app = make_app(cache=cache, sync=link, me=str(me))
                else:
                    app = make_app(cache=cache, me=str(me))
                    puller = context.Process(
                        target=pull_elsewhere, args=(path, base_url, key, window)
                    )
                    puller.start()
                    threading.Thread(target=told, args=(app, puller), daemon=True).start()
                try:
                    keys = asyncio.run(
                        mixed_typing(
                            app,
                            words,
                            started,
                            lambda _: (
                                count() < n
                                or cache.server.local_count(Resource.COMMENTS) < comments
                            ),
                        )
                    )
                    seconds = time.perf_counter() - began[0]
                finally:
                    if puller is not None:
                        puller.join(timeout=600)
                        if puller.is_alive():
                            puller.terminate()
                            puller.join()
                idle = asyncio.run(
                    mixed_typing(
                        make_app(cache=cache, me=str(me)),
                        words,
                        lambda: True,
                        partial(fewer, max(IDLE_KEYS, len(keys.search))),
                    )
                )
            waited = link.foreground.waited if engine == "thread" else None
            results.append(PullKeys(engine, keys, (held[0], held[-1]), n, seconds, idle, waited))
            say(
                f"{engine}: {len(keys.search)} search keys between {held[0]:,} and"
                f" {held[-1]:,} in {seconds:.1f} s; load average {os.getloadavg()[0]:.1f}"
            )
    finally:
        stop.set()
        server.join(timeout=15)
        if server.is_alive():  # a server that would not stop is not left behind
            server.terminate()
            server.join()
    return results


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p99 * 1000


def key_rows(keys: Keys, during: str) -> list[tuple[str, str, str]]:
    rows = []
    for name, samples in (
        ("search (typing in /)", keys.search),
        ("filter change (m, F)", keys.filter),
        ("filter dialog applied (ctrl+s, closing it too)", keys.dialog),
    ):
        if not samples:
            rows.append((f"keystroke to redrawn list, {name}, {during}", "no keys timed", "-"))
            continue
        (p50, p99), (cpu50, cpu99) = (
            percentiles([w for w, _ in samples]),
            percentiles([c for _, c in samples]),
        )
        figure = f"keystroke to redrawn list, {name}, {during}"
        goal = f"< {KEY_GOAL_MS:.0f} ms"
        rows.append((f"{figure}: p50", f"{p50:.1f} ms (CPU {cpu50:.1f} ms)", goal))
        rows.append(
            (f"{figure}: p99 ({len(samples)} keys)", f"{p99:.1f} ms (CPU {cpu99:.1f} ms)", goal)
        )
    if keys.unchanged:
        rows.append(
            (
                f"keys that changed no query (nothing to redraw, not timed), {during}",
                f"{len(keys.unchanged)}: {', '.join(keys.unchanged[:5])}",
                "-",
            )
        )
    if keys.late:
        rows.append(
            (
                f"keys whose list was not redrawn within {KEY_LIMIT:.0f} s (not timed), {during}",
                f"{len(keys.late)}: {', '.join(keys.late[:5])}",
                "none",
            )
        )
    if keys.counted:
        p50, p99 = percentiles(keys.counted)
        rows.append(
            (
                f"keystroke to the count shown (after the rows), all keys, {during}: p50 / p99"
                f" ({len(keys.counted)} keys)",
                f"{p50:.1f} / {p99:.1f} ms (p99 {p99 / p50:.1f}x p50)",
                "-",
            )
        )
    return rows


def machine_rows(keys: Keys, during: str) -> list[tuple[str, str, str]]:
    if not keys.machine:
        return []
    p50, p99 = percentiles(keys.machine)
    return [
        (
            f"the machine, {during}: a fixed CPU job of the search keys' median CPU time, run"
            f" after each search key ({len(keys.machine)}): p50 / p99",
            f"{p50:.1f} / {p99:.1f} ms (p99 {p99 / p50:.1f}x p50)",
            "-",
        )
    ]


def pause_rows(keys: Keys, during: str) -> list[tuple[str, str, str]]:
    """What the garbage collector took of the rounds' time: a full collection that lands in a
    key is that key's time too."""
    pauses = keys.pauses
    if pauses is None or not pauses.seconds:
        return []
    full = sum(pauses.full)
    longest = max(pauses.full, default=0.0)
    return [
        (
            f"garbage collection while the keys were timed, {during}",
            f"young {pauses.young:.2f} s, full {full:.2f} s ({len(pauses.full)}, the longest"
            f" {longest * 1000:.0f} ms) of {pauses.seconds:.1f} s",
            "-",
        )
    ]


ENGINES = {
    "thread": "the engine's thread in the app",
    "process": "a pull in its own process",
}


def pull_table(runs: list[PullKeys]) -> str:
    rows = []
    for pulled in runs:
        first, last = pulled.held
        during = f"during a cold pull of {pulled.total:,} by {ENGINES[pulled.engine]}"
        rows.append(
            (
                f"issues in the cache while keys were timed, {during}",
                f"{first:,} to {last:,} in {pulled.seconds:.1f} s",
                "-",
            )
        )
        rows.append(
            (
                f"re-reads the engine asked for (`CacheChanged`), {during}",
                f"{pulled.keys.reloads:,} ({pulled.keys.reloads / pulled.seconds:.1f} a second)",
                "-",
            )
        )
        if pulled.waited is not None:
            rows.append(
                (
                    f"seconds the pull waited for a pause in the keys, {during}",
                    f"{pulled.waited:.1f} s",
                    "-",
                )
            )
        rows += key_rows(pulled.keys, during) + pause_rows(pulled.keys, during)
        if pulled.idle is not None:
            idle = f"idle on the same {pulled.total:,} after that pull"
            rows += key_rows(pulled.idle, idle) + pause_rows(pulled.idle, idle)
    lines = ["| figure | measured | goal |", "|---|---|---|"]
    lines += [f"| {figure} | {measured} | {goal} |" for figure, measured, goal in rows]
    return "\n".join(lines)


def keys_on_home(home: pathlib.Path, samples: int, seed: int) -> tuple[int, Keys]:
    """The idle keystrokes against the env-profile cache in `home`, with the words a full run
    on the same generated issues would type: `rnd.sample` of the titles in the order they
    were stored picks the same issues as it does from the generated list."""
    path = profile_path("env", home / "data")
    if not path.exists():
        raise SystemExit(f"no env-profile cache at {path}")
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        titles = [str(title) for (title,) in conn.execute("SELECT title FROM issues ORDER BY rid")]
    rnd = random.Random(seed)
    words = [w.lower() for title in rnd.sample(titles, 200) for w in title.split()]
    rnd.shuffle(words)
    n = len(titles)
    del titles
    say(f"load average {os.getloadavg()[0]:.1f}; keystrokes on {n:,} issues at {path} ...")
    return n, asyncio.run(keystrokes(path, words, samples, cache_bench().USERS[7]))


def keys_table(n: int, keys: Keys) -> str:
    lines = ["| figure | measured | goal |", "|---|---|---|"]
    during = f"{n:,} issues"
    rows = key_rows(keys, during) + machine_rows(keys, during) + pause_rows(keys, during)
    lines += [f"| {figure} | {measured} | {goal} |" for figure, measured, goal in rows]
    return "\n".join(lines)


def table(n: int, empty: list[Start], full: list[Start], keys: Keys) -> str:
    empty_s = statistics.median(start.seconds for start in empty)
    full_s = statistics.median(start.seconds for start in full)
    empty_cpu = statistics.median(start.cpu_seconds for start in empty)
    full_cpu = statistics.median(start.cpu_seconds for start in full)
    empty_mib = statistics.median(start.peak_rss_kib for start in empty) / 1024
    full_mib = statistics.median(start.peak_rss_kib for start in full) / 1024
    rows = [
        ("start to first drawn list, 0 issues (median)", f"{empty_s * 1000:.0f} ms", "-"),
        (f"start to first drawn list, {n:,} issues (median)", f"{full_s * 1000:.0f} ms", "-"),
        (f"start-up ratio {n:,} / 0", f"{full_s / empty_s:.2f}", f"≤ {RATIO_GOAL}"),
        ("CPU time to first drawn list, 0 issues (median)", f"{empty_cpu * 1000:.0f} ms", "-"),
        (f"CPU time to first drawn list, {n:,} (median)", f"{full_cpu * 1000:.0f} ms", "-"),
        (f"start-up CPU ratio {n:,} / 0", f"{full_cpu / empty_cpu:.2f}", f"≤ {RATIO_GOAL}"),
        ("peak RSS, 0 issues (median)", f"{empty_mib:.1f} MiB", "-"),
        (f"peak RSS, {n:,} issues (median)", f"{full_mib:.1f} MiB", "-"),
        (
            f"peak RSS, {n:,} minus 0",
            f"{full_mib - empty_mib:.1f} MiB",
            f"< {MEMORY_GOAL_MIB:.0f} MiB",
        ),
    ]
    rows += key_rows(keys, f"{n:,} issues")
    rows += machine_rows(keys, f"{n:,} issues")
    lines = ["| figure | measured | goal |", "|---|---|---|"]
    lines += [f"| {figure} | {measured} | {goal} |" for figure, measured, goal in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--issues", type=int, default=100_000)
    parser.add_argument("--starts", type=int, default=5, help="starts of the app per cache")
    parser.add_argument("--samples", type=int, default=60, help="keystrokes per latency figure")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--pull", type=int, default=100_000, help="issues of the cold pull keys are timed during"
    )
    parser.add_argument(
        "--pull-only", action="store_true", help="time keys during the pull, nothing else"
    )
    parser.add_argument(
        "--pull-runs",
        type=int,
        default=1,
        help="cold pulls timed with each engine (thread, process), alternating",
    )
    parser.add_argument(
        "--pull-window",
        type=float,
        default=PULL_WINDOW,
        help="the service's rate-limit minute during the pull, in seconds",
    )
    parser.add_argument(
        "--pull-keep",
        type=pathlib.Path,
        help="a file to keep the seeded service's database in, and take it from next time",
    )
    parser.add_argument(
        "--pull-engines",
        default=",".join(ENGINES),
        help="which pulls keys are timed during: thread, process or both (comma-separated)",
    )
    parser.add_argument(
        "--keys-home",
        type=pathlib.Path,
        help="time only the idle keystrokes, against the cache of this existing TRACKER_HOME",
    )
    args = parser.parse_args(argv)
    if args.keys_home is not None:
        n, keys = keys_on_home(args.keys_home, args.samples, args.seed)
        print(f"{SIZE[0]}x{SIZE[1]} terminal; load average at the end {os.getloadavg()[0]:.1f}.\n")
        print(keys_table(n, keys))
        return 0
    pulled: list[PullKeys] = []
    if args.pull:
        with tempfile.TemporaryDirectory(prefix="tui-bench-pull-") as folder:
            say(f"seeding {args.pull:,} issues in the service, then keys during pulls ...")
            chosen = [name for name in args.pull_engines.split(",") if name]
            unknown = set(chosen) - set(ENGINES)
            if unknown:
                parser.error(f"unknown --pull-engines: {', '.join(sorted(unknown))}")
            engines = [engine for _ in range(args.pull_runs) for engine in chosen]
            pulled = keys_during_pulls(
                pathlib.Path(folder),
                args.pull,
                args.seed,
                engines,
                args.pull_window,
                args.pull_keep,
            )
    if args.pull_only:
        print(pull_table(pulled))
        return 0
    say(f"load average {os.getloadavg()[0]:.1f}; generating {args.issues:,} issues ...")
    bench = cache_bench()
    issues = bench.generate(args.issues, args.seed)
    rnd = random.Random(args.seed)
    words = [w.lower() for issue in rnd.sample(issues, 200) for w in issue["title"].split()]
    rnd.shuffle(words)
    with tempfile.TemporaryDirectory(prefix="tui-bench-") as folder:
        empty_home, full_home = pathlib.Path(folder, "empty"), pathlib.Path(folder, "full")
        build_home(empty_home, [])
        say("building the 100k cache ...")
        full_path = build_home(full_home, issues)
        del issues
        empty: list[Start] = []
        full: list[Start] = []
        for run in range(args.starts):
            for home, runs in ((empty_home, empty), (full_home, full)):
                runs.append(start_once(home))
                say(
                    f"start {run + 1}/{args.starts} {home.name}: {runs[-1].seconds * 1000:.0f} ms "
                    f"({runs[-1].cpu_seconds * 1000:.0f} ms CPU),"
                    f" peak RSS {runs[-1].peak_rss_kib / 1024:.1f} MiB"
                )
        say("keystrokes ...")
        keys = asyncio.run(keystrokes(full_path, words, args.samples, bench.USERS[7]))
    print(f"{SIZE[0]}x{SIZE[1]} terminal; load average at the end {os.getloadavg()[0]:.1f}.\n")
    print(table(args.issues, empty, full, keys))
    if pulled:
        print(f"\n{pull_table(pulled)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
