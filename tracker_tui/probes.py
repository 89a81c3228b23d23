"""A hook for `benchmarks/tui.py`: when the issue list was first drawn, seen from outside.

A benchmark that starts the real `tracker-tui` process cannot see inside it, and scraping the
terminal output for a row only says the bytes were written, not which frame they belong to.
With `TRACKER_TUI_FIRST_DRAW` naming a file, the list writes the wall-clock time (`time.time()`,
comparable across processes) and the process's CPU time so far (`time.process_time()`, which
a busy machine disturbs far less) into it once, after the first frame that shows its first rows
(or that it has none). Unset, as always outside the benchmark, it costs one environment lookup.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

FIRST_DRAW_ENV = "TRACKER_TUI_FIRST_DRAW"


def first_draw_file() -> Path | None:
    """Where to record the first drawn list, if a benchmark asked for it."""
    named = os.environ.get(FIRST_DRAW_ENV)
    return Path(named) if named else None


def record_first_draw(path: Path) -> None:
    """Write "wall cpu" seconds; written whole then renamed, so a reader never sees half a line."""
    partial = path.with_name(path.name + ".part")
    partial.write_text(f"{time.time():.6f} {time.process_time():.6f}\n", encoding="utf-8")
    partial.replace(path)
