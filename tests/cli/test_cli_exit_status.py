"""Exit statuses that say what happened (issue 14, defect 8): one table, in the code and the
README; `sync` and the write commands against a server that is down, refuses writes, or
conflicts; the wait for the rate limit said on a terminal."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_support import FAIL_KEYRING, SCRIPT, Cli, Loopback, loopback, make_cli
from terminal_screen import Terminal

from accounts.secret import Secret
from cache import open_cache
from sync.client import ApiClient
from sync.push.lock import PushLock
from tracker_tui.exit_codes import Exit

README = Path(__file__).resolve().parents[2] / "README.md"


@dataclass
class Stoppable:
    """The reference service, which a test may stop (its port then refuses connections)."""

    service: Loopback
    stack: ExitStack

    def stop(self) -> None:
        self.stack.close()


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Stoppable]:
    (tmp_path / "service").mkdir()
    with ExitStack() as stack:
        yield Stoppable(stack.enter_context(loopback(tmp_path / "service", 8)), stack)


@pytest.fixture
def service(running: Stoppable) -> Loopback:
    return running.service


@pytest.fixture
def cli(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    service: Loopback,
) -> Cli:
    made = make_cli(tmp_path, capsys, monkeypatch)
    made.use(service.base_url, service.key)
    status, _, err = made.run("sync")
    assert status == 0, err
    return made


async def server_call(service: Loopback, method: str, number: int, **body: object) -> None:
    async with ApiClient(service.base_url, Secret(service.key)) as client:
        page = await client.list_issues(per_page=100)
        [issue] = [i for i in page.value.data if i.raw.get("number") == number]
        if method == "DELETE":
            await client.delete_issue(issue.id)
        else:
            await client.update_issue(issue.id, body)


def test_the_readme_table_is_the_table_of_the_code() -> None:
    text = README.read_text()
    section = text[text.index("## Exit status") :]
    rows = re.findall(r"^\| `(\d+)` \| ([a-z ]+) \|", section, flags=re.MULTILINE)
    assert {(int(code), name) for code, name in rows} == {
        (status.value, status.name.lower().replace("_", " ")) for status in Exit
    }


def test_sync_with_writes_queued_and_the_server_down_exits_offline_in_bounded_time(
    cli: Cli, running: Stoppable
) -> None:
    status, _, _ = cli.run("issues", "edit", "#2", "--title", "offline", "--no-push")
    assert status == Exit.OK
    running.stop()
    started = time.monotonic()
    status, out, err = cli.run("sync", "--give-up-after", "2")
    took = time.monotonic() - started
    assert status == Exit.OFFLINE, (out, err)
    assert took < 15, took
    assert out.startswith("sync stopped: cannot reach the server (")
    assert "ConnectError" in out.splitlines()[0] and "; stopped retrying after " in out
    assert "1 write stays queued" in out and "the next `tracker-tui sync` sends them" in out


def test_a_write_with_the_server_down_stays_queued_and_says_so(
    cli: Cli, running: Stoppable
) -> None:
    running.stop()
    status, out, err = cli.run("issues", "edit", "#3", "--priority", "urgent")
    assert status == Exit.OFFLINE
    assert out.strip() == "#3 change queued for the next sync"
    assert err.startswith("tracker-tui: edit of #3 stays queued (cannot reach the server")
    assert err.count("\n") == 1


def test_sync_names_refused_writes_and_conflicts_and_exits_partly_done(
    cli: Cli, service: Loopback
) -> None:
    cli.run("issues", "edit", "#4", "--title", "edited here", "--no-push")
    cli.run("issues", "edit", "#5", "--title", "mine", "--no-push")
    asyncio.run(server_call(service, "DELETE", 4))
    asyncio.run(server_call(service, "PATCH", 5, title="theirs"))
    status, out, err = cli.run("sync")
    assert status == Exit.PARTLY_DONE, (out, err)
    lines = out.splitlines()
    assert any(line.startswith("failed: edit of #4: ") for line in lines), out
    assert any(
        re.fullmatch(r"conflict: edit of #5: title \(conflict \d+\)", line) for line in lines
    ), out
    assert "conflicts resolve" in out and "outbox retry" in out
    status, out, _ = cli.run("sync", "--json")
    report = json.loads(out)
    assert status == Exit.PARTLY_DONE
    assert len(report["failed"]) == 1 and [c["field"] for c in report["conflicts"]] == ["title"]


def test_a_sync_while_another_process_pushes_pulls_and_says_why_writes_wait(
    cli: Cli, service: Loopback
) -> None:
    """Another pusher holds the profile's push lock: the sync pulls all the same, its write
    stays queued (offline), and the JSON says why in the words it always had."""
    cli.run("issues", "edit", "#6", "--title", "queued", "--no-push")
    with open_cache("env", root=cli.home / "data") as cache, PushLock(cache.path) as other:
        assert other.acquired
        status, out, _ = cli.run("sync", "--json")
    report = json.loads(out)
    assert status == Exit.OFFLINE and report["queued"] == 1
    pushed = report["push"]
    assert pushed["stopped"] == "another process is sending this profile's outbox"
    assert (pushed["key_refused"], pushed["unreachable"]) == (None, False)
    assert report["pull"] is not None


def test_a_refused_key_with_writes_queued_fails_in_one_line(cli: Cli, service: Loopback) -> None:
    cli.run("issues", "edit", "#2", "--title", "queued", "--no-push")
    cli.use(service.base_url, "trk_" + "q" * 40)
    status, out, err = cli.run("sync")
    assert status == Exit.FAILED and out == ""
    assert err.splitlines()[-1].startswith("tracker-tui: the server refused the API key")
    assert "Traceback" not in err


def test_no_key_with_writes_queued_fails_rather_than_offline(cli: Cli, service: Loopback) -> None:
    cli.run("issues", "edit", "#2", "--title", "queued", "--no-push")
    cli.use(service.base_url, None)
    status, out, err = cli.run("sync")
    assert status == Exit.FAILED and out == "" and "no API key" in err


def test_a_clean_sync_is_ok(cli: Cli) -> None:
    status, out, _ = cli.run("sync")
    assert status == Exit.OK and out.count("\n") == 1


def test_sync_on_a_terminal_says_it_waits_for_the_rate_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Free workspace whose minute is spent (60 requests logged 45 s ago): the sync waits
    for the window to move, and says so instead of sitting silent. (At 55 s ago, a sync that
    took over 5 s to start on a loaded machine found the minute free again.)"""
    (tmp_path / "free").mkdir()
    with loopback(tmp_path / "free", 3, plan="free") as free:
        cli = make_cli(tmp_path, capsys, monkeypatch)
        cli.use(free.base_url, free.key)
        assert cli.run("sync")[0] == Exit.OK
        with open_cache("env", root=cli.home / "data") as cache:
            spent = time.time() - 45
            for _ in range(60):
                assert cache.reserve_request(spent, "other", [])
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("TRACKER_")},
            "TRACKER_HOME": str(cli.home),
            "TRACKER_SERVER": free.base_url,
            "TRACKER_API_KEY": free.key,
            "PYTHON_KEYRING_BACKEND": FAIL_KEYRING,
        }
        with Terminal([str(SCRIPT), "sync"], env=env, columns=100, rows=30) as terminal:
            terminal.expect(r"waiting for the rate limit, \d+ s")
            assert terminal.wait_exit(timeout=60).code == Exit.OK
    assert "received" in terminal.transcript()


