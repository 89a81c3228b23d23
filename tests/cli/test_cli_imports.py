"""The command line's reads start without what they do not need: no Textual, no HTTP client,
no sync engine or pydantic models, and nothing of the reference service or the demo; nor the
keyring (a read needs no key), asyncio, rich, sqlite_utils (the cache is at its schema) or
the email package, each of which cost a read command more than the interpreter's own start
(docs/architecture.md#start-up). Writes queued with `--no-push` look up the key (to refuse
what it may not do) but load nothing of the network either.

Each read runs in a fresh interpreter (an import made by an earlier test cannot hide one) on a
profile that has logged in, synced and queued a write, with the server stopped: the reads
answer from the cache alone. What a command imports is what `sys.modules` holds once it has
answered. The import-linter contracts (pyproject.toml) cannot say this: the network layer
is imported lazily by the write commands of the same modules.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import FAIL_KEYRING, loopback

from tracker_tui.cli import (
    COMMAND_GROUPS,
    ISSUE_COMMAND_GROUPS,
    ISSUE_WRITES,
    app_arguments,
    asks_for_help,
    build_parser,
    command_groups,
    groups_for,
    parse_arguments,
    summary_parser,
)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("tracker-tui")

NOT_FOR_WRITES = (
    *("textual", "httpx", "pydantic", "fastapi", "uvicorn", "starlette", "server", "demo"),
    *("sync.client", "sync.models", "sync.session", "sync.engine", "sync.pull", "sync.push"),
    *("asyncio", "rich", "sqlite_utils", "email", "concurrent"),
)
"""Packages and modules (with everything under them) no command that stays offline may load."""

NOT_FOR_READS = (*NOT_FOR_WRITES, "keyring")
"""... nor may a read, which needs no key."""

READS = (
    ("--help",),
    ("--version",),
    ("issues", "list", "--limit", "5"),
    ("issues", "list", "--status", "todo", "--sort", "-priority", "--json"),
    ("issues", "show", "#2"),
    ("issues", "show", "#2", "--json"),
    ("projects", "list"),
    ("users",),
    ("status",),
    ("status", "--json"),
    ("usage",),
    ("usage", "--json"),
    ("outbox",),
    ("conflicts",),
    ("profiles",),
    ("completion", "bash"),
    ("config", "schema"),
    ("config", "path"),
    ("man",),
    ("inbox",),
    ("inbox", "--json"),
)

ALSO_ALLOWED = {("completion", "bash"): ("email",)}
"""What a read may load beyond the rest: shtab imports importlib.metadata (and with it email)
for its own version; a completion script is made once, when it is installed."""

QUEUED_WRITES = (
    ("issues", "edit", "#2", "--title", "queued again", "--no-push"),
    ("issues", "comment", "#2", "--body", "noted", "--no-push"),
    ("issues", "create", "--title", "made offline", "--no-push"),
)

RUN = """
import json, sys
from tracker_tui.cli import main
try:
    status = main(sys.argv[2:])
except SystemExit as end:
    status = end.code
with open(sys.argv[1], "w") as out:
    json.dump({"status": status, "modules": sorted(sys.modules)}, out)
"""
"""`tracker-tui ARGS` as the console script runs it, then what it imported."""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A profile with a synced cache and one queued write; its server stopped."""
    folder = tmp_path_factory.mktemp("reads")
    env = {
        **os.environ,
        "TRACKER_HOME": str(folder / "home"),
        "PYTHON_KEYRING_BACKEND": FAIL_KEYRING,
    }
    env.pop("TRACKER_SERVER", None)
    env.pop("TRACKER_API_KEY", None)
    with loopback(folder, 12) as service:
        login = [str(SCRIPT), "login", "--server", service.base_url, "--with-key"]
        for argv, given in (
            ([*login, "--insecure-storage"], service.key),
            ([str(SCRIPT), "sync"], None),
            ([str(SCRIPT), "issues", "edit", "#2", "--title", "queued", "--no-push"], None),
        ):
            done = subprocess.run(
                argv, input=given, capture_output=True, text=True, env=env, timeout=120
            )
            assert done.returncode == 0, done.stderr
    yield env


