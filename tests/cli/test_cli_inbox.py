"""`tracker-tui inbox` and `watch` against the reference service on a loopback port: a
colleague's edit made through the service is listed, ours is not; `watch --json` prints a line
for an edit made while it runs and ends on Ctrl-C (SIGINT) with status 130."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def colleague_edit(service: Loopback, issue_id: str, change: dict[str, Any]) -> None:
    """Someone else, with a key of their own, edits an issue through the service's API."""
    key = create_key(service.db, "Acme", "colleague", user="Grace Hopper")
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=service.base_url, headers=headers, timeout=10) as client:
        client.patch(f"/issues/{issue_id}", json=change).raise_for_status()


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


def read_line(process: subprocess.Popen[str], timeout: float) -> str:
    """The next line of the process's stdout, waiting at most `timeout` seconds."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as chooser:
        chooser.register(process.stdout, selectors.EVENT_READ)
        if not chooser.select(timeout):
            raise AssertionError(f"no line within {timeout} s")
        return process.stdout.readline()


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
        try:
            time.sleep(1.0)  # let it start: an edit made before its first pull counts as well
            colleague_edit(service, issue_id, {"priority": "high"})
            line = json.loads(read_line(process, timeout=60))
            assert (line["issue"]["number"], line["field"], line["old"], line["new"]) == (
                4,
                "priority",
                "low",
                "high",
            )
            assert line["text"] == "priority Low → High" and line["kind"] == "field"
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=30) == Exit.INTERRUPTED
            assert process.stderr is not None
            said = process.stderr.read()
        finally:
            if process.poll() is None:
                process.kill()
    assert "Traceback" not in said and said.rstrip().endswith("tracker-tui: interrupted")
