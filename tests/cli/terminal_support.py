"""The real `tracker-tui` console script in a pseudo-terminal that is its controlling terminal,
as when a person runs it: prompts read from it, Ctrl-C and Ctrl-D are typed into it, and
closing it hangs the process up (SIGHUP), as closing a terminal window does."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

SCRIPT = Path(sys.executable).with_name("tracker-tui")
CONTROLLING = (
    "import fcntl, os, sys, termios; os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)
"""Run by the child before the script: a session of its own, with the pty as its terminal."""
ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Za-z]|[=>78])")


class Terminal:
    """`tracker-tui ARGS` on a pty of `columns` x `rows`."""

    def __init__(self, *args: str, env: dict[str, str], columns: int = 100, rows: int = 30) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.process = subprocess.Popen(
            [sys.executable, "-c", CONTROLLING, str(SCRIPT), *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={"TERM": "xterm-256color", **env},
            close_fds=True,
        )
        os.close(slave)
        self.raw = b""
        self.started = time.monotonic()

    @property
    def text(self) -> str:
        """What was written so far, escape sequences removed."""
        return ANSI.sub("", self.raw.decode(errors="replace"))

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # EIO: every writer of the pty is gone
            return False
        self.raw += chunk
        return bool(chunk)

    def expect(self, pattern: str, timeout: float = 30.0) -> str:
        """Read until `pattern` (a regular expression) appears in the text; its match."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(pattern, self.text)
            if found:
                return found.group(0)
            if not self._read(0.1) and self.process.poll() is not None:
                break
        raise AssertionError(f"{pattern!r} not seen; the terminal shows:\n{self.text[-3000:]}")

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def signal(self, signum: signal.Signals) -> None:
        self.process.send_signal(signum)

    def hang_up(self) -> None:
        """Close the terminal, as closing its window does: the kernel sends SIGHUP."""
        os.close(self.master)
        self.master = -1

    def wait(self, timeout: float = 30.0) -> int:
        """The exit status, as a shell reports it (128 + N for a signal N not handled)."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            if self.master >= 0:
                self._read(0.1)
            else:
                time.sleep(0.05)
        if self.master >= 0:
            while self._read(0.05) and select.select([self.master], [], [], 0)[0]:
                pass
        code = self.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        return 128 - code if code < 0 else code

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        if self.master >= 0:
            os.close(self.master)
            self.master = -1
