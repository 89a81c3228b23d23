"""A real process in a pseudo-terminal, read through a terminal emulator (`pyte`), as users see it.

Pilot tests drive the app from inside its event loop; what they cannot see is what a terminal
does: keys arriving in one read, a screen drawn by escape sequences, the process's own exit.
`Terminal` starts a command in a pty of a fixed size (pexpect: the pty is the process's
controlling terminal, so Ctrl-C and Ctrl-D typed into it and closing it act as they do for a
person), a thread feeds everything it writes to a `pyte.Screen` (so the pty never fills up and
blocks the app), and tests read the screen's text and colours, never the widget tree, or for a
command that prints lines, the transcript of everything written. Every wait is on a condition
with a deadline, and a failed wait shows the screen.

The one harness of the test suite: `tests/terminal/` (the app and the CLI against a service
process) and `tests/cli/` (prompts, signals, `sync` on a terminal) both use it; pytest puts
this folder on `sys.path` (`pythonpath` in pyproject.toml).

pyte answers no terminal queries; Textual does not wait for answers, so it draws in a bare pty.
The emulator has no alternate screen, so what a process prints after the app has left it
(a traceback, a message) lands over the last frame; `after_app` gives exactly that text.
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import select
import signal
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pexpect
import pyte

KEY_GAP = 0.04
"""Seconds between keys typed one by one: a fast typist, slower than one read of the pty."""
ESCAPE_GAP = 0.3
"""Seconds after a lone escape: Textual waits 100 ms (ESCDELAY) for the rest of a sequence."""
DEFAULT_TIMEOUT = 30.0
"""Deadline of a wait on the screen: generous, since a loaded 2-core machine may be slow."""

KEYS: dict[str, str] = {
    "enter": "\r",
    "escape": "\x1b",
    "esc": "\x1b",
    "tab": "\t",
    "shift+tab": "\x1b[Z",
    "backspace": "\x7f",
    "space": " ",
    "up": "\x1b[A",
    "down": "\x1b[B",
    "right": "\x1b[C",
    "left": "\x1b[D",
    "shift+up": "\x1b[1;2A",
    "shift+down": "\x1b[1;2B",
    "home": "\x1b[H",
    "end": "\x1b[F",
    "pageup": "\x1b[5~",
    "pagedown": "\x1b[6~",
    "delete": "\x1b[3~",
}
"""Named keys as an xterm sends them; `ctrl+<letter>` is computed, anything else is literal."""

ALT_SCREEN_OFF = b"\x1b[?1049l"
ANSI = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|.)")


def key_bytes(key: str) -> str:
    """What the terminal sends for one key: a name from `KEYS`, `ctrl+x`, or the text itself."""
    if key in KEYS:
        return KEYS[key]
    if key.startswith("ctrl+") and len(key) == 6:
        return chr(ord(key[-1].lower()) & 0x1F)
    return key


@dataclass(frozen=True)
class Exit:
    """How the process ended: `status` for a normal exit, `signal` when a signal ended it."""

    status: int | None
    signal: int | None

    @property
    def code(self) -> int:
        """The status as a shell reports it: 128 + N for a process ended by signal N."""
        if self.signal is not None:
            return 128 + self.signal
        assert self.status is not None
        return self.status


class ScreenTimeout(AssertionError):
    """A wait on the screen ran out; the message holds the screen as it was."""


class Terminal:
    """One process in a pty of `columns` x `rows`, its output rendered by pyte."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        columns: int = 80,
        rows: int = 24,
        cwd: Path | None = None,
    ) -> None:
        self.columns, self.rows = columns, rows
        self.argv = list(argv)
        full_env = {**env, "COLUMNS": str(columns), "LINES": str(rows)}
        self._screen = pyte.Screen(columns, rows)
        self._stream = pyte.ByteStream(self._screen)
        self._lock = threading.Lock()
        self._raw = bytearray()
        self._closed = threading.Event()
        self._hung_up = threading.Event()
        self._version = 0
        """Chunks fed to the screen so far: what is read off it is kept until the next one
        (waits look many times a second at a screen that mostly has not changed)."""
        self._lines: tuple[int, list[str]] = (-1, [])
        self._styles: tuple[int, list[tuple[str, str, bool]]] = (-1, [])
        self._child = pexpect.spawn(
            self.argv[0],
            self.argv[1:],
            env=full_env,
            cwd=str(cwd) if cwd else None,
            dimensions=(rows, columns),
            echo=False,
        )
        self.pid: int = self._child.pid
        self._reader = threading.Thread(target=self._read, name="pty-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        """Drain the pty into the emulator until the process closes it, or `hang_up` does.

        Waits in select with a short timeout rather than in a read: a read blocked in this
        thread would keep the pty open after `hang_up` closed it, and no hang-up would come."""
        fd = self._child.child_fd
        while not self._hung_up.is_set():
            try:
                if not select.select([fd], [], [], 0.05)[0]:
                    continue
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            with self._lock:
                self._raw += data
                self._stream.feed(data)
                self._version += 1
        self._closed.set()

    # Reading the screen.

    def lines(self) -> list[str]:
        """The screen's rows as text, trailing spaces kept (columns line up)."""
        with self._lock:
            if self._lines[0] != self._version:
                self._lines = (self._version, list(self._screen.display))
            return list(self._lines[1])

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.lines())

    def row_styles(self) -> list[tuple[str, str, bool]]:
        """Per row, its most common (foreground, background, bold): what tells a highlighted
        row from the others."""
        with self._lock:
            if self._styles[0] == self._version:
                return list(self._styles[1])
            buffer = self._screen.buffer
            found = []
            for y in range(self.rows):
                row = buffer[y]
                counts = collections.Counter(
                    (row[x].fg, row[x].bg, row[x].bold) for x in range(self.columns)
                )
                found.append(counts.most_common(1)[0][0])
            self._styles = (self._version, found)
            return list(found)

    def stands_out(self, text: str) -> bool:
        """Whether `text` is drawn on a background other than the cell before it: selected
        text in a field, a highlighted option. False when `text` is not on screen."""
        with self._lock:
            for y, line in enumerate(self._screen.display):
                x = line.find(text)
                if x > 0:
                    row = self._screen.buffer[y]
                    return bool(row[x].bg != row[x - 1].bg)
        return False

    def output(self) -> bytes:
        """Every byte the process wrote so far."""
        with self._lock:
            return bytes(self._raw)

    def transcript(self) -> str:
        """Everything written so far as plain text (escape sequences removed): what a command
        that prints lines said, however the screen wrapped or scrolled it."""
        return _plain(self.output())

    def after_app(self) -> str:
        """Plain text written after the app last left the alternate screen (tracebacks,
        messages on stderr at exit); everything when the process never drew an app."""
        raw = self.output()
        cut = raw.rfind(ALT_SCREEN_OFF)
        return _plain(raw[cut + len(ALT_SCREEN_OFF) :] if cut >= 0 else raw)

    def dump(self) -> str:
        """The screen framed, for failure messages."""
        border = "+" + "-" * self.columns + "+"
        body = "\n".join(f"|{line}|" for line in self.lines())
        return f"{border}\n{body}\n{border}"

    # Waiting.

    def wait_for(
        self,
        condition: Callable[[str], object],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        what: str = "",
    ) -> str:
        """Poll the screen's text until `condition(text)` is true; return that text.

        Fails with the screen (and the process's exit, if it ended) when the deadline passes.
        """
        deadline = time.monotonic() + timeout
        while True:
            shown = self.text()
            if condition(shown):
                return shown
            ended = self.exit_now()
            if time.monotonic() >= deadline or (ended is not None and self._closed.is_set()):
                shown = self.text()
                if condition(shown):
                    return shown
                state = "process still running"
                if ended:
                    last = self.after_app().strip().splitlines()[-3:]
                    state = f"process ended: {ended}, last words: {' / '.join(last)!r}"
                raise ScreenTimeout(
                    f"the screen never showed {what or 'what was waited for'} "
                    f"within {timeout:.0f} s ({state}):\n{self.dump()}"
                )
            time.sleep(0.05)

    def expect(self, pattern: str, *, timeout: float = DEFAULT_TIMEOUT) -> str:
        """Wait until the regular expression `pattern` matches the transcript; its match."""
        found: list[str] = []

        def matched(_: str) -> bool:
            match = re.search(pattern, self.transcript())
            found[:] = [match.group(0)] if match else []
            return bool(match)

        self.wait_for(matched, timeout=timeout, what=f"/{pattern}/ in the transcript")
        return found[0]

    def wait_for_text(self, *texts: str, timeout: float = DEFAULT_TIMEOUT) -> str:
        """Wait until every one of `texts` is on the screen."""
        return self.wait_for(
            lambda shown: all(text in shown for text in texts),
            timeout=timeout,
            what=" and ".join(repr(text) for text in texts),
        )

    def wait_until_gone(self, *texts: str, timeout: float = DEFAULT_TIMEOUT) -> str:
        """Wait until none of `texts` is on the screen."""
        return self.wait_for(
            lambda shown: not any(text in shown for text in texts),
            timeout=timeout,
            what="no " + " or ".join(repr(text) for text in texts),
        )

    def stays(self, condition: Callable[[str], object], *, seconds: float, what: str = "") -> str:
        """Check that `condition` holds on every look at the screen for `seconds` (a state
        that must not change while time passes, e.g. a highlight while the list re-sorts)."""
        deadline = time.monotonic() + seconds
        while True:
            shown = self.text()
            if not condition(shown):
                raise AssertionError(f"{what or 'the condition'} stopped holding:\n{self.dump()}")
            if time.monotonic() >= deadline:
                return shown
            time.sleep(0.05)

    # Typing.

    def press(self, *keys: str, gap: float = KEY_GAP) -> None:
        """Keys one by one, `gap` seconds apart, as a person types them.

        After escape the gap is longer than the app's ESCDELAY: an escape byte followed at
        once by another key is read as alt+key, by any terminal program, not only this one."""
        for key in keys:
            self._child.send(key_bytes(key))
            time.sleep(ESCAPE_GAP if key_bytes(key) == "\x1b" else gap)

    def type(self, text: str, gap: float = KEY_GAP) -> None:
        """Text one character at a time."""
        self.press(*text, gap=gap)

    def burst(self, keys: str | Iterable[str]) -> None:
        """Keys in one write, so the app reads them together (a paste, a key held down, a
        terminal catching up): a string is sent as it is, a list of keys as their bytes."""
        data = keys if isinstance(keys, str) else "".join(key_bytes(key) for key in keys)
        self._child.send(data)

    # The process.

    def exit_now(self) -> Exit | None:
        """The exit, if the process has ended; None while it runs."""
        if self._child.isalive():
            return None
        return Exit(self._child.exitstatus, self._child.signalstatus)

    def wait_exit(self, timeout: float = DEFAULT_TIMEOUT) -> Exit:
        """Wait for the process to end (and its output to be read); fail with the screen."""
        deadline = time.monotonic() + timeout
        while self._child.isalive():
            if time.monotonic() >= deadline:
                raise ScreenTimeout(
                    f"the process did not end within {timeout:.0f} s:\n{self.dump()}"
                )
            time.sleep(0.05)
        self._closed.wait(max(0.1, deadline - time.monotonic()))
        return Exit(self._child.exitstatus, self._child.signalstatus)

    def signal(self, number: int) -> None:
        """Send a signal to the process alone (as a terminal closing sends SIGHUP)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, number)

    def hang_up(self) -> None:
        """Close the terminal, as closing its window does: the kernel hangs the process up
        (SIGHUP). What it writes from then on goes nowhere."""
        self._hung_up.set()
        self._reader.join(timeout=5)
        self._child.ptyproc.fileobj.close()
        self._closed.set()

    def close(self) -> None:
        """Kill the whole process group (the pty made the process its leader), then reap it:
        nothing is left running after a test, whatever happened in it."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self._child.close(force=True)
        self._reader.join(timeout=5)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _plain(raw: bytes) -> str:
    return ANSI.sub(b"", raw).decode("utf-8", "replace").replace("\r\n", "\n")
