"""Measure how long the tool takes to start: the app to its first drawn list, each CLI command.

    .venv/bin/python benchmarks/startup.py [--sizes 0 100000] [--runs 10]

Figures (a Markdown table on stdout, progress on stderr), each against a baseline measured in
the same run, pairs alternated (baseline, then ours) so that drift of a shared machine lands on
both:

- app start: wall time from starting the real `tracker-tui` process (under a pseudo-terminal,
  120x40, on a stored profile whose server is unreachable, so it runs offline as after a sync)
  to the first frame showing the issue list, which the list writes into the file named by
  `TRACKER_TUI_FIRST_DRAW` with the CPU time used until then (`tracker_tui/probes.py`). The
  baseline is `BASELINE_APP` below: a minimal Textual app that opens the same SQLite file and
  draws 40 of its rows in a `DataTable`, the most recently updated first through the index the
  app reads them by (ordered by the `updated_at` text, which no index holds since the cache
  keys timestamps, it sorted the whole table: 210 ms at 100,000 issues, which flattered the
  ratio at the large sizes), recording its first frame the same way. Goal: at most 500 ms, and
  at most 1.5 times the baseline, at every size;
- CLI commands: wall time of `tracker-tui ARGS` from start to exit, and its CPU time (user +
  system, from `wait4`), on the largest cache; the baseline is `python -c "import sqlite3,
  json"` with the same interpreter. Reads, `--help` and `--version`, and writes with
  `--no-push` (they only queue in the outbox). Goal: at most 150 ms, and at most 3 times the
  baseline. (With `--sizes 0` alone, the commands get a cache of one issue: `issues show` and
  the writes need one.) `--skip-app` measures the commands alone.

The packages are byte-compiled first, as an installed package is (pip compiles at install): a
checkout run with PYTHONDONTWRITEBYTECODE would otherwise compile every module on every start,
which no user pays. The profile's key is in the OS keyring for the commands (none here:
keyring's lookup is part of what a write costs) and in TRACKER_API_KEY for the app. Each figure
is the median over the runs, with the spread as the lower and upper quartiles. The caches hold
the English-like issues of `benchmarks/cache.py`, in one `apply_page`; `--cache SIZE=FILE` takes
a copy of a cache file built already for that size instead (a million issues take minutes to
build: `benchmarks/tui.py`'s homes keep theirs at `HOME/data/env.db`), and `--work-dir` says
where the homes go (a RAM disk such as /dev/shm for a copied cache of a gigabyte).
"""

from __future__ import annotations

import argparse
import compileall
import fcntl
import importlib.util
import os
import pathlib
import pty
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType

# Run as a script, this file's directory comes first on sys.path and `cache.py` beside it would
# shadow the `cache` package: put the repository root there instead.
if pathlib.Path(sys.path[0]).resolve() == pathlib.Path(__file__).resolve().parent:
    sys.path[0] = str(pathlib.Path(__file__).resolve().parent.parent)

from accounts.profiles import AppPaths, Profile, ProfileStore
from cache import Cache, Cursor, Resource
from cache.paths import profile_path
from tracker_tui.probes import FIRST_DRAW_ENV

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
PACKAGES = ("tracker_tui", "accounts", "cache", "sync", "issuefields", "demo", "server")
SIZE = (120, 40)
PROFILE = "bench"
UNREACHABLE = "http://127.0.0.1:9/v1"
"""The discard port: nothing listens, so the app is offline from its first request."""
KEY = "trk_" + "b" * 40
APP_GOAL_S, APP_RATIO_GOAL = 0.5, 1.5
CLI_GOAL_S, CLI_RATIO_GOAL = 0.15, 3.0
INTERPRETER = ("-c", "import sqlite3, json")