def run_reporting(
    env: dict[str, str], script: str, argv: tuple[str, ...], report: Path
) -> tuple[str, dict[str, Any]]:
    """`script` run as `python -c` on `report` and `argv`; its stdout and the report it wrote."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(report), *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(report.read_text())


def run_read(env: dict[str, str], argv: tuple[str, ...], folder: Path) -> tuple[int, str, set[str]]:
    out, found = run_reporting(env, RUN, argv, folder / "modules.json")
    return found["status"], out, set(found["modules"])


def loaded(modules: set[str], forbidden: tuple[str, ...] = NOT_FOR_READS) -> list[str]:
    return sorted(
        name
        for name in forbidden
        if any(module == name or module.startswith(name + ".") for module in modules)
    )


@pytest.mark.parametrize("argv", READS, ids=" ".join)
def test_a_read_command_imports_no_network_ui_or_service(
    env: dict[str, str], argv: tuple[str, ...], tmp_path: Path
) -> None:
    status, out, modules = run_read(env, argv, tmp_path)
    assert status == 0
    assert out.strip()
    allowed = ALSO_ALLOWED.get(argv, ())
    assert loaded(modules, tuple(n for n in NOT_FOR_READS if n not in allowed)) == []


@pytest.mark.parametrize("argv", QUEUED_WRITES, ids=" ".join)
def test_a_write_queued_offline_imports_no_network_or_ui(
    env: dict[str, str], argv: tuple[str, ...], tmp_path: Path
) -> None:
    status, out, modules = run_read(env, argv, tmp_path)
    assert status == 0
    assert out.strip()
    assert loaded(modules, NOT_FOR_WRITES) == []


NO_CACHE = (("--help",), ("--version",), ("profiles",), ("config", "path"))
"""Commands that open no cache."""


@pytest.mark.parametrize("argv", NO_CACHE, ids=" ".join)
def test_a_command_without_a_cache_loads_no_store(
    env: dict[str, str], argv: tuple[str, ...], tmp_path: Path
) -> None:
    """What only an open cache needs (the store, SQLite, orjson and the uuid and platform
    modules orjson brings) stays out of the commands that open none: the modules every
    command imports name the cache's types and keys without loading it."""
    status, out, modules = run_read(env, argv, tmp_path)
    assert status == 0
    assert out.strip()
    assert loaded(modules, ("cache.store", "cache.db", "sqlite3", "orjson", "uuid")) == []


def test_version_is_the_installed_one(env: dict[str, str], tmp_path: Path) -> None:
    """`--version` prints the package's version without reading the installed metadata."""
    status, out, modules = run_read(env, ("--version",), tmp_path)
    assert status == 0
    assert out.strip() == f"tracker-tui {importlib.metadata.version('tracker-tui')}"
    assert "importlib.metadata" not in modules


APP_ARGV = (
    (),
    ("--profile", "work"),
    ("--profile=work", "--read-only"),
    ("--live", "--read-only", "--profile", "a", "--profile", "b"),
    ("--profile=",),
)
NOT_FOR_THE_APP = (("issues",), ("--prof", "x"), ("-h",), ("--profile",), ("--profile", "-x"))


@pytest.mark.parametrize("argv", APP_ARGV, ids=" ".join)
def test_the_app_options_read_alone_are_what_the_parser_reads(argv: tuple[str, ...]) -> None:
    """The app opens without building the parser (and importing every command's module):
    what it reads of its few options is what the whole parser would."""
    fast = app_arguments(list(argv))
    assert fast is not None
    parsed = vars(build_parser().parse_args(list(argv)))
    del parsed["root_parser"]  # the parser itself, which `completion` and `man` print from
    assert vars(fast) == parsed


@pytest.mark.parametrize("argv", NOT_FOR_THE_APP, ids=" ".join)
def test_anything_else_goes_to_the_parser(argv: tuple[str, ...]) -> None:
    assert app_arguments(list(argv)) is None


