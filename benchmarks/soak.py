"""Soak: an hour of use, compressed, against a server that comes and goes; count what broke.

    .venv/bin/python benchmarks/soak.py [--minutes 10] [--window-seconds 10] [--seed 1]

The real `tracker-tui` runs in a pseudo-terminal (100x30), read through the `pyte` emulator
(the harness of `tests/harness/` and `tests/terminal/`), against a real `tracker-server`
process whose rate-limit minute lasts `--window-seconds` (10 s: an hour of limits and polling
in ten minutes). For
`--minutes` of wall time the script:

- presses keys drawn at random from the help screen of the screen in front of it (it opens
  `?` and reads the keys off the screen, so a binding added anywhere is soaked too), one by
  one or several in one write (a burst), and now and then types a word;
- every few steps writes a comment it can recognise (`soak note N`) on a random issue: the
  writes it tracks;
- stops the server at random (SIGTERM or SIGKILL) for a few seconds, then restarts it on the
  same port with the same database;
- keeps a colleague editing titles and priorities through the API.

`ctrl+q`, `ctrl+c` and the command palette are never drawn (quitting is not a crash; the
palette runs any command by name). At the end the server stays up, the colleague stops, and the
app is left alone (a quiet sync) until nothing is pending and its cache equals the server, or
two minutes pass.

Figures (a Markdown table on stdout, progress on stderr): crashes (the process ended, or a
traceback on screen; the app is then opened again and the soak goes on), lost writes (a
tracked comment neither on the server nor visible in the outbox), stuck writes (outbox entries
still pending after the quiet sync), failed writes and conflicts left, and whether the cache
ended equal to the server. Goals: 0 crashes, 0 lost, 0 stuck. Screens of each crash are written
to the folder named by `--keep` (default: a temporary folder, printed).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import pathlib
import random
import re
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

# Run as a script, this file's directory comes first on sys.path and `cache.py` beside it would
# shadow the `cache` package: put the repository root there instead, and the harness after it.
if pathlib.Path(sys.path[0]).resolve() == pathlib.Path(__file__).resolve().parent:
    sys.path[0] = str(pathlib.Path(__file__).resolve().parent.parent)
sys.path.insert(1, str(pathlib.Path(__file__).resolve().parent.parent / "tests" / "harness"))
sys.path.insert(2, str(pathlib.Path(__file__).resolve().parent.parent / "tests" / "terminal"))

from terminal_reading import help_keys, status_line, visible_issues
from terminal_screen import ScreenTimeout, Terminal
from terminal_service import CLIENT, Api, Colleague, ServerProcess, client_env, run_client
from terminal_user import focus_comment, on_issue, on_list

ISSUES = 200
COLUMNS, ROWS = 100, 30
KEY_GAP = 0.06
HOME_TRIES = 25
"""Escapes (or yeses to "discard?") tried on the way back to the list: random keys stack
screens (`y` and `P` push the sync panel and the projects over each other, again and again)."""
QUIET = 120.0
"""Seconds the quiet sync at the end may take: nothing pending, the cache equal to the server."""
FALLBACK = ["j", "k", "enter", "escape", "space", "/", "s", "p", "y", "?", "down", "up"]
WORDS = ["crash", "login", "slow", "export", "sync", "draft", "page", "error", "x"]


@dataclass
class Counts:
    keys: int = 0
    bursts: int = 0
    words: int = 0
    help_reads: int = 0
    outages: int = 0
    crashes: int = 0
    stranded: int = 0
    """Times `HOME_TRIES` escapes did not lead back to the list."""
    crash_notes: list[str] = field(default_factory=list)
    tracked: list[str] = field(default_factory=list)


class Soak:
    def __init__(self, args: argparse.Namespace, folder: pathlib.Path) -> None:
        self.args = args
        self.folder = folder
        self.random = random.Random(args.seed)
        self.counts = Counts()
        self.server = ServerProcess(folder / "server.db", window_seconds=args.window_seconds)
        self.key = self.server.seed(ISSUES)
        self.check = Api(self.server, self.server.create_key("checker"))
        self.colleague_api = Api(self.server, self.server.create_key("colleague", user="Grace"))
        self.env = client_env(folder / "home", self.server, self.key)
        self.app: Terminal | None = None
        self.pool: list[str] = list(FALLBACK)
        self.pools: dict[str, list[str]] = {}
        """The keys read off the help screen, by the footer of the screen they were read on."""
        self.footer = ""
        self.history: collections.deque[str] = collections.deque(maxlen=60)
        """The last keys sent, written beside a screen the soak could not leave."""
        self.notes = 0

    # The app.

    def open(self) -> Terminal:
        app = Terminal([str(CLIENT)], env=self.env, columns=COLUMNS, rows=ROWS)
        app.wait_for(lambda shown: "issues" in shown.split("\n")[0], timeout=60, what="the list")
        self.app = app
        return app

    def crashed(self) -> bool:
        """The app ended or shows a traceback: count it, keep the screen, open it again."""
        app = self.app
        assert app is not None
        ended = app.exit_now()
        shown = app.text()
        if ended is None and "Traceback" not in shown:
            return False
        self.counts.crashes += 1
        name = f"crash-{self.counts.crashes}.txt"
        tail = app.after_app()[-4000:]
        (self.folder / name).write_text(f"{ended}\n{app.dump()}\n{tail}\n", encoding="utf-8")
        last = [line for line in tail.strip().splitlines() if line.strip()][-1:] or ["?"]
        self.counts.crash_notes.append(f"{name}: {ended}, {last[0][:120]}")
        print(f"crash {self.counts.crashes}: {ended} {last[0][:120]}", file=sys.stderr)
        app.close()
        self.open()
        return True

    # What the user does.

    def step(self) -> None:
        app = self.app
        assert app is not None
        footer = app.text().split("\n")[-1]
        if footer != self.footer:
            self.footer = footer
            self.pool = self.pools.get(footer) or self.pool
            if footer not in self.pools:
                self.read_help()
                self.pools[footer] = self.pool
                return
        roll = self.random.random()
        if roll < 0.03:
            self.read_help()
        elif roll < 0.10:
            self.track_write()
        elif roll < 0.30:
            keys = [self.random.choice(self.pool) for _ in range(self.random.randint(2, 6))]
            keys = [key for key in keys if key != "escape"] or ["j"]
            app.burst(keys)
            self.history.append("[" + " ".join(keys) + "]")
            self.counts.bursts += 1
            self.counts.keys += len(keys)
        elif roll < 0.36:
            word = self.random.choice(WORDS)
            app.type(word, gap=KEY_GAP)
            self.history.append(repr(word))
            self.counts.words += 1
        else:
            key = self.random.choice(self.pool)
            app.press(key, gap=KEY_GAP)
            self.history.append(key)
            self.counts.keys += 1

    def read_help(self) -> None:
        """`?`, read the keys of the screen below, close it (the keys become the pool)."""
        app = self.app
        assert app is not None
        app.press("?")
        try:
            shown = app.wait_for(lambda s: "to close" in s, timeout=3, what="the help")
        except ScreenTimeout:
            return
        keys = help_keys(shown)
        if keys:
            self.pool = keys
            self.counts.help_reads += 1
        app.press("escape")

    def home(self) -> bool:
        """Back to the list from wherever the keys led (answering "discard?" with yes)."""
        app = self.app
        assert app is not None
        for _ in range(HOME_TRIES):
            shown = app.text()
            if on_list(shown) and "Search titles" not in shown:
                return True
            # "Discard the changes to this issue?", "Discard the comment you have not sent?"
            asked = re.search(r"Discard the [^?]*\?", shown) is not None
            key = "y" if asked else "escape"
            app.press(key)
            self.history.append(f"home:{key}")
            # A change above the status bar (whose budget ticks on its own) answers the key.
            with contextlib.suppress(ScreenTimeout):
                app.wait_for(
                    lambda s, was=shown: s.split("\n")[:-2] != was.split("\n")[:-2], timeout=1
                )
        if on_list(app.text()):
            return True
        self.counts.stranded += 1
        name = f"stranded-{self.counts.stranded}.txt"
        keys = " ".join(self.history)
        (self.folder / name).write_text(f"{app.dump()}\nlast keys: {keys}\n", encoding="utf-8")
        print(f"no way back to the list with escape: {name}", file=sys.stderr)
        return False

    def track_write(self) -> None:
        """A comment the soak can find again: on a random issue of the list, sent with enter.
        Tracked once the issue's screen shows it."""
        app = self.app
        assert app is not None
        if not self.home():
            return
        rows = visible_issues(app.text())
        if not rows:
            return
        app.burst(["down"] * self.random.randint(0, min(8, len(rows) - 1)))
        app.press("enter")
        try:
            app.wait_for(on_issue, timeout=5, what="an issue")
            focus_comment(app)
            self.notes += 1
            note = f"soak note {self.notes} seed {self.args.seed}"
            app.type(note, gap=0.02)
            app.wait_for_text(note, timeout=5)
            app.press("enter")
            app.wait_for(lambda s: note in s.split("Local changes")[0], timeout=5)
        except ScreenTimeout:
            return
        self.counts.tracked.append(note)

    # The world around.

    def outage(self) -> None:
        sig = self.random.choice((signal.SIGTERM, signal.SIGKILL))
        self.server.stop(sig)
        self.counts.outages += 1
        print(f"outage {self.counts.outages} ({sig.name})", file=sys.stderr)

    def run(self) -> dict[str, Any]:
        self.server.start()
        app = self.open()
        app.wait_for(lambda s: f"{ISSUES} issues" in s, timeout=120, what="the first sync")
        rows = list(range(1, ISSUES + 1))
        colleague = Colleague(
            self.colleague_api, numbers=rows[:100], own=rows[100:], every=2.0, seed=3
        ).start()
        started = time.monotonic()
        deadline = started + self.args.minutes * 60
        next_outage = started + self.random.uniform(20, 60)
        back_at: float | None = None
        last_report = started
        while time.monotonic() < deadline:
            now = time.monotonic()
            if back_at is None and now >= next_outage:
                self.outage()
                back_at = now + self.random.uniform(2, 15)
            elif back_at is not None and now >= back_at:
                self.server.start()
                back_at = None
                next_outage = now + self.random.uniform(20, 60)
            if self.crashed():
                continue
            self.step()
            if now - last_report > 30:
                last_report = now
                print(
                    f"{(now - started) / 60:4.1f} min: {self.counts.keys} keys, "
                    f"{len(self.counts.tracked)} notes, {self.counts.crashes} crashes, "
                    f"{status_line(self.app.text()) if self.app else ''}",
                    file=sys.stderr,
                )
        colleague.stop()
        if not self.server.running:
            self.server.start()
        self.crashed()
        return self.finish(time.monotonic() - started, colleague.edits)

    def finish(self, took: float, colleague_edits: int) -> dict[str, Any]:
        """The quiet sync, then the counts: what is on the server, what waits, what is lost."""
        app = self.app
        assert app is not None
        self.home()
        # The quiet sync: nothing more is typed or edited; the app must send what waits and
        # pull what the colleague did last, by itself (its polls come every few seconds).
        quiet = time.monotonic()
        with contextlib.suppress(ScreenTimeout):
            app.wait_for(
                lambda s: "0 pending" in status_line(s) and "online" in status_line(s),
                timeout=QUIET,
                what="nothing pending",
            )
        differences = self.differences()
        while differences and time.monotonic() - quiet < QUIET:
            time.sleep(2)
            differences = self.differences()
        quiet_took = time.monotonic() - quiet
        self.crashed()
        app = self.app
        app.press("ctrl+q")
        try:
            ended = app.wait_exit(timeout=30)
        except ScreenTimeout:
            ended = None
        if ended is None or ended.status != 0 or "Traceback" in app.after_app():
            self.counts.crashes += 1
            name = "quit.txt"
            (self.folder / name).write_text(f"{ended}\n{app.dump()}\n", encoding="utf-8")
            self.counts.crash_notes.append(f"{name}: ctrl+q ended with {ended}")
        app.close()
        outbox = [json.loads(line) for line in self.cli("outbox", "--json").splitlines() if line]
        conflicts = [line for line in self.cli("conflicts", "--json").splitlines() if line]
        on_server = self.server_comments()
        waiting = json.dumps(outbox)
        lost = [
            note for note in self.counts.tracked if note not in on_server and note not in waiting
        ]
        return {
            "took": took,
            "quiet": quiet_took,
            "colleague": colleague_edits,
            "stuck": sum(1 for entry in outbox if entry["state"] in ("pending", "sending")),
            "failed": sum(1 for entry in outbox if entry["state"] == "failed"),
            "conflicts": len(conflicts),
            "lost": lost,
            "differences": differences,
        }

    def cli(self, *args: str) -> str:
        done = run_client(self.env, *args)
        if done.returncode != 0:
            print(f"tracker-tui {' '.join(args)}: {done.stderr}", file=sys.stderr)
        return done.stdout

    def server_comments(self) -> set[str]:
        bodies: set[str] = set()
        page = 1
        while True:
            response = self.check.request(
                "GET", "/comments", params={"per_page": 100, "page": page}
            )
            response.raise_for_status()
            data = response.json()["data"]
            bodies.update(comment["body"] for comment in data)
            if len(data) < 100:
                return bodies
            page += 1

    def differences(self) -> list[str]:
        """Issues whose fields differ between the app's cache and the server."""
        cache = {
            issue["id"]: issue
            for issue in json.loads(self.cli("issues", "list", "--json", "--limit", "100000"))
        }
        server = {issue["id"]: issue for issue in self.check.issues()}
        fields = ("title", "status", "priority", "assignee", "project_id", "labels")
        found = [f"{issue_id} only on one side" for issue_id in cache.keys() ^ server.keys()]
        for issue_id in cache.keys() & server.keys():
            mine, theirs = cache[issue_id], server[issue_id]
            found += [
                f"#{theirs['number']} {name}: cache {mine[name]!r}, server {theirs[name]!r}"
                for name in fields
                if mine[name] != theirs[name]
            ]
        return found