BASELINE_APP = '''
"""The least a Textual app can do to show a cache: open it, read 40 rows, draw them."""
import sqlite3, sys, time
from textual.app import App, ComposeResult
from textual.widgets import DataTable

path, mark = sys.argv[1], sys.argv[2]


class Baseline(App):
    def compose(self) -> ComposeResult:
        yield DataTable()

    def on_mount(self) -> None:
        db = sqlite3.connect(path)
        rows = db.execute(
            "SELECT number, title, status, priority, assignee, updated_at FROM issues "
            "ORDER BY updated_key DESC, rid DESC LIMIT 40"
        ).fetchall()
        table = self.query_one(DataTable)
        table.add_columns("#", "title", "status", "priority", "assignee", "updated")
        table.add_rows(rows)
        self.call_after_refresh(self.record)

    def record(self) -> None:
        with open(mark + ".part", "w") as out:
            out.write(f"{time.time():.6f} {time.process_time():.6f}\\n")
        import os
        os.replace(mark + ".part", mark)


Baseline().run()
'''


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


def paths(home: pathlib.Path) -> AppPaths:
    """Where the client finds its files under `home`, through platformdirs and the XDG
    variables as on a user's machine (not TRACKER_HOME, which would skip platformdirs)."""
    return AppPaths(
        config_dir=home / "xdg-config" / "tracker-tui", data_dir=home / "xdg-data" / "tracker-tui"
    )


def build_home(
    home: pathlib.Path, issues: list[dict[str, object]], copied: pathlib.Path | None = None
) -> pathlib.Path:
    """A home with one stored default profile whose cache holds `issues`, or is a copy of the
    cache file `copied` (with its write-ahead log, if it has one; the original is only read)."""
    store = ProfileStore(paths(home))
    store.add(Profile(PROFILE, UNREACHABLE, "bench"), make_default=True)
    path = profile_path(PROFILE, paths(home).data_dir)
    if copied is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        for suffix in ("", "-wal"):
            if pathlib.Path(f"{copied}{suffix}").exists():
                shutil.copyfile(f"{copied}{suffix}", f"{path}{suffix}")
        return path
    with Cache.open(path) as cache:
        if issues:
            last = issues[-1]
            cursor = Cursor(str(last["updated_at"]), frozenset({str(last["id"])}))
            cache.server.apply_page(Resource.ISSUES, issues, cursor)
    return path


def cache_file(given: str) -> tuple[int, pathlib.Path]:
    """`--cache SIZE=FILE`, read."""
    size, separator, name = given.partition("=")
    path = pathlib.Path(name)
    if not separator or not size.isdigit() or not path.is_file():
        raise argparse.ArgumentTypeError(f"expected SIZE=FILE with an existing FILE: {given!r}")
    return int(size), path


@dataclass(frozen=True)
class Run:
    seconds: float
    cpu_seconds: float


def environment(home: pathlib.Path, **extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(home / "xdg-config"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
        **extra,
    }
    for name in ("TRACKER_HOME", "TRACKER_SERVER", "TRACKER_API_KEY", FIRST_DRAW_ENV):
        if name not in extra:
            env.pop(name, None)
    return env


def start_app(argv: Sequence[str], home: pathlib.Path, mark: pathlib.Path) -> Run:
    """Start an app on a pseudo-terminal, wait for the first frame it records in `mark`, quit."""
    mark.unlink(missing_ok=True)
    master, slave = pty.openpty()
    columns, rows = SIZE
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    env = environment(
        home,
        TRACKER_API_KEY=KEY,
        TERM="xterm-256color",
        TEXTUAL_ANIMATIONS="none",
        **{FIRST_DRAW_ENV: str(mark)},
    )
    started = time.time()
    process = subprocess.Popen(
        list(argv), stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
    )
    os.close(slave)
    threading.Thread(target=drain, args=(master,), daemon=True).start()
    try:
        drawn, cpu = wait_for(mark, process, timeout=120.0)
        os.write(master, b"\x11")  # ctrl+q
        process.wait(30.0)
    finally:
        if process.returncode is None:
            process.kill()
            process.wait()
        os.close(master)
    if process.returncode != 0:
        raise RuntimeError(f"{argv[-1]} exited with status {process.returncode}")
    return Run(drawn - started, cpu)


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
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if mark.exists():
            wall, cpu = mark.read_text(encoding="utf-8").split()
            return float(wall), float(cpu)
        if process.poll() is not None:
            raise RuntimeError(f"the app exited with status {process.returncode} before drawing")
        time.sleep(0.005)
    raise RuntimeError("no first frame within the timeout")


def run_command(argv: Sequence[str], env: dict[str, str]) -> Run | None:
    """Run to completion; wall time and the child's CPU time (None if it failed)."""
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        process = subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors, env=env
        )
        _, status, usage = os.wait4(process.pid, 0)
        took = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            errors.seek(0)
            say(f"  {' '.join(argv[1:])}: exit {process.returncode}: {errors.read()[-300:]!r}")
            return None
    return Run(took, usage.ru_utime + usage.ru_stime)