def test_the_app_opens_without_the_commands(tmp_path: Path) -> None:
    """`tracker-tui` with no command imports no command module before the app's."""
    code = (
        "import sys, tracker_tui.cli as cli\n"
        "cli._open_app = lambda args: print(sorted(m for m in sys.modules"
        " if m.startswith('tracker_tui.commands'))) or 0\n"
        "sys.exit(cli.main(['--read-only']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_guard_sees_a_command_that_goes_online(env: dict[str, str], tmp_path: Path) -> None:
    """`sync` loads the network layer (and fails here, its server stopped): the check above
    would see it in a read."""
    _, _, modules = run_read(env, ("sync", "--give-up-after", "0.1"), tmp_path)
    assert {"httpx", "pydantic", "sync.client", "sync.engine"} <= set(loaded(modules))
    assert {"asyncio", "keyring"} <= set(loaded(modules))


VERSION_LOADS_NONE_OF = (
    *("accounts", "cache", "sync", "issuefields", "tracker_tui.commands"),
    *("dataclasses", "inspect", "typing", "sqlite3"),
)


def test_version_loads_no_command_and_no_package(env: dict[str, str], tmp_path: Path) -> None:
    """`--version` builds the top of the parser alone: no command's module, none of the
    client's other packages, and none of the costly standard modules they bring."""
    status, out, modules = run_read(env, ("--version",), tmp_path)
    assert status == 0
    assert out.strip().startswith("tracker-tui ")
    assert loaded(modules, VERSION_LOADS_NONE_OF) == []


ONE_GROUP = (
    (("issues", "list", "--limit", "5"), {"read"}),
    (("issues", "show", "#2", "--json"), {"read"}),
    (("--profile", "default", "issues", "list"), {"read"}),
    (("status",), {"status", "read"}),
    (("outbox",), {"outbox", "write", "online"}),
    (("conflicts",), {"outbox", "write", "online"}),
    (("profiles",), {"account"}),
    (("issues", "create", "--title", "one group", "--no-push"), {"write", "online"}),
)
"""Each command, and the modules of `tracker_tui.commands` it may load: its group's, and
those the group's module imports (`status` opens the cache as the reads do; the outbox's
commands push as the writes do, which check the key's permissions)."""
HELPERS = ("tracker_tui.commands.refs", "tracker_tui.commands.texts")
"""Modules of `tracker_tui.commands` that are no group: what a group's commands share."""


@pytest.mark.parametrize(("argv", "allowed"), ONE_GROUP, ids=[" ".join(a) for a, _ in ONE_GROUP])
def test_a_command_loads_only_its_own_group(
    env: dict[str, str], argv: tuple[str, ...], allowed: set[str], tmp_path: Path
) -> None:
    """A command builds the parser of its group alone: the other groups' modules (and what
    they import) stay out."""
    status, out, modules = run_read(env, argv, tmp_path)
    assert status == 0
    assert out.strip()
    groups = {
        module.rpartition(".")[2]
        for module in modules
        if module.startswith("tracker_tui.commands.") and module not in HELPERS
    }
    assert groups == allowed


NOT_FOR_CACHE_READS = ("sync", "cache.writes", "cache.sending", "cache.server_copy", "cache.undo")
"""A read of issues loads no part of the sync package, nor the cache's code for writing the
outbox, pushing it or storing a pull."""

ISSUE_READS = (
    ("issues", "list", "--limit", "5"),
    ("issues", "list", "--status", "todo", "--sort", "-priority", "--json"),
    ("issues", "show", "#2"),
)

PROJECT_MODULES = ("tracker_tui", "cache", "accounts", "sync", "issuefields")
READ_MODULE_BUDGET = 59
"""Modules of the client's packages a read of the cache may load, each a cost of every start:
at most 56 (`outbox` with a write queued) when this was set, 63 before the list's query
machinery loaded with the first list read only (`cache.reads`); 88 to 92 before that. One
more since the commands' summaries have a module of their own (`tracker_tui.command_summaries`,
so that `--help` loads no command's module)."""


@pytest.mark.parametrize("argv", ISSUE_READS, ids=" ".join)
def test_a_read_of_issues_loads_nothing_of_sync_or_the_outbox_s_writes(
    env: dict[str, str], argv: tuple[str, ...], tmp_path: Path
) -> None:
    status, out, modules = run_read(env, argv, tmp_path)
    assert status == 0
    assert out.strip()
    assert loaded(modules, NOT_FOR_CACHE_READS) == []


@pytest.mark.parametrize(
    "argv", (*ISSUE_READS, ("outbox",), ("conflicts",), ("status",)), ids=" ".join
)
def test_a_read_of_the_cache_loads_no_orjson(
    env: dict[str, str], argv: tuple[str, ...], tmp_path: Path
) -> None:
    """orjson (with the uuid and platform modules it loads) writes the pull's records; a read
    hands SQLite its lists of ids through CPython's encoder (`cache.resources.json_list`)."""
    status, out, modules = run_read(env, argv, tmp_path)
    assert status == 0
    assert out.strip()
    assert loaded(modules, ("orjson", "uuid", "platform")) == []


@pytest.mark.parametrize(
    "argv", (*ISSUE_READS, ("outbox",), ("conflicts",), ("status",)), ids=" ".join
)
def test_a_read_of_the_cache_keeps_to_its_module_budget(
    env: dict[str, str], argv: tuple[str, ...], tmp_path: Path
) -> None:
    status, out, modules = run_read(env, argv, tmp_path)
    assert status == 0
    assert out.strip()
    ours = sorted(m for m in modules if m.partition(".")[0] in PROJECT_MODULES)
    assert len(ours) <= READ_MODULE_BUDGET, ours


@pytest.mark.parametrize("argv", (*ISSUE_READS, *QUEUED_WRITES, ("outbox",)), ids=" ".join)
def test_a_command_that_sends_nothing_opens_no_request_log(
    env: dict[str, str], argv: tuple[str, ...], tmp_path: Path
) -> None:
    """The rate limiter's log (a file beside the cache, on a connection of its own) opens
    when a request is to be logged or counted, not with every cache: a read or a queued write
    sends nothing. `status` counts what was sent, and opens it again."""
    logs = list(Path(env["TRACKER_HOME"], "data").glob("*.db.requests"))
    assert len(logs) == 1
    logs[0].unlink()
    status, out, modules = run_read(env, argv, tmp_path)
    assert status == 0
    assert out.strip()
    assert not logs[0].exists()
    assert "cache.requestlog" not in modules
    status, out, _ = run_read(env, ("status",), tmp_path)
    assert status == 0
    assert logs[0].exists()


NO_DATACLASSES = (
    *ISSUE_READS,
    ("issues", "show", "#2", "--json"),
    ("status",),
    ("status", "--json"),
    ("outbox",),
    ("conflicts",),
    ("profiles",),
    ("users",),
)
"""Reads whose records are `issuefields.frozen.Frozen` classes: importing `dataclasses`, with
`inspect` behind it, took ~15 ms of a read's start here, and each dataclass built ~1 ms more
(15 of them on `issues list` before they were written out)."""


@pytest.mark.parametrize("argv", NO_DATACLASSES, ids=" ".join)
def test_a_read_loads_no_dataclasses(
    env: dict[str, str], argv: tuple[str, ...], tmp_path: Path
) -> None:
    status, out, modules = run_read(env, argv, tmp_path)
    assert status == 0
    assert out.strip()
    assert loaded(modules, ("dataclasses", "inspect")) == []


@pytest.mark.parametrize(
    "argv", (("--help",), *ISSUE_READS, ("status",), ("profiles",)), ids=" ".join
)
def test_a_read_loads_no_shutil(env: dict[str, str], argv: tuple[str, ...], tmp_path: Path) -> None:
    """argparse's help formatter, made for every option added, finds the terminal's width
    through shutil (and its zlib, bz2 and lzma) unless given it (`tracker_tui.cli.Parser`)."""
    status, out, modules = run_read(env, argv, tmp_path)
    assert status == 0
    assert out.strip()
    assert loaded(modules, ("shutil", "bz2", "lzma")) == []


@pytest.mark.parametrize("columns", (None, "", "0", "-3", "wide", "37", "200"))
def test_the_terminal_width_is_shutil_s(
    monkeypatch: pytest.MonkeyPatch, columns: str | None
) -> None:
    import shutil

    from tracker_tui.cli import terminal_columns

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns


HELP_LINES = (
    ("--help",),
    ("issues", "list", "--help"),
    ("issues", "edit", "--help"),
    ("completion", "--help"),
    ("issues", "list", "--limit"),
)


@pytest.mark.parametrize("columns", ("44", "100"))
@pytest.mark.parametrize("argv", HELP_LINES, ids=" ".join)
def test_help_reads_as_argparse_s_own(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: tuple[str, ...],
    columns: str,
) -> None:
    """Help and mistakes are laid out as argparse's own parser lays them out, at the
    terminal's width."""
    monkeypatch.setenv("COLUMNS", columns)
    said = []
    for parser in (build_parser(), build_parser(parser_class=argparse.ArgumentParser)):
        with pytest.raises(SystemExit) as ended:
            parser.parse_args(argv)
        said.append((ended.value.code, capsys.readouterr()))
    assert said[0] == said[1]
    assert any(len(line) > 30 for line in (said[0][1].out + said[0][1].err).splitlines())


def test_help_loads_no_command_s_module(env: dict[str, str], tmp_path: Path) -> None:
    """`--help` lists the commands from their summaries: no group's module, and so nothing of
    the cache, the accounts or the network layer, loads to print it."""
    for argv in (("--help",), ("--profile", "work", "-h")):
        status, out, modules = run_read(env, argv, tmp_path)
        assert status == 0
        assert "login" in out and "webhooks" in out
        assert {m for m in modules if m.startswith("tracker_tui.commands")} == set()
        assert loaded(modules, ("cache", "accounts", "sync", "issuefields", "dataclasses")) == []


@pytest.mark.parametrize("columns", ("44", "100"))
@pytest.mark.parametrize("argv", (("--help",), ("-h", "--read-only")), ids=" ".join)
def test_help_from_the_summaries_is_the_whole_parser_s(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: tuple[str, ...],
    columns: str,
) -> None:
    """The summaries are the ones the groups register, in the same order, with the same
    options around them: the help reads the same either way."""
    monkeypatch.setenv("COLUMNS", columns)
    said = []
    for parser in (summary_parser(), build_parser()):
        with pytest.raises(SystemExit) as ended:
            parser.parse_args(argv)
        said.append((ended.value.code, capsys.readouterr()))
    assert said[0] == said[1]
    assert said[0][0] == 0 and "completion" in said[0][1].out


ASKING_FOR_HELP = (("--help",), ("-h",), ("--profile", "x", "--help"), ("--live", "-h"))
NOT_ASKING_FOR_HELP = (
    (),
    ("--read-only",),
    ("issues", "-h"),
    ("--help", "issues"),
    ("--profile", "--help"),
    ("--version",),
)


def test_only_the_list_of_commands_is_read_from_the_summaries() -> None:
    assert all(asks_for_help(argv) for argv in ASKING_FOR_HELP)
    assert not any(asks_for_help(argv) for argv in NOT_ASKING_FOR_HELP)


def registered() -> tuple[dict[str, str], dict[str, str]]:
    """Which group registers each top-level and each `issues` command, from the groups."""
    commands: dict[str, str] = {}
    issue_commands: dict[str, str] = {}
    for group in command_groups():
        subparsers = subcommands(build_parser(()), "command")
        inner = subcommands(subparsers.choices["issues"], "issues_command")
        before = set(subparsers.choices)
        group.register(subparsers, inner)
        name = group.__name__.rpartition(".")[2]
        commands |= {c: name for c in subparsers.choices if c not in before}
        issue_commands |= dict.fromkeys(inner.choices, name)
    return commands, issue_commands


def subcommands(parser: argparse.ArgumentParser, dest: str) -> argparse._SubParsersAction[Any]:
    found = next(action for action in parser._actions if action.dest == dest)
    assert isinstance(found, argparse._SubParsersAction)
    return found


def test_the_table_of_groups_is_what_the_groups_register() -> None:
    commands, issue_commands = registered()
    assert issue_commands == ISSUE_COMMAND_GROUPS
    assert {c: g for c, g in commands.items() if c not in ("completion", "man")} == COMMAND_GROUPS
    assert set(ISSUE_WRITES) <= set(issue_commands)


def test_the_permissions_noted_are_the_sync_package_s() -> None:
    from sync.permissions import COMMENTS_WRITE, ISSUES_WRITE

    assert {
        **dict.fromkeys(("create", "edit", "delete", "bulk-edit"), ISSUES_WRITE),
        "comment": COMMENTS_WRITE,
    } == ISSUE_WRITES


SAME_AS_THE_WHOLE = (
    ("issues", "list", "--status", "todo", "--sort=-priority", "--json"),
    ("--profile", "work", "issues", "show", "#4"),
    ("--profile=work", "--read-only", "status", "--json"),
    ("projects", "list", "--json"),
    ("issues", "comment", "#2", "--body", "hi", "--no-push"),
    ("keys", "create", "--name", "bot", "--permission", "admin"),
    ("config", "path"),
)


@pytest.mark.parametrize("argv", SAME_AS_THE_WHOLE, ids=" ".join)
def test_one_group_s_parser_reads_what_the_whole_reads(argv: tuple[str, ...]) -> None:
    assert groups_for(argv)
    alone, whole = vars(parse_arguments(argv)), vars(build_parser().parse_args(argv))
    del alone["root_parser"], whole["root_parser"]
    assert alone == whole


MISTAKES = (
    ("issues", "list", "--bogus"),
    ("issues", "list", "--limit", "many"),
    ("issues", "frobnicate"),
    ("frobnicate",),
    ("status", "extra"),
)


@pytest.mark.parametrize("argv", MISTAKES, ids=" ".join)
def test_a_mistake_is_told_as_the_whole_parser_tells_it(
    argv: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """A line one group's parser cannot read goes to the whole parser: the same message and
    exit status as ever, not one group's narrower view of the commands."""
    with pytest.raises(SystemExit) as alone:
        parse_arguments(argv)
    said = capsys.readouterr()
    with pytest.raises(SystemExit) as whole:
        build_parser().parse_args(argv)
    assert (alone.value.code, said) == (whole.value.code, capsys.readouterr())
    assert alone.value.code == 2


def test_help_and_issues_alone_build_the_whole_parser() -> None:
    for argv in (("--help",), ("-h",), ("issues",), ("issues", "-h"), ("completion", "bash")):
        assert groups_for(argv) is None
    assert groups_for(("--version",)) == ()


def test_the_collector_waits_for_a_short_command_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A short command runs without the cyclic garbage collector (collecting the objects a
    start makes cost a tenth of its time); the commands that may run for minutes collect as
    usual, a command that goes online from then on, the app once it has drawn its first list
    (tests/tui/test_start_imports.py), and the collector is back on once `main` returns."""
    import gc

    from tracker_tui import cli
    from tracker_tui.collector import collect_again
    from tracker_tui.commands import account

    monkeypatch.setenv("TRACKER_HOME", str(tmp_path))
    seen: dict[str, bool] = {}

    def record(name: str) -> Callable[[object], int]:
        def run(_args: object) -> int:
            seen[name] = gc.isenabled()
            return 0

        return run

    monkeypatch.setattr(account, "run_profiles", record("profiles"))
    monkeypatch.setattr(cli, "_open_app", record("app"))
    assert gc.isenabled()
    assert cli.main(["profiles"]) == 0
    assert gc.isenabled()
    assert cli.main(["--read-only"]) == 0
    assert gc.isenabled()
    assert seen == {"profiles": False, "app": False}

    def going_online(_args: object) -> int:
        collect_again()
        seen["online"] = gc.isenabled()
        return 0

    monkeypatch.setattr(account, "run_profiles", going_online)
    assert cli.main(["profiles"]) == 0
    assert seen["online"] and gc.isenabled()
    assert {"sync", "watch", "demo"} <= cli.LONG_RUNNING


FROZEN_AT_THE_END = """
import gc, runpy, sys
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as end:
    print(end.code, gc.get_freeze_count(), gc.isenabled())
"""
"""The console script as it runs, then what the collector holds as the process ends."""


@pytest.mark.parametrize("argv", (("config", "path"), ("--version",)), ids=" ".join)
def test_the_console_script_freezes_what_it_made_as_it_ends(
    tmp_path: Path, argv: tuple[str, ...]
) -> None:
    """The objects a command made are frozen before the collector is back on, so that neither
    its first collection nor the interpreter's at exit walk them all again; `main` called in a
    process that goes on (this one) freezes nothing."""
    import gc

    from tracker_tui import cli

    done = subprocess.run(
        [sys.executable, "-c", FROZEN_AT_THE_END, str(SCRIPT), *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "TRACKER_HOME": str(tmp_path)},
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    status, frozen, enabled = done.stdout.split()[-3:]
    assert (status, enabled) == ("0", "True")
    assert int(frozen) > 10_000
    before = gc.get_freeze_count()
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert gc.get_freeze_count() <= before  # frozen objects may die meanwhile (earlier tests')


def test_every_command_that_goes_online_collects_again() -> None:
    """Every way a command goes online (`asyncio.run`) turns the collector back on first,
    or belongs to a command that collects from its start (`LONG_RUNNING`)."""
    from tracker_tui import cli

    folder = ROOT / "tracker_tui" / "commands"
    for path in sorted(folder.glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if "asyncio.run(" not in line or line.lstrip().startswith("#"):
                continue
            if path.stem in ("sync_cmd", "watch"):
                assert {"sync", "watch"} <= cli.LONG_RUNNING
                continue
            before = "\n".join(lines[max(0, number - 3) : number])
            assert "collect_again()" in before, f"{path.name}:{number + 1}"
