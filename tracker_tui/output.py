"""How commands print: JSON for scripts, aligned tables and plain lines for people (a sync's
progress is `tracker_tui.progress`).

Data goes to stdout, progress and notices to stderr, so `--json` output stays parseable even
while a bar is drawn. Every command imports this module, so it imports nothing beyond the
standard library: the read commands answer in tens of milliseconds
(docs/architecture.md#start-up).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO


def print_json(value: Any, out: TextIO | None = None) -> None:
    """Pretty JSON, keys in the order given (the API's), non-ASCII kept readable."""
    stream = out or sys.stdout
    stream.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")


def print_table(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[tuple[str, str]],
    *,
    widest: Mapping[str, int] | None = None,
    out: TextIO | None = None,
) -> None:
    """Rows as aligned columns (`(key, heading)` pairs); `widest` caps a column, cut with '…'."""
    stream = out or sys.stdout
    limits = widest or {}
    cells = [[_cell(row.get(key), limits.get(key)) for key, _ in columns] for row in rows]
    headings = [heading for _, heading in columns]
    widths = [max([len(h), *(len(line[i]) for line in cells)]) for i, h in enumerate(headings)]
    for line in [headings, *cells]:
        stream.write(
            "  ".join(text.ljust(width) for text, width in zip(line, widths, strict=True)).rstrip()
        )
        stream.write("\n")


def _cell(value: Any, limit: int | None) -> str:
    if value is None:
        text = "-"
    elif isinstance(value, list | tuple):
        text = ",".join(str(item) for item in value)
    else:
        text = " ".join(str(value).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def notice(text: str) -> None:
    """A line for the person at the terminal (stderr), never mixed into data."""
    print(text, file=sys.stderr)


def ask(question: str) -> str:
    """The answer typed at the terminal; the question goes to stderr, so stdout stays data.
    End of input (Ctrl-D) raises `EOFError`, which the CLI's edge ends on cleanly."""
    sys.stderr.write(question)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        sys.stderr.write("\n")
        raise EOFError
    return line.rstrip("\n")