@pytest.mark.parametrize(
    "argv",
    [
        ["outbox", "retry", "99"],
        ["outbox", "discard", "99"],
        ["conflicts", "resolve", "99", "--mine"],
    ],
)
def test_a_number_that_names_nothing_is_a_usage_error(cli: Cli, argv: list[str]) -> None:
    status, out, err = cli.run(*argv)
    assert status == Exit.USAGE and out == "" and err.count("\n") == 1 and "99" in err


@pytest.mark.parametrize(("stop", "status"), [("\x03", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_sync_stopped_while_it_waits_ends_cleanly(
    cli: Cli, running: Stoppable, stop: str, status: int
) -> None:
    assert cli.run("issues", "edit", "#2", "--title", "queued", "--no-push")[0] == Exit.OK
    running.stop()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("TRACKER_")},
        "TRACKER_HOME": str(cli.home),
        "TRACKER_SERVER": running.service.base_url,
        "TRACKER_API_KEY": running.service.key,
        "PYTHON_KEYRING_BACKEND": FAIL_KEYRING,
    }
    with Terminal([str(SCRIPT), "sync"], env=env, columns=100, rows=30) as terminal:
        terminal.expect("retrying in")
        if stop.startswith("SIG"):
            terminal.signal(signal.Signals[stop])
        else:
            terminal.burst(stop)
        assert terminal.wait_exit().code == status
    said = terminal.transcript()
    ended = "interrupted" if status == 130 else f"ended by {stop}"
    assert "Traceback" not in said
    assert said.rstrip().endswith(f"tracker-tui: {ended}")
    with open_cache("env", root=cli.home / "data") as cache:
        assert [entry.changes for entry in cache.outbox()] == [{"title": "queued"}]
