"""The write half of the command line against the reference service on a loopback port:
local validation before anything is queued, queue-then-push, stdin ids, outbox, conflicts."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from accounts.credentials import resolve_profile
from accounts.secret import Secret
from cache import EntryState, Resource, open_cache
from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.client import ApiClient
from sync.engine import sync_once
from sync.session import open_session
from tracker_tui.cli import main


@dataclass
class Setup:
    base_url: str
    key: str
    capsys: pytest.CaptureFixture[str]

    def run(self, *argv: str) -> tuple[int, str, str]:
        status = main(list(argv))
        out, err = self.capsys.readouterr()
        return status, out, err

    def server(self, method: str, path: str, body: dict[str, object] | None = None) -> object:
        async def call() -> object:
            async with ApiClient(self.base_url, Secret(self.key)) as client:
                if method == "GET":
                    return (await client.get_issue(path)).value.raw
                if method == "PATCH":
                    return (await client.update_issue(path, body or {})).value.raw
                if method == "DELETE":
                    await client.delete_issue(path)
                    return None
                page = await client.list_issues(per_page=100)
                return [issue.raw for issue in page.value.data]

        return asyncio.run(call())

    def issues(self) -> list[dict[str, object]]:
        found = self.server("LIST", "")
        assert isinstance(found, list)
        return found

    def issue(self, issue_id: str) -> dict[str, object]:
        found = self.server("GET", issue_id)
        assert isinstance(found, dict)
        return found

    def outbox_states(self) -> list[EntryState]:
        with open_cache(resolve_profile(None).cache_name) as cache:
            return [entry.state for entry in cache.outbox()]


@pytest.fixture
def setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Setup]:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 6, plan="enterprise")
    with ServiceThread(create_app(db, window_seconds=1.0)) as service:
        monkeypatch.setenv("TRACKER_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("TRACKER_SERVER", service.base_url)
        monkeypatch.setenv("TRACKER_API_KEY", key)

        async def first_sync() -> None:
            with open_cache(resolve_profile(None).cache_name) as cache:
                async with open_session(resolve_profile(None), cache=cache) as session:
                    await sync_once(session)

        asyncio.run(first_sync())
        yield Setup(service.base_url, key, capsys)


def test_create_is_queued_pushed_and_prints_the_server_id(setup: Setup) -> None:
    status, out, err = setup.run(
        "issues", "create", "--title", "From the shell", "--priority", "high", "--label", "cli"
    )
    assert (status, err) == (0, "")
    issue = setup.issue(out.strip())
    assert (issue["title"], issue["priority"], issue["labels"]) == (
        "From the shell",
        "high",
        ["cli"],
    )
    assert setup.outbox_states() == [EntryState.DONE]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["issues", "create", "--title", "   "], "title is required"),
        (["issues", "create", "--title", "x" * 256], "At most 255"),
        (["issues", "create", "--title", "t", "--priority", "asap"], "--priority 'asap'"),
        (["issues", "create", "--title", "t", "--project", "NOPE"], "no project 'NOPE'"),
        (["issues", "edit", "#999999", "--title", "t"], "no issue #999999"),
        (["issues", "comment", "#1", "--body", "  "], "--body"),
    ],
)
def test_bad_input_is_refused_before_the_queue(setup: Setup, argv: list[str], says: str) -> None:
    status, out, err = setup.run(*argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and says in err
    assert setup.outbox_states() == []


def test_a_forbidden_status_move_names_the_allowed_ones(setup: Setup) -> None:
    issue_id = str(setup.issues()[0]["id"])
    setup.server("PATCH", issue_id, {"status": "canceled"})
    with open_cache(resolve_profile(None).cache_name) as cache:
        cache.apply_page(Resource.ISSUES, [setup.issue(issue_id)])
    status, _, err = setup.run("issues", "edit", issue_id, "--status", "done")
    assert status == 2 and "cannot move: Canceled → Done not allowed; allowed: todo" in err
    assert setup.outbox_states() == []


def test_no_push_queues_and_the_next_write_sends_both(setup: Setup) -> None:
    first, second = (str(i["id"]) for i in setup.issues()[:2])
    status, _, _ = setup.run("issues", "edit", first, "--title", "offline edit", "--no-push")
    assert status == 0 and setup.issue(first)["title"] != "offline edit"
    status, out, _ = setup.run("outbox", "--json")
    [row] = [json.loads(line) for line in out.splitlines()]
    assert (row["state"], row["record_id"], row["changes"]) == (
        "pending",
        first,
        {"title": "offline edit"},
    )
    status, _, err = setup.run("issues", "edit", second, "--priority", "urgent")
    assert (status, err) == (0, "")
    assert setup.issue(first)["title"] == "offline edit"
    assert setup.issue(second)["priority"] == "urgent"


def test_bulk_edit_reads_plain_and_json_ids_from_stdin(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [str(i["id"]) for i in setup.issues()[:4]]
    lines = [ids[0], json.dumps({"id": ids[1], "title": "x"}), json.dumps([{"id": ids[2]}]), ""]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines)))
    status, out, err = setup.run("issues", "bulk-edit", "-", ids[3], "--label", "triaged")
    assert (status, err) == (0, "") and out.strip() == "4 of 4 issues changed"
    assert all(setup.issue(i)["labels"] == ["triaged"] for i in ids)


def test_delete_and_comment(setup: Setup) -> None:
    first, second = (str(i["id"]) for i in setup.issues()[:2])
    assert setup.run("issues", "delete", first, "--yes")[0] == 0
    assert first not in {i["id"] for i in setup.issues()}
    status, out, _ = setup.run("issues", "comment", second, "--body", "looks good")
    assert status == 0 and out.startswith("cmt_")


def test_a_conflict_is_listed_and_settled_from_the_shell(setup: Setup) -> None:
    first, second = (str(i["id"]) for i in setup.issues()[:2])
    setup.run("issues", "edit", first, "--title", "mine", "--no-push")
    setup.server("PATCH", first, {"title": "theirs"})
    status, _, err = setup.run("issues", "edit", second, "--title", "unrelated")
    assert status == 0
    status, out, _ = setup.run("conflicts", "--json")
    [conflict] = [json.loads(line) for line in out.splitlines()]
    assert (conflict["field"], conflict["mine"], conflict["theirs"]) == ("title", "mine", "theirs")
    status, _, err = setup.run("conflicts", "resolve", str(conflict["id"]), "--mine")
    assert (status, err) == (0, "")
    assert setup.issue(first)["title"] == "mine"
    assert setup.run("conflicts")[1].strip() == "no conflicts"


def test_a_write_the_server_refuses_fails_and_can_be_discarded(setup: Setup) -> None:
    issue_id = str(setup.issues()[0]["id"])
    setup.server("DELETE", issue_id)
    status, _, err = setup.run("issues", "edit", issue_id, "--title", "too late")
    assert status == 3 and "failed" in err and err.count("\n") == 1
    status, out, _ = setup.run("outbox", "--json")
    [row] = [json.loads(line) for line in out.splitlines()]
    assert row["state"] == "failed" and row["error"]
    assert setup.run("outbox", "retry", str(row["id"]))[0] == 3
    assert setup.run("outbox", "discard", str(row["id"]))[0] == 0
    assert setup.run("outbox")[1].startswith("the outbox is empty")