def table(soak: Soak, result: dict[str, Any]) -> str:
    counts = soak.counts
    args = soak.args
    hour = result["took"] * 60 / args.window_seconds / 60
    rows = [
        (f"wall time / service time (windows of {args.window_seconds:g} s)",
         f"{result['took'] / 60:.1f} min / {hour:.0f} min", "~60 min"),
        ("keys pressed (of them in bursts)", f"{counts.keys} ({counts.bursts} bursts)", "-"),
        ("words typed, help screens read", f"{counts.words}, {counts.help_reads}", "-"),
        ("server outages (SIGTERM or SIGKILL)", str(counts.outages), "-"),
        ("colleague's edits", str(result["colleague"]), "-"),
        ("tracked writes (comments)", str(len(counts.tracked)), "-"),
        ("crashes (exit or traceback)", str(counts.crashes), "0"),
        (f"screens {HOME_TRIES} escapes did not leave", str(counts.stranded), "-"),
        ("lost writes", str(len(result["lost"])), "0"),
        ("stuck writes (pending after the quiet sync)", str(result["stuck"]), "0"),
        ("failed writes, conflicts left", f"{result['failed']}, {result['conflicts']}", "-"),
        ("quiet sync took", f"{result['quiet']:.0f} s", "-"),
        ("fields different in cache and server", str(len(result["differences"])), "0"),
    ]  # fmt: skip
    lines = [
        f"Soak of {args.minutes:g} min, seed {args.seed}, {ISSUES} issues, {COLUMNS}x{ROWS}.",
        "",
        "| figure | measured | goal |",
        "|---|---|---|",
    ]
    lines += [f"| {name} | {value} | {goal} |" for name, value, goal in rows]
    if counts.crash_notes:
        lines += ["", "Crashes:", ""] + [f"- {note}" for note in counts.crash_notes]
    if result["lost"]:
        lines += ["", "Lost: " + ", ".join(result["lost"])]
    if result["differences"]:
        lines += ["", "Different:", ""] + [f"- {line}" for line in result["differences"][:10]]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="wall time of the soak")
    parser.add_argument("--window-seconds", type=float, default=10.0, help="service's minute")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=pathlib.Path, help="folder for the crash screens")
    args = parser.parse_args()
    folder = args.keep or pathlib.Path(tempfile.mkdtemp(prefix="tracker-soak-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"soak folder: {folder}", file=sys.stderr)
    soak = Soak(args, folder)
    try:
        result = soak.run()
    finally:
        if soak.app is not None:
            soak.app.close()
        soak.server.close()
    print(table(soak, result))
    if args.keep is None and not soak.counts.crash_notes:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
