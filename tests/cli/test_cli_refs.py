"""What a user types for issues, users and values, and what they read back (issue 14,
defects 11-14 and 20; issue 15's `wontfix`): one resolver for `42`, `#42` and ids; `me` and
names for `--assignee`; values checked alike; `--sort -priority` urgent first; a bulk edit
that applies what the workflow allows and names the rest; no internal id where a readable
one exists."""

from __future__ import annotations

import asyncio
import io
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import Cli, Loopback, loopback, make_cli

from accounts.secret import Secret
from cache import Resource, open_cache
from sync.client import ApiClient
from tracker_tui.exit_codes import Exit

ID = re.compile(r"\b(iss|usr|prj)_[0-9a-f]{6,}")


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Loopback]:
    (tmp_path / "service").mkdir()
    with loopback(tmp_path / "service", 12) as running:
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
    status, _, err = made.run("sync")
    assert status == 0, err
    return made


def on_server(service: Loopback) -> dict[int, dict[str, object]]:
    async def listing() -> dict[int, dict[str, object]]:
        async with ApiClient(service.base_url, Secret(service.key)) as client:
            page = await client.list_issues(per_page=100)
            return {int(str(i.raw["number"])): i.raw for i in page.value.data}

    return asyncio.run(listing())


def users(cli: Cli) -> dict[str, str]:
    status, out, _ = cli.run("users", "--json")
    assert status == 0
    return {user["name"]: user["id"] for user in json.loads(out)}


def test_edit_and_bulk_edit_take_a_number_like_show(cli: Cli, service: Loopback) -> None:
    status, out, err = cli.run("issues", "edit", "4", "--title", "by bare number")
    assert (status, err) == (Exit.OK, "") and out.strip() == "#4 changed"
    status, _, err = cli.run("issues", "edit", "#5", "--title", "by #number")
    assert (status, err) == (Exit.OK, "")
    six = str(on_server(service)[6]["id"])
    status, out, err = cli.run("issues", "bulk-edit", "3", "#7", six, "--label", "triaged")
    assert (status, err) == (Exit.OK, "") and out.strip() == "3 of 3 issues changed"
    server = on_server(service)
    assert (server[4]["title"], server[5]["title"]) == ("by bare number", "by #number")
    assert all(server[n]["labels"] == ["triaged"] for n in (3, 6, 7))


def test_an_issue_created_offline_is_found_by_its_temporary_id(cli: Cli) -> None:
    status, local, _ = cli.run("issues", "create", "--title", "made offline", "--no-push")
    assert status == Exit.OK and local.strip().startswith("local_")
    status, out, err = cli.run("issues", "edit", local.strip(), "--priority", "high", "--no-push")
    assert status == Exit.OK, err
    assert out.strip() == "new issue 'made offline' change queued for the next sync"
    status, out, _ = cli.run("outbox")
    assert "create of new issue 'made offline'" in out


def test_messages_outbox_conflicts_and_show_name_issues_users_and_projects(
    cli: Cli, service: Loopback
) -> None:
    cli.run("issues", "edit", "#8", "--title", "mine", "--no-push")
    eight = str(on_server(service)[8]["id"])

    async def theirs() -> None:
        async with ApiClient(service.base_url, Secret(service.key)) as client:
            await client.update_issue(eight, {"title": "theirs"})

    asyncio.run(theirs())
    status, out, _ = cli.run("outbox")
    assert "edit of #8  title" in out and not ID.search(out), out
    assert cli.run("sync")[0] == Exit.PARTLY_DONE
    status, out, _ = cli.run("conflicts")
    assert "edit of #8  title: was " in out and not ID.search(out), out
    status, out, _ = cli.run("issues", "show", "#8")
    fields = dict(re.findall(r"^  (\w+) +(.*)$", out, flags=re.MULTILINE))
    assert fields["project"] == "-" or not fields["project"].startswith("prj_")
    assert not fields["assignee"].startswith("usr_")
    assert not ID.search(out.replace(fields["id"], "")), out
    status, out, _ = cli.run("projects", "list")
    assert status == Exit.OK and out.startswith("KEY") and not ID.search(out), out


def test_assignee_takes_me_a_name_or_the_start_of_one(cli: Cli, service: Loopback) -> None:
    known = users(cli)
    status, out, err = cli.run("issues", "edit", "#2", "--assignee", "me")
    assert (status, err) == (Exit.OK, "")
    assert on_server(service)[2]["assignee"] == known["Ada Lovelace"]
    typed_names = [("grace", "Grace Hopper"), ("Alan Turing", "Alan Turing")]
    for typed, name in [*typed_names, ("tor", "Linus Torvalds")]:
        status, _, err = cli.run("issues", "edit", "#2", "--assignee", typed)
        assert (status, err) == (Exit.OK, ""), typed
        assert on_server(service)[2]["assignee"] == known[name], typed
    status, out, err = cli.run("issues", "list", "--assignee", "me", "--json")
    assert status == Exit.OK
    assert {row["assignee"] for row in json.loads(out)} <= {known["Ada Lovelace"]}


def test_an_ambiguous_or_unknown_assignee_is_refused_before_the_queue(cli: Cli) -> None:
    status, out, err = cli.run("issues", "edit", "#2", "--assignee", "a")
    assert status == Exit.USAGE and out == ""
    assert "'a' could be Ada Lovelace <ada.lovelace@example.com>, Alan Turing <alan" in err
    status, _, err = cli.run("issues", "bulk-edit", "2", "3", "--assignee", "nobody")
    assert status == Exit.USAGE and "no user 'nobody'" in err and "tracker-tui users" in err
    status, _, err = cli.run("issues", "list", "--assignee", "a")
    assert status == Exit.USAGE and "could be" in err
    assert cli.run("outbox", "--json")[1] == ""


