"""What a re-read costs the app's event loop at 100,000 issues when the rows in view did not change.

    .venv/bin/python benchmarks/reread.py [--tree DIR] [--steps 20] [--rounds 3] [--home DIR]

The app runs headless (120x40) over a cache of `benchmarks/cache.py`'s 100,000 English-like
issues (built once in a temporary folder, or kept in `--home`). Each round posts `--steps`
`CacheChanged`, 0.3 s apart, with nothing changed in the cache (as when a pull's page lands far
from the viewport), then `--steps` sync status reports with a pull's progress (the engine sends
one every 0.5 s during a pull), then as many idle 0.3 s pauses; the figure is the main thread's
CPU per step (the event loop: the workers' SQLite reads run on other threads) minus the idle
step's, with the list's lines drawn per re-read beside it: a Markdown table on stdout,
progress on stderr. `--tree` runs another checkout's code (an older commit from `git
archive`) with the same cache, to compare in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pathlib
import sys
import tempfile
import threading
import time

parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
parser.add_argument("--tree", type=pathlib.Path, help="a checkout whose code to measure")
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--home", type=pathlib.Path, help="keep the 100,000-issue cache here")
args = parser.parse_args()
ROOT = (args.tree or pathlib.Path(__file__).resolve().parent.parent).resolve()
sys.path[0:0] = [str(ROOT)]

import importlib.util  # noqa: E402

from cache import Cache  # noqa: E402
from cache.paths import profile_path  # noqa: E402
from sync.pull.report import PullProgress  # noqa: E402
from tracker_tui.app import make_app  # noqa: E402
from tracker_tui.messages import CacheChanged, SyncStatusChanged  # noqa: E402
from tracker_tui.widgets.issue_list import IssueList  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent


def tui_bench() -> object:
    """`benchmarks/tui.py`, for its cache builder."""
    spec = importlib.util.spec_from_file_location("tui_bench", HERE / "tui.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def cache_path(home: pathlib.Path) -> pathlib.Path:
    path = profile_path("env", home / "data")
    if not path.exists():
        tui = tui_bench()
        tui.build_home(home, tui.cache_bench().generate(100_000, 7))  # type: ignore[attr-defined]
    return path


async def measure(path: pathlib.Path) -> list[str]:
    """One Markdown table row per round."""
    rows: list[str] = []
    lines = [0]
    render_line = IssueList.render_line

    def counted(self: IssueList, y: int) -> object:
        lines[0] += 1
        return render_line(self, y)

    IssueList.render_line = counted  # type: ignore[assignment,method-assign]
    with Cache.open(path) as cache:
        app = make_app(cache=cache)
        async with app.run_test(size=(120, 40)):
            await asyncio.sleep(2.0)
            clock = time.pthread_getcpuclockid(threading.main_thread().ident or 0)
            for round_ in range(args.rounds):
                spent: dict[str, float] = {}
                drawn = 0
                for kind in ("re-read", "status", "idle"):
                    lines[0] = 0
                    start = time.clock_gettime(clock)
                    for step in range(args.steps):
                        if kind == "re-read":
                            app.post_message(CacheChanged())
                        elif kind == "status":
                            received = (round_ * args.steps + step + 1) * 500
                            progress = PullProgress("issues", step, received, 100_000)
                            app.post_message(SyncStatusChanged("env", progress=progress))
                        await asyncio.sleep(0.3)
                    spent[kind] = (time.clock_gettime(clock) - start) / args.steps * 1000
                    drawn = lines[0] if kind == "re-read" else drawn
                rows.append(
                    f"| {round_ + 1} | {spent['re-read'] - spent['idle']:.2f} ms"
                    f" ({drawn / args.steps:.0f} lines drawn) |"
                    f" {spent['status'] - spent['idle']:.2f} ms | {os.getloadavg()[0]:.1f} |"
                )
                print(rows[-1], file=sys.stderr, flush=True)
    return rows


def main() -> int:
    print(f"code: {ROOT}", file=sys.stderr, flush=True)
    if args.home is not None:
        rows = asyncio.run(measure(cache_path(args.home)))
    else:
        with tempfile.TemporaryDirectory(prefix="reread-bench-") as folder:
            rows = asyncio.run(measure(cache_path(pathlib.Path(folder))))
    print(
        "| round | event loop CPU per re-read of the same rows | per pull progress report | load |"
    )
    print("|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