@dataclass
class Pairs:
    """Runs of ours and of the baseline measured beside them."""

    ours: list[Run]
    baseline: list[Run]
    failed: int = 0


def median(runs: list[Run], of: Callable[[Run], float]) -> float:
    return statistics.median(of(run) for run in runs)


def quartiles(runs: list[Run]) -> tuple[float, float]:
    if len(runs) < 2:
        return runs[0].seconds, runs[0].seconds
    q1, _, q3 = statistics.quantiles([run.seconds for run in runs], n=4)
    return q1, q3


def rows_for(label: str, pairs: Pairs, goal_s: float, ratio_goal: float) -> list[tuple[str, ...]]:
    if not pairs.ours:
        return [
            (label, f"failed ({pairs.failed} of {pairs.failed} runs)", f"≤ {goal_s * 1000:.0f} ms")
        ]
    wall = median(pairs.ours, lambda run: run.seconds)
    cpu = median(pairs.ours, lambda run: run.cpu_seconds)
    base_wall = median(pairs.baseline, lambda run: run.seconds)
    base_cpu = median(pairs.baseline, lambda run: run.cpu_seconds)
    low, high = quartiles(pairs.ours)
    ratio, cpu_ratio = wall / base_wall, cpu / base_cpu
    verdict = "ok" if wall <= goal_s else "MISSED"
    ratio_verdict = "ok" if ratio <= ratio_goal else "MISSED"
    failed = f", {pairs.failed} failed" if pairs.failed else ""
    return [
        (
            label,
            f"{wall * 1000:.0f} ms (IQR {low * 1000:.0f}-{high * 1000:.0f}{failed}); "
            f"CPU {cpu * 1000:.0f} ms",
            f"≤ {goal_s * 1000:.0f} ms: {verdict}",
        ),
        (
            f"{label}: ratio to baseline ({base_wall * 1000:.0f} ms, CPU {base_cpu * 1000:.0f} ms)",
            f"{ratio:.2f}x (CPU {cpu_ratio:.2f}x)",
            f"≤ {ratio_goal}x: {ratio_verdict}",
        ),
    ]


def table(rows: list[tuple[str, ...]]) -> str:
    lines = ["| figure | measured | goal |", "|---|---|---|"]
    lines += [f"| {figure} | {measured} | {goal} |" for figure, measured, goal in rows]
    return "\n".join(lines)


def bench_app(
    homes: dict[int, pathlib.Path], runs: int, folder: pathlib.Path
) -> list[tuple[str, ...]]:
    script = folder / "baseline_app.py"
    script.write_text(BASELINE_APP, encoding="utf-8")
    ours_argv = [str(pathlib.Path(sys.executable).parent / "tracker-tui")]
    results = {size: Pairs([], []) for size in homes}
    for run in range(runs):
        for size, home in homes.items():
            mark = home / "first-draw"
            cache_file = profile_path(PROFILE, paths(home).data_dir)
            base = start_app([sys.executable, str(script), str(cache_file), str(mark)], home, mark)
            ours = start_app(ours_argv, home, mark)
            results[size].baseline.append(base)
            results[size].ours.append(ours)
            say(
                f"app {run + 1}/{runs} {size:,}: {ours.seconds * 1000:.0f} ms "
                f"(baseline {base.seconds * 1000:.0f} ms)"
            )
    rows: list[tuple[str, ...]] = []
    for size, pairs in results.items():
        rows += rows_for(
            f"app start to first drawn list, {size:,} issues", pairs, APP_GOAL_S, APP_RATIO_GOAL
        )
    return rows


