"""A stand-in for the user's `$EDITOR` in tests: an executable script that edits the file it
is given as a test scripted, so the app's and the command line's hand-over to an editor runs
for real (a process started, a file written and read back), with no person at the keys.

`StubEditor.install(monkeypatch)` writes the script and points `EDITOR` at it (and drops
`VISUAL`). Each run of the editor takes the next step of `steps`, a JSON list the script reads
from a file beside it: `{"replace": [old, new]}` (every occurrence; a missing `old` fails the
run with status 3, so a test whose text drifted fails loudly; a list of such pairs does each),
`{"sub": [[pattern, new], ...]}` (regular expressions, a line at a time; one that matches
nothing fails the run too), `{"append": text}`, `{"say": text}` (drawn on the terminal it
was given, the screen cleared first), `{"ask": prompt}` (a line read from the terminal, as
an editor reads keys: `{answer}` in a replacement stands for it), `{"wait_for": path}` (until
that file exists, at most 30 s),
`{"write": text}` (the whole file), `{"exit": N}` (after the edit), in any combination. What
the editor was given is logged, one file per run, for the test to read (`seen`).

On the `tests/` path (pythonpath in pyproject.toml) with the terminal harness, for the Pilot,
command-line and terminal tests alike.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

SCRIPT = """#!{python}
import json, pathlib, re, sys, time
here = pathlib.Path({folder!r})
path = pathlib.Path(sys.argv[-1])
runs = sorted(here.glob("seen-*.txt"))
text = path.read_text(encoding="utf-8")
(here / f"seen-{{len(runs):03d}}.txt").write_text(text, encoding="utf-8")
steps = json.loads((here / "steps.json").read_text(encoding="utf-8"))
step = steps[len(runs)] if len(runs) < len(steps) else {{}}
if "say" in step:
    sys.stdout.write("\x1b[2J\x1b[H" + step["say"])
    sys.stdout.flush()
answer = ""
if "ask" in step:
    sys.stdout.write(step["ask"])
    sys.stdout.flush()
    answer = sys.stdin.readline().strip()
if "wait_for" in step:
    go = pathlib.Path(step["wait_for"])
    for _ in range(600):
        if go.exists():
            break
        time.sleep(0.05)
pairs = step.get("replace", [])
for old, new in [pairs] if pairs and isinstance(pairs[0], str) else pairs:
    if old not in text:
        sys.exit(3)
    text = text.replace(old, new.replace("{{answer}}", answer))
for pattern, new in step.get("sub", []):
    text, count = re.subn(pattern, new, text, flags=re.MULTILINE)
    if count == 0:
        sys.exit(3)
if "append" in step:
    text += step["append"]
if "write" in step:
    text = step["write"]
path.write_text(text, encoding="utf-8")
sys.exit(step.get("exit", 0))
"""


class StubEditor:
    """The script in `folder`, and what it was given on each run."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "stub-editor"
        self.path.write_text(SCRIPT.format(python=sys.executable, folder=str(folder)))
        self.path.chmod(self.path.stat().st_mode | stat.S_IXUSR)
        self.steps([])

    def steps(self, steps: Sequence[dict[str, Any]]) -> None:
        """What the next runs do, one step each (runs past the last change nothing)."""
        for old in self.folder.glob("seen-*.txt"):
            old.unlink()
        (self.folder / "steps.json").write_text(json.dumps(list(steps)), encoding="utf-8")

    @property
    def seen(self) -> list[str]:
        """The text the editor was given, run by run."""
        return [p.read_text(encoding="utf-8") for p in sorted(self.folder.glob("seen-*.txt"))]

    def install(self, monkeypatch: pytest.MonkeyPatch) -> StubEditor:
        monkeypatch.setenv("EDITOR", str(self.path))
        monkeypatch.delenv("VISUAL", raising=False)
        return self

    def env(self) -> dict[str, str]:
        """The environment of a child process that should run this editor."""
        env = {k: v for k, v in os.environ.items() if k != "VISUAL"}
        return {**env, "EDITOR": str(self.path)}
