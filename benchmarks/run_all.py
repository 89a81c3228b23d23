"""Run every benchmark script and put their tables into benchmarks/RESULTS.md.

Each script in this folder prints a Markdown table (figure, measured, goal) on stdout; this
runner adds the machine and the date so a figure is never read without its context. Figures are
only ever written by the scripts that measured them.

RESULTS.md also holds what engineers wrote beside the tables (dated runs of a branch against
main, causes found): a run replaces only the sections it measured, each kept between a pair of
markers naming the script and its arguments, and leaves every other line of the file alone. A
run that has no section yet gets one at the end of the file.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = ("service", "cache", "sync", "push", "tui", "startup", "crash_trials", "model_run", "soak")
ARGS: dict[str, list[str]] = {
    "crash_trials": ["--trials", "50"],
    "model_run": ["--examples", "1000", "--seed", "1500"],
    "soak": ["--minutes", "10", "--window-seconds", "10"],
}
AGAIN: dict[str, list[str]] = {
    "cache": ["--issues", "1000000", "--repeat", "20"],
    "tui": ["--issues", "1000000", "--pull", "0", "--starts", "3"],
    "startup": ["--sizes", "1000000", "--skip-cli"],
    "first_start": [
        "--issues",
        "1000000",
        "--pages",
        "300",
        "--free-issues",
        "0",
        "--actions-issues",
        "0",
    ],
}
"""Scripts run a second time, with these arguments: the cache's and the app's goals hold at
1,000,000 issues too (the keystrokes during a pull are timed once, in the first run; the
command line's start once, on 100,000), and so does a first start's time to the newest issues
(the backfill's 10,000 requests are measured for 300 and extrapolated)."""
TITLE = "# Benchmark results"


def scripts() -> list[Path]:
    found = {p.stem: p for p in HERE.glob("*.py") if p.name != Path(__file__).name}
    ordered = [found.pop(name) for name in ORDER if name in found]
    return ordered + sorted(found.values())


def machine() -> str:
    memory = ""
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        kib = int(meminfo.read_text().split()[1])
        memory = f", {kib / 1024 / 1024:.0f} GiB RAM"
    return (
        f"{platform.machine()}, {os.cpu_count()} cores{memory}, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}"
    )


def markers(script: Path, arguments: list[str]) -> tuple[str, str]:
    """The lines that open and close one run's section: the script and its arguments name it."""
    name = " ".join([script.name, *arguments])
    return f"<!-- make bench: {name} -->", f"<!-- end of make bench: {name} -->"


def replaced(text: str, opening: str, closing: str, section: str) -> str:
    """`text` with the section between `opening` and `closing` (both kept) made `section`, or
    the section appended at the end when the file has none for this run yet."""
    block = f"{opening}\n{section}\n{closing}"
    start = text.find(opening)
    end = text.find(closing, start) if start >= 0 else -1
    if start < 0 or end < 0:
        return text.rstrip("\n") + f"\n\n{block}\n"
    return text[:start] + block + text[end + len(closing) :]


def measure(script: Path, arguments: list[str]) -> tuple[str, bool]:
    """Run one script; its section of the results, and whether it succeeded."""
    print(f"== {script.name} {' '.join(arguments)}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, str(script), *arguments], capture_output=True, text=True, check=False
    )
    took = time.perf_counter() - started
    shown = f"`benchmarks/{script.name}{' ' if arguments else ''}{' '.join(arguments)}`"
    lines = [
        f"## {script.stem} ({shown}, {took:.0f} s)",
        "",
        f"Measured {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {machine()}.",
        "",
    ]
    if result.returncode == 0:
        lines.append(result.stdout.strip())
    else:
        lines += [f"Failed with exit status {result.returncode}:", ""]
        lines += ["```", result.stderr.strip()[-2000:], "```"]
    print(result.stdout if result.returncode == 0 else result.stderr, file=sys.stderr)
    return "\n".join(lines), result.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", nargs="*", help="script names to run (default: all)")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args()
    selected = [p for p in scripts() if not args.only or p.stem in args.only]
    runs = [(script, ARGS.get(script.stem, [])) for script in selected]
    runs += [(script, AGAIN[script.stem]) for script in selected if script.stem in AGAIN]
    failures = 0
    for script, arguments in runs:
        section, succeeded = measure(script, arguments)
        failures += not succeeded
        text = args.out.read_text(encoding="utf-8") if args.out.exists() else TITLE + "\n"
        args.out.write_text(replaced(text, *markers(script, arguments), section), "utf-8")
        print(f"wrote {script.name}'s section of {args.out}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