def commands(issues: int) -> list[tuple[str, ...]]:
    middle = f"#{max(issues // 2, 1)}"
    return [
        ("--help",),
        ("--version",),
        ("issues", "list"),
        ("issues", "list", "--limit", "50", "--json"),
        ("issues", "show", middle),
        ("status",),
        ("outbox",),
        ("profiles",),
        ("conflicts",),
        ("issues", "edit", middle, "--title", "Retitled in the benchmark", "--no-push"),
        ("issues", "comment", middle, "--body", "A comment from the benchmark", "--no-push"),
        ("issues", "create", "--title", "Made by the benchmark", "--no-push"),
    ]


def bench_cli(home: pathlib.Path, issues: int, runs: int) -> list[tuple[str, ...]]:
    env = environment(home)
    ours = str(pathlib.Path(sys.executable).parent / "tracker-tui")
    baseline = [sys.executable, *INTERPRETER]
    argvs = commands(issues)
    results = {argv: Pairs([], []) for argv in argvs}
    for run in range(runs):
        for argv in argvs:
            base = run_command(baseline, env)
            done = run_command([ours, *argv], env)
            assert base is not None
            results[argv].baseline.append(base)
            if done is None:
                results[argv].failed += 1
            else:
                results[argv].ours.append(done)
        say(f"commands {run + 1}/{runs}")
    rows: list[tuple[str, ...]] = []
    for argv, pairs in results.items():
        rows += rows_for(f"`tracker-tui {' '.join(argv)}`", pairs, CLI_GOAL_S, CLI_RATIO_GOAL)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 100_000])
    parser.add_argument("--runs", type=int, default=10, help="runs of each figure (≥ 10)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--skip-app", action="store_true", help="only the commands")
    parser.add_argument("--skip-cli", action="store_true", help="only the app")
    parser.add_argument(
        "--cache",
        type=cache_file,
        action="append",
        default=[],
        metavar="SIZE=FILE",
        help="for that size, a copy of this cache file instead of generating the issues",
    )
    parser.add_argument("--work-dir", type=pathlib.Path, help="where the homes go (a temp dir)")
    args = parser.parse_args(argv)
    copies = dict(args.cache)
    for package in PACKAGES:
        compileall.compile_dir(ROOT / package, quiet=1)
    # The commands run on the largest cache, and `issues show` and the writes need an issue
    # there: with only `--sizes 0`, they get a cache of one issue of their own.
    cli_size = max(*args.sizes, 1)
    generated = max([size for size in (*args.sizes, cli_size) if size not in copies], default=0)
    say(f"load average {os.getloadavg()[0]:.1f}; generating {generated:,} issues ...")
    issues = cache_bench().generate(generated, args.seed)
    with tempfile.TemporaryDirectory(prefix="startup-bench-", dir=args.work_dir) as name:
        folder = pathlib.Path(name)
        homes: dict[int, pathlib.Path] = {}
        for size in sorted(args.sizes):
            say(f"building the cache of {size:,} issues ...")
            homes[size] = folder / f"home-{size}"
            build_home(homes[size], issues[:size], copies.get(size))
        cli_home = homes[max(homes)]
        if cli_size not in homes:
            cli_home = folder / f"home-{cli_size}"
            build_home(cli_home, issues[:cli_size], copies.get(cli_size))
        del issues
        rows: list[tuple[str, ...]] = []
        if not args.skip_app:
            rows += bench_app(homes, args.runs, folder)
        if not args.skip_cli:
            rows += bench_cli(cli_home, cli_size, args.runs)
    print(
        f"{args.runs} runs of each figure, pairs alternated; {SIZE[0]}x{SIZE[1]} terminal; "
        f"commands on the {cli_size:,}-issue cache; "
        f"load average at the end {os.getloadavg()[0]:.1f}.\n"
    )
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
