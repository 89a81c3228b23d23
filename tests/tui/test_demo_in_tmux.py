"""`tracker-tui demo` as a person runs it: a real terminal (tmux), real keys, the real screen.

Pilot tests drive the app from inside; this one checks the whole path a new user takes — the
console script, the embedded service, the first sync, search, quitting — from outside.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

TMUX = shutil.which("tmux")
SCRIPT = Path(sys.executable).with_name("tracker-tui")
DEADLINE = 60.0

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed on this machine")


@pytest.fixture
def session(tmp_path: Path) -> Iterator[str]:
    name = f"tracker-test-{uuid.uuid4().hex[:8]}"
    done = tmp_path / "exit-status"
    command = f"TRACKER_HOME={tmp_path} {SCRIPT} demo --issues 150; echo $? > {done}; sleep 30"
    tmux("new-session", "-d", "-s", name, "-x", "140", "-y", "40", command)
    try:
        yield name
    finally:
        subprocess.run([str(TMUX), "kill-session", "-t", name], capture_output=True, check=False)


def tmux(*args: str) -> str:
    return subprocess.run(
        [str(TMUX), *args], capture_output=True, text=True, check=True, timeout=10
    ).stdout


def screen(session: str) -> str:
    return tmux("capture-pane", "-p", "-t", session)


def wait_for(session: str, condition: Callable[[str], bool]) -> str:
    deadline = time.monotonic() + DEADLINE
    while True:
        shown = screen(session)
        if condition(shown):
            return shown
        assert time.monotonic() < deadline, f"the screen never got there:\n{shown}"
        time.sleep(0.2)


def test_the_demo_syncs_searches_and_quits(session: str, tmp_path: Path) -> None:
    shown = wait_for(session, lambda text: "150 issues" in text and "online" in text)
    assert "Traceback" not in shown

    tmux("send-keys", "-t", session, "/")
    # Typed before the search field has focus, "c" would open the new-issue form.
    wait_for(session, lambda text: "Search titles" in text)
    tmux("send-keys", "-t", session, "-l", "crash")
    # The header shows the query before the worker's rows arrive: wait for both.
    shown = wait_for(session, lambda text: "“crash”" in text and "Crash" in text)
    assert "Traceback" not in shown

    tmux("send-keys", "-t", session, "C-q")
    status = tmp_path / "exit-status"
    deadline = time.monotonic() + DEADLINE
    while not status.exists():
        assert time.monotonic() < deadline, screen(session)
        time.sleep(0.2)
    assert status.read_text().strip() == "0"
