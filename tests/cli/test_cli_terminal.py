"""The console script in a real pseudo-terminal: prompts ended by Ctrl-D or Ctrl-C, a delete
that asks, `sync` saying what it waits for, and a demo ended by a closed terminal or `kill`
that leaves nothing behind (issue 14, defects 8, 9 and 14). The terminal is the suite's one
pty harness, `tests/harness/terminal_screen.py`."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import FAIL_KEYRING, SCRIPT, Loopback, loopback
from terminal_screen import Terminal

from cache import IssueFilter, IssueSort, open_cache


def command(*args: str, env: dict[str, str]) -> Terminal:
    """`tracker-tui ARGS` on a terminal of 100 x 30."""
    return Terminal([str(SCRIPT), *args], env=env, columns=100, rows=30)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loopback]:
    with loopback(tmp_path_factory.mktemp("service"), 12) as running:
        yield running


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A private home and temporary folder; no server or key from the test's environment."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TRACKER_")}
    return {
        **clean,
        "TRACKER_HOME": str(tmp_path / "home"),
        "TMPDIR": str(temp),
        "PYTHON_KEYRING_BACKEND": FAIL_KEYRING,
    }


def footer(shown: str) -> str:
    return shown.split("\n")[-1]


def run_to_end(*args: str, env: dict[str, str]) -> tuple[int, str]:
    """Its exit status, as a shell reports it, and its transcript."""
    with command(*args, env=env) as terminal:
        status = terminal.wait_exit(timeout=60).code
    return status, terminal.transcript()


@pytest.mark.parametrize("how", ["login", "the app"])
@pytest.mark.parametrize(
    ("key", "says"), [("\x04", "cancelled (end of input)"), ("\x03", "interrupted")]
)
def test_ctrl_d_or_ctrl_c_at_a_key_prompt_ends_in_one_line(
    env: dict[str, str], service: Loopback, how: str, key: str, says: str
) -> None:
    """`login` asks for the key; so does the app when TRACKER_SERVER names a server and no
    key is stored for it."""
    if how == "login":
        terminal = command("login", "--server", service.base_url, env=env)
    else:
        terminal = command(env={**env, "TRACKER_SERVER": service.base_url})
    with terminal:
        terminal.expect(r"API key( for \S+ \(kept in memory only\))?: ")
        terminal.burst(key)
        status = terminal.wait_exit().code
    said = terminal.transcript()
    assert status == 130
    assert "Traceback" not in said and "Error" not in said
    assert said.rstrip().endswith(f"tracker-tui: {says}")
    assert not (Path(env["TRACKER_HOME"]) / "config" / "config.toml").exists(), "nothing saved"


def synced(env: dict[str, str], service: Loopback) -> dict[str, str]:
    with_server = {**env, "TRACKER_SERVER": service.base_url, "TRACKER_API_KEY": service.key}
    assert run_to_end("sync", env=with_server)[0] == 0
    return with_server


def issue_title(env: dict[str, str], number: int) -> str | None:
    with open_cache("env", root=Path(env["TRACKER_HOME"]) / "data") as cache:
        found = cache.issue_by_number(number)
        return None if found is None else found.issue.title


@pytest.mark.parametrize(("answer", "status", "kept"), [("n\r", 130, True), ("y\r", 0, False)])
def test_delete_on_a_terminal_asks_first(
    env: dict[str, str], service: Loopback, answer: str, status: int, kept: bool
) -> None:
    with_server = synced(env, service)
    title = issue_title(with_server, 3)
    with command("issues", "delete", "3", "--no-push", env=with_server) as terminal:
        terminal.expect(r"Delete #3 .*\? \[y/N\] ")
        assert f"#3 {title}"[:40] in terminal.transcript()
        terminal.burst(answer)
        assert terminal.wait_exit().code == status
    assert (issue_title(with_server, 3) is not None) is kept


def test_sync_on_a_terminal_says_what_it_waits_for_and_when_it_gives_up(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "stopped").mkdir()
    with loopback(tmp_path / "stopped", 5) as stopped:
        with_server = synced(env, stopped)
        edit = ("issues", "edit", "#2", "--title", "offline", "--no-push")
        assert run_to_end(*edit, env=with_server)[0] == 0
    status, text = run_to_end("sync", "--give-up-after", "8", env=with_server)
    assert status == 4
    assert re.search(r"cannot reach the server \(.*ConnectError.*\): retrying in \d+ s", text)
    assert "(giving up in " in text and "stopping after" in text
    assert "1 write stays queued" in text and "Traceback" not in text


def demo_folders(env: dict[str, str]) -> list[str]:
    return sorted(path.name for path in Path(env["TMPDIR"]).glob("tracker-demo-*"))


@pytest.mark.parametrize("how", ["hang up", "SIGHUP", "SIGTERM"])
def test_a_demo_ended_by_a_signal_leaves_nothing_behind(env: dict[str, str], how: str) -> None:
    with command("demo", "--issues", "20", env=env) as terminal:
        terminal.wait_for_text("#20 ", timeout=90)
        assert len(demo_folders(env)) == 2
        if how == "hang up":
            terminal.hang_up()
        else:
            terminal.signal(signal.Signals[how])
        status = terminal.wait_exit().code
    assert demo_folders(env) == []
    assert list(Path(env["TMPDIR"]).iterdir()) == [], "nothing else left in TMPDIR either"
    assert "Traceback" not in terminal.transcript()
    assert status == 128 + (signal.SIGTERM if how == "SIGTERM" else signal.SIGHUP)


@pytest.mark.parametrize("how", ["SIGHUP", "SIGTERM"])
def test_the_app_ended_by_a_signal_gives_the_terminal_back(
    env: dict[str, str], service: Loopback, how: str
) -> None:
    with_server = {**env, "TRACKER_SERVER": service.base_url, "TRACKER_API_KEY": service.key}
    with command(env=with_server) as terminal:
        terminal.wait_for_text("#12 ", timeout=90)
        terminal.signal(signal.Signals[how])
        status = terminal.wait_exit().code
    assert status == 128 + signal.Signals[how]
    drawn_last = terminal.output().rsplit(b"\x1b[?1049h", 1)[-1]
    assert b"\x1b[?1049l" in drawn_last and b"\x1b[?25h" in drawn_last  # main screen, cursor
    assert "Traceback" not in terminal.transcript()


def test_a_demo_ended_while_it_seeds_leaves_nothing_behind(env: dict[str, str]) -> None:
    with command("demo", "--issues", "20000", env=env) as terminal:
        terminal.expect("Starting the demo service")
        deadline = time.monotonic() + 30
        while not demo_folders(env) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert demo_folders(env), "the demo made no folder to seed in"
        terminal.signal(signal.SIGTERM)
        status = terminal.wait_exit().code
    assert status == 128 + signal.SIGTERM
    assert demo_folders(env) == []
    assert "Traceback" not in terminal.transcript()


def test_a_reader_that_leaves_early_ends_the_command_quietly(
    env: dict[str, str], service: Loopback
) -> None:
    """`tracker-tui issues list | head -1`: the rest of the output has nowhere to go."""
    with_server = synced(env, service)
    with_server.pop("PYTHONUNBUFFERED", None)
    listing = subprocess.Popen(
        [str(SCRIPT), "issues", "list", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=with_server,
    )
    assert listing.stdout is not None and listing.stderr is not None
    listing.stdout.close()
    err = listing.stderr.read()
    listing.stderr.close()
    assert (listing.wait(timeout=60), err) == (128 + signal.SIGPIPE, b"")


def test_the_app_ended_by_a_signal_writes_the_last_keystrokes_of_a_draft(
    env: dict[str, str], service: Loopback
) -> None:
    """Drafts are written at most every 0.4 s while typing; a closed terminal quits the app
    like ctrl+q, so the keys typed just before it are kept too."""
    with_server = synced(env, service)
    typed = "closing the laptop now"
    with command(env=with_server) as terminal:
        terminal.wait_for_text("#12 ", timeout=90)
        terminal.burst("g\r")
        # The issue's screen, its footer redrawn with its keys (a frame may still show the
        # list's), then `c`: the comment box takes the keys once the footer drops them.
        terminal.wait_for(
            lambda shown: "No comments yet" in shown and "s Status" in footer(shown),
            what="the issue's screen",
        )
        terminal.burst("c")
        terminal.wait_for(
            lambda shown: "s Status" not in footer(shown) and "^q Quit" in footer(shown),
            what="the comment box focused",
        )
        terminal.burst(typed)
        terminal.wait_for_text(typed)  # on screen, and at most 0.4 s from being written
        terminal.signal(signal.SIGHUP)
        status = terminal.wait_exit().code
    assert status == 128 + signal.SIGHUP
    with open_cache("env", root=Path(with_server["TRACKER_HOME"]) / "data") as cache:
        rows = cache.window(IssueFilter(), IssueSort(), 0, 12)
        drafts = [cache.draft(f"comment:{row.id}") for row in rows]
    assert [draft for draft in drafts if draft] == [{"body": typed}]
