"""`tracker-tui inbox` and `watch` against the reference service on a loopback port: a
colleague's edit made through the service is listed, ours is not; `watch --json` prints a line
for an edit made while it runs and ends on Ctrl-C (SIGINT) with status 130."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import httpx
import pytest
from cli_support import FAIL_KEYRING, SCRIPT, Cli, Loopback, loopback, make_cli

from server.keys import create_key
from tracker_tui.exit_codes import Exit


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Loopback]:
    folder = tmp_path / "service"
    folder.mkdir()
    with loopback(folder, 6) as running:
        yield running


@pytest.fixture
def cli(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    service: Loopback,
) -> Cli:
    made = make_cli(tmp_path, capsys, monkeypatch)
    made.use(service.base_url, service.key)
    return made


def colleague(service: Loopback, method: str, path: str, body: dict[str, Any]) -> None:
    """Someone else, with a key of their own, writes through the service's API."""
    key = create_key(service.db, "Acme", "colleague", user="Grace Hopper")
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=service.base_url, headers=headers, timeout=10) as client:
        client.request(method, path, json=body).raise_for_status()


def colleague_edit(service: Loopback, issue_id: str, change: dict[str, Any]) -> None:
    colleague(service, "PATCH", f"/issues/{issue_id}", change)


def mine(cli: Cli, number: int) -> str:
    """Assign issue `number` to me (our own edit, sent at once); its id."""
    status, _, err = cli.run(
        "issues", "edit", f"#{number}", "--assignee", "me", "--priority", "low"
    )
    assert status == Exit.OK, err
    status, out, _ = cli.run("issues", "show", f"#{number}", "--json")
    shown = json.loads(out)
    return str(shown["id"])


def test_a_colleagues_edit_is_in_the_inbox_ours_is_not(cli: Cli, service: Loopback) -> None:
    assert cli.run("sync")[0] == Exit.OK
    assert json.loads(cli.run("inbox", "--json")[1]) == []  # a first load is not news
    issue_id = mine(cli, 2)
    colleague_edit(service, issue_id, {"priority": "urgent", "title": "Renamed by Grace"})
    assert cli.run("sync")[0] == Exit.OK
    status, out, _ = cli.run("inbox", "--json")
    assert status == Exit.OK
    changes = json.loads(out)
    assert sorted((c["issue"]["number"], c["field"], c["new"]) for c in changes) == [
        (2, "priority", "urgent"),
        (2, "title", "Renamed by Grace"),
    ]
    texts = {c["text"] for c in changes}
    assert "priority Low → Urgent" in texts and all(c["who"] is None for c in changes)
    status, out, _ = cli.run("inbox")
    assert "#2 Renamed by Grace  (2 new)" in out and "priority Low → Urgent" in out
    assert cli.run("inbox", "--mark-read")[0] == Exit.OK
    assert json.loads(cli.run("inbox", "--json")[1]) == []
    assert len(json.loads(cli.run("inbox", "--json", "--all")[1])) == 2


def test_an_issue_that_is_not_mine_stays_out_of_the_inbox(cli: Cli, service: Loopback) -> None:
    assert cli.run("sync")[0] == Exit.OK
    assert cli.run("issues", "edit", "#3", "--assignee", "none", "--priority", "low")[0] == 0
    other = json.loads(cli.run("issues", "show", "#3", "--json")[1])
    colleague_edit(service, other["id"], {"priority": "urgent"})
    assert cli.run("sync")[0] == Exit.OK
    assert json.loads(cli.run("inbox", "--json")[1]) == []


def test_a_colleagues_comment_on_my_issue_is_in_the_inbox(cli: Cli, service: Loopback) -> None:
    assert cli.run("sync")[0] == Exit.OK
    issue_id = mine(cli, 5)
    colleague(service, "POST", "/comments", {"issue_id": issue_id, "body": "Seen on Safari too."})
    assert cli.run("issues", "comment", "#5", "--body", "Thanks, on it.")[0] == Exit.OK
    assert cli.run("sync")[0] == Exit.OK
    [change] = json.loads(cli.run("inbox", "--json")[1])
    assert (change["kind"], change["new"], change["who"]["name"]) == (
        "comment",
        "Seen on Safari too.",
        "Grace Hopper",
    )
    assert change["text"] == "Grace Hopper commented: Seen on Safari too."


def test_watch_with_a_refused_key_ends_with_one_line(cli: Cli, service: Loopback) -> None:
    cli.use(service.base_url, "trk_not_a_key")
    status, out, err = cli.run("watch", "--interval", "0.2")
    assert status == Exit.FAILED and out == ""
    assert err.splitlines()[-1].startswith("tracker-tui: the server refused the API key")


class Lines:
    """The lines a stream of a process writes, read on a thread of their own, so waiting for
    the next one never blocks on what the stream's buffer already holds."""

    def __init__(self, stream: IO[str] | None) -> None:
        assert stream is not None
        self._lines: queue.Queue[str] = queue.Queue()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line)

    def next(self, timeout: float) -> str:
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line within {timeout} s") from None

    def rest(self) -> str:
        self._thread.join(timeout=10)
        found = []
        while not self._lines.empty():
            found.append(self._lines.get())
        return "".join(found)


def test_watch_prints_an_edit_made_while_it_runs_and_ends_on_ctrl_c(
    cli: Cli, service: Loopback
) -> None:
    assert cli.run("sync")[0] == Exit.OK
    issue_id = mine(cli, 4)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("TRACKER_")},
        "TRACKER_HOME": str(cli.home),
        "TRACKER_SERVER": service.base_url,
        "TRACKER_API_KEY": service.key,
        "PYTHON_KEYRING_BACKEND": FAIL_KEYRING,
    }
    with subprocess.Popen(
        [str(SCRIPT), "watch", "--json", "--interval", "0.3"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        out, err = Lines(process.stdout), Lines(process.stderr)
        try:
            time.sleep(1.0)  # let it start: an edit made before its first pull counts as well
            colleague_edit(service, issue_id, {"priority": "high"})
            line = json.loads(out.next(timeout=60))
            assert (line["issue"]["number"], line["field"], line["old"], line["new"]) == (
                4,
                "priority",
                "low",
                "high",
            )
            assert line["text"] == "priority Low → High" and line["kind"] == "field"
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=30) == Exit.INTERRUPTED
            said = err.rest()
        finally:
            if process.poll() is None:
                process.kill()
    assert "Traceback" not in said and said.rstrip().endswith("tracker-tui: interrupted")


def test_watch_keeps_watching_a_server_that_cannot_be_reached(cli: Cli) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("TRACKER_")},
        "TRACKER_HOME": str(cli.home),
        "TRACKER_SERVER": "http://127.0.0.1:9/v1",  # the discard port: nothing answers
        "TRACKER_API_KEY": "trk_any",
        "PYTHON_KEYRING_BACKEND": FAIL_KEYRING,
    }
    with subprocess.Popen(
        [str(SCRIPT), "watch", "--interval", "0.3"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        err = Lines(process.stderr)
        try:
            said = [err.next(timeout=60) for _ in range(2)]
            assert said[0].startswith("watching for changes")
            assert "cannot reach the server" in said[1] and "still watching" in said[1]
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=30) == Exit.INTERRUPTED
        finally:
            if process.poll() is None:
                process.kill()
