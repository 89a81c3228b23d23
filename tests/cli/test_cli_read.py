"""The read half of the command line over loopback: sync, issues, projects, status, doctor."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import Cli, Loopback, loopback, make_cli


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loopback]:
    with loopback(tmp_path_factory.mktemp("service"), 180) as running:
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


@pytest.fixture
def synced(cli: Cli) -> Cli:
    status, _, err = cli.run("sync")
    assert status == 0, err
    return cli


def test_sync_prints_progress_lines_and_one_summary(cli: Cli) -> None:
    status, out, err = cli.run("sync")
    assert status == 0
    assert out.count("\n") == 1 and "received" in out and "requests" in out
    assert "issues: 100/" in err or "issues: 180/" in err  # plain lines: stderr is no terminal


def test_sync_json_is_parseable(cli: Cli) -> None:
    status, out, err = cli.run("sync", "--json")
    assert status == 0 and err == ""
    report = json.loads(out)
    assert report["pull"]["resources"]["issues"]["inserted"] == 180
    assert report["push"]["done"] == 0
    pushed = report["push"]
    assert (pushed["stopped"], pushed["key_refused"], pushed["unreachable"]) == (None, None, False)


def test_issues_list_reads_the_cache_with_filters(synced: Cli) -> None:
    status, out, _ = synced.run("issues", "list", "--json", "--limit", "500")
    rows = json.loads(out)
    assert status == 0 and len(rows) == 180
    assert set(rows[0]) >= {"id", "number", "title", "status", "updated_at", "sync_state"}
    status, out, _ = synced.run("issues", "list", "--status", "done", "--json", "--limit", "500")
    done = json.loads(out)
    assert done and all(row["status"] == "done" for row in done) and len(done) < 180
    status, out, _ = synced.run("issues", "list", "--sort", "number", "--limit", "3")
    lines = out.splitlines()
    assert lines[0].startswith("ID") and lines[1].startswith("#1 ") and len(lines) == 4


def test_issues_list_search_takes_the_apps_syntax(synced: Cli) -> None:
    status, out, _ = synced.run(
        "issues", "list", "--search", "status:done priority:high,urgent", "--json", "--limit", "500"
    )
    rows = json.loads(out)
    assert status == 0 and rows
    assert all(row["status"] == "done" and row["priority"] in ("high", "urgent") for row in rows)
    status, out, _ = synced.run("issues", "list", "-q", "#7", "--json")
    assert status == 0 and [row["number"] for row in json.loads(out)] == [7]
    status, out, err = synced.run("issues", "list", "--search", "status:tood")
    assert status == 2 and out == ""
    assert "status:tood is not a status; use one of backlog, todo" in err


def test_issues_list_rejects_an_unknown_sort(synced: Cli) -> None:
    status, out, err = synced.run("issues", "list", "--sort", "color")
    assert status == 2 and out == "" and err.count("\n") == 1 and "color" in err


def test_issues_show_by_number_or_id(synced: Cli) -> None:
    status, out, _ = synced.run("issues", "show", "#7", "--json")
    record = json.loads(out)
    assert status == 0 and record["number"] == 7 and record["sync_state"] == "synced"
    assert isinstance(record["comments"], list)
    for ref in ("7", record["id"]):
        status, out, _ = synced.run("issues", "show", ref, "--json")
        assert json.loads(out)["id"] == record["id"]
    status, out, _ = synced.run("issues", "show", "#7")
    assert out.startswith(f"#7 {record['title']}")
    status, out, err = synced.run("issues", "show", "#9999")
    assert status == 2 and err.count("\n") == 1


def test_reads_work_offline(synced: Cli) -> None:
    synced.use("http://127.0.0.1:9/v1", None)  # nothing listens there, and no key
    status, out, err = synced.run("projects", "list", "--json")
    assert status == 0, err
    assert len(json.loads(out)) == 6
    status, out, err = synced.run("issues", "list", "--limit", "2")
    assert status == 0 and len(out.splitlines()) == 3


def test_status_reports_the_cache(synced: Cli) -> None:
    status, out, _ = synced.run("status", "--json")
    state = json.loads(out)
    assert status == 0
    assert state["resources"]["issues"]["records"] == 180
    assert state["pending_writes"] == 0
    assert state["last_sync"]["requests"] > 0
    assert state["plan"] == "enterprise" and state["features"]["keyset_order"] is True
    assert 0 < state["limits_left"]["minute"] < 1000
    status, out, _ = synced.run("status")
    assert "pending edits  0" in out


def test_status_lists_the_records_a_pull_could_not_read(synced: Cli) -> None:
    """A record the pull skipped (sync.remembered: tests/sync/test_pull_unreadable puts
    one there from a real pull) is listed with its resource, id and why, and in the JSON."""
    from sync.models import SkippedRecord
    from sync.remembered import note_unreadable
    from tracker_tui.commands.read import open_profile_cache

    reason = "updated_at: Value error, Invalid isoformat string: 'yesterday'"
    with open_profile_cache(argparse.Namespace(profile=None)) as cache:
        note_unreadable(cache, "issues", [SkippedRecord(4, "iss_unread", reason, {})], [], now=1.0)
    status, out, _ = synced.run("status", "--json")
    assert status == 0
    assert json.loads(out)["unreadable"] == [
        {"resource": "issues", "id": "iss_unread", "reason": reason, "at": 1.0}
    ]
    status, out, _ = synced.run("status")
    assert "unreadable     1 records the server sent could not be read" in out
    assert f"issues iss_unread: {reason}" in out


def test_doctor_checks_cache_and_server(synced: Cli) -> None:
    status, out, _ = synced.run("doctor")
    assert status == 0
    assert "[ok   ] server" in out and "[ok   ] cache" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["login"], ["logout"], ["profiles"], ["status"], ["doctor"], ["sync"],
        ["issues", "list"], ["issues", "show"], ["projects", "list"], ["users"],
        ["issues", "edit"], ["issues", "delete"], ["issues", "bulk-edit"],
    ],
)  # fmt: skip
def test_every_command_explains_itself(cli: Cli, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.run(*argv, "--help")
    out, _ = cli.capsys.readouterr()
    assert done.value.code == 0
    assert "usage: tracker-tui" in out and len(out.splitlines()) > 4


def test_issues_list_resolves_project_keys_and_user_names(synced: Cli) -> None:
    status, out, _ = synced.run("projects", "list", "--json")
    project = json.loads(out)[0]
    status, out, _ = synced.run(
        "issues", "list", "--project", project["key"].lower(), "--json", "--limit", "500"
    )
    rows = json.loads(out)
    assert status == 0 and rows and all(row["project_id"] == project["id"] for row in rows)
    status, out, _ = synced.run("issues", "list", "--assignee", "none", "--json", "--limit", "500")
    assert all(row["assignee"] is None for row in json.loads(out))
    status, out, _ = synced.run("issues", "list", "--assignee", "Ada Lovelace", "--json")
    ada = json.loads(out)
    assert ada and len({row["assignee"] for row in ada}) == 1