def test_users_lists_the_members_and_marks_me(cli: Cli) -> None:
    status, out, _ = cli.run("users")
    lines = out.splitlines()
    assert status == Exit.OK and lines[0].split() == ["NAME", "EMAIL", "ID"]
    assert len(lines) == 9 and [line for line in lines if line.startswith("*")] == [
        next(line for line in lines if "Ada Lovelace" in line)
    ]
    marked = [user for user in json.loads(cli.run("users", "--json")[1]) if user["me"]]
    assert [user["name"] for user in marked] == ["Ada Lovelace"]


@pytest.mark.parametrize("option", ["--status", "--priority"])
def test_issues_list_checks_status_and_priority_like_the_writes(cli: Cli, option: str) -> None:
    status, out, err = cli.run("issues", "list", option, "wontfix")
    assert status == Exit.USAGE and out == "" and err.count("\n") == 1
    assert f"{option} 'wontfix' is not one of: " in err


def test_values_a_server_sent_are_shown_and_listed_but_not_set(cli: Cli, service: Loopback) -> None:
    """Issue 15: a status and a priority the client does not know, from the server: both are
    kept, shown and filterable; setting either is refused the same way, naming the values."""
    record = dict(on_server(service)[9], status="wontfix", priority="p0")
    with open_cache("env", root=cli.home / "data") as cache:
        cache.apply_page(Resource.ISSUES, [record])
    status, out, _ = cli.run("issues", "show", "#9")
    assert "status    wontfix" in out and "priority  p0" in out
    for option, value in (("--status", "wontfix"), ("--priority", "p0")):
        status, out, _ = cli.run("issues", "list", option, value, "--json")
        assert status == Exit.OK and [row["number"] for row in json.loads(out)] == [9]
        status, _, err = cli.run("issues", "edit", "#3", option, value)
        assert status == Exit.USAGE and err.count("\n") == 1
        assert f"{option} {value!r} is not one of: " in err and "wontfix" not in err.split(":")[-1]


@pytest.mark.parametrize("argv", [["--sort", "-priority"], ["--sort=-priority"]])
def test_sort_minus_priority_as_the_readme_writes_it_is_urgent_first(
    cli: Cli, argv: list[str]
) -> None:
    order = ["urgent", "high", "medium", "low", "none"]
    status, out, err = cli.run("issues", "list", *argv, "--json")
    assert status == Exit.OK, err
    ranks = [order.index(row["priority"]) for row in json.loads(out)]
    assert ranks == sorted(ranks) and ranks[0] < ranks[-1]
    status, out, _ = cli.run("issues", "list", "--sort", "priority", "--json")
    assert [order.index(row["priority"]) for row in json.loads(out)] == sorted(ranks, reverse=True)


def test_bulk_edit_moves_the_issues_it_may_and_names_the_others(
    cli: Cli, service: Loopback
) -> None:
    server = on_server(service)
    done = [n for n, issue in server.items() if issue["status"] == "done"]
    movable = [n for n, issue in server.items() if issue["status"] in ("todo", "backlog")]
    assert done and movable
    refs = [f"#{n}" for n in done[:1] + movable[:2]]
    status, out, err = cli.run("issues", "bulk-edit", *refs, "--status", "in_progress")
    assert status == Exit.PARTLY_DONE, (out, err)
    lines = out.splitlines()
    assert lines[0] == "2 of 3 issues changed"
    assert lines[1].startswith(f"not changed: #{done[0]} ")
    assert lines[1].endswith(": Done → In progress not allowed")
    after = on_server(service)
    assert [after[n]["status"] for n in movable[:2]] == ["in_progress", "in_progress"]
    assert after[done[0]]["status"] == "done"


def test_bulk_edit_that_no_issue_may_make_changes_nothing(cli: Cli, service: Loopback) -> None:
    done = [n for n, issue in on_server(service).items() if issue["status"] == "done"]
    status, out, err = cli.run("issues", "bulk-edit", f"#{done[0]}", "--status", "in_review")
    assert status == Exit.USAGE and out == "" and "Done → In review not allowed" in err
    assert cli.run("outbox", "--json")[1] == ""


def test_delete_without_a_terminal_wants_yes(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    status, out, err = cli.run("issues", "delete", "#2")
    assert status == Exit.USAGE and out == "" and "add --yes" in err and "#2 " in err
    status, out, _ = cli.run("issues", "delete", "#2", "--yes")
    assert status == Exit.OK and out.startswith("#2 ") and out.rstrip().endswith("deleted")


def test_doctor_warns_about_a_plaintext_key_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "doctor").mkdir()
    with loopback(tmp_path / "doctor", 2) as running:
        cli = make_cli(tmp_path, capsys, monkeypatch)
        monkeypatch.setattr(sys, "stdin", io.StringIO(running.key))
        argv = ("login", "--server", running.base_url, "--with-key", "--insecure-storage")
        assert cli.run(*argv)[0] == Exit.OK
        status, out, _ = cli.run("doctor")
    assert status == Exit.OK, out
    assert out.count("is stored in plaintext") == 1, out
