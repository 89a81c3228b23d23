"""The `tracker-tui` command line: parsing, dispatch, and the edge where errors become one line.

Commands live in `tracker_tui.commands`, one module per group; each returns an exit status of
`tracker_tui.exit_codes.Exit`, the one table of what a status means, and this file maps what
escapes them (errors, Ctrl-C, end of input, SIGHUP and SIGTERM, a closed pipe) onto the same
table with one line on stderr. Each group module has `register(subparsers, issue_commands)`:
top-level commands go on the first, `issues ...` commands on the second (the `issues` group is
shared by reads and writes). Textual loads only when the app opens (`_open_app` imports
`tracker_tui.launch`), and the demo only when `demo` runs: a command starts with what it uses
(`tracker_tui.commands` says how). The app opens without even the commands' modules: the few
options it takes are read by `app_arguments` (docs/architecture.md#start-up).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
from collections.abc import Callable, Sequence
from types import ModuleType

from tracker_tui import __version__
from tracker_tui.collector import collect_again, paused
from tracker_tui.exit_codes import Exit, for_signal
from tracker_tui.needs_terminal import require_terminal
from tracker_tui.signals import Terminated, ending_cleanly

TYPE_CHECKING = False  # typing itself is not imported for `--version`
if TYPE_CHECKING:
    from typing import NoReturn


def command_groups() -> tuple[ModuleType, ...]:
    """Every group of commands, imported when the parser is built: the app opens without them
    (`app_arguments`)."""
    from tracker_tui.commands import (
        account,
        completion,
        config_cmd,
        demo,
        inbox,
        keys,
        manual,
        outbox,
        projects_write,
        read,
        status,
        sync_cmd,
        usage,
        users,
        webhooks,
        workspace,
        write,
    )

    return (
        *(demo, write, outbox, account, read, projects_write, users, status, sync_cmd, inbox),
        *(workspace, keys, webhooks, usage),
        *(config_cmd, completion, manual),
    )


COMMAND_GROUPS = {
    **{"demo": "demo", "outbox": "outbox", "conflicts": "outbox", "projects": "projects_write"},
    **{"login": "account", "logout": "account", "profiles": "account", "users": "users"},
    **{"status": "status", "doctor": "status", "sync": "sync_cmd", "inbox": "inbox"},
    **{"watch": "inbox", "workspace": "workspace", "keys": "keys", "webhooks": "webhooks"},
    **{"usage": "usage", "config": "config_cmd"},
}
"""The group (module of `tracker_tui.commands`) that registers each top-level command, so
that a command builds its own parser alone (`parse_arguments`). `completion` and `man` are
not here: they print the whole parser. tests/cli/test_cli_imports.py checks the table against
what the groups register."""

ISSUE_COMMAND_GROUPS = {
    **{"list": "read", "show": "read", "create": "write", "edit": "write"},
    **{"delete": "write", "comment": "write", "bulk-edit": "write"},
}
"""The same for each `issues ...` command."""

ISSUE_WRITES = {
    "create": "issues:write",
    "edit": "issues:write",
    "delete": "issues:write",
    "bulk-edit": "issues:write",
    "comment": "comments:write",
}
"""The issue commands whose `--help` says whether the profile's key may run them, with the
permission each needs (`sync.permissions`; tests/cli/test_cli_imports.py checks they agree)."""

VALUES_WITH_A_DASH = frozenset({"--sort"})
"""Options whose value may start with `-` (`--sort -priority`), which argparse would take for
another option: the value is joined to its option before parsing (`--sort=-priority`)."""


def terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`, as argparse's help formatter asks it, without
    importing shutil (which imports zlib, bz2 and lzma: docs/architecture.md#start-up):
    `$COLUMNS` if a positive number, else the width of the terminal on stdout, else 80.
    tests/cli/test_cli_imports.py checks the two agree."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    stdout = sys.__stdout__
    if stdout is None:
        return 80
    try:
        return os.get_terminal_size(stdout.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


class Parser(argparse.ArgumentParser):
    """argparse's parser, its help formatter given the terminal's width (`terminal_columns`)
    rather than left to find it through shutil: argparse makes a formatter for every option
    added, to check its metavar, so every command imported shutil before it ran. Its
    subcommands' parsers are of the same class (argparse makes them of the parent's)."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        making: Callable[..., argparse.HelpFormatter] = self.formatter_class
        return making(prog=self.prog, width=terminal_columns() - 2)


def _root_parser(
    parser_class: type[argparse.ArgumentParser],
) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction[argparse.ArgumentParser]]:
    """The parser of `tracker-tui` itself, and its (still empty) list of commands."""
    parser = parser_class(
        prog="tracker-tui",
        description=(
            "A keyboard-driven terminal client for an issue tracker. Reads from a local cache, "
            "so it works offline; writes go to a durable outbox that syncs under the rate limits."
        ),
        epilog=(
            "Environment: TRACKER_HOME moves config and cache (for scripts and tests); "
            "TRACKER_SERVER and TRACKER_API_KEY run without a stored profile. Exit status: "
            + ", ".join(f"{s.value} {s.name.lower().replace('_', ' ')}" for s in Exit)
            + " (README.md, 'Exit status', says when each applies)."
        ),
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {__version__}",
        help="print the version of tracker-tui and exit",
    )
    parser.add_argument(
        "--profile", metavar="NAME", help="profile to use (default: the default profile)"
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="open the app without any way to change issues (browse and search only)",
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="register a webhook so the server pokes this app on every change (the server must "
        "be able to reach back to this machine on a loopback port); otherwise it polls",
    )
    parser.set_defaults(run=_open_app, root_parser=parser)
    return parser, parser.add_subparsers(dest="command", metavar="COMMAND")


def build_parser(
    groups: Sequence[str] | None = None, parser_class: type[argparse.ArgumentParser] = Parser
) -> argparse.ArgumentParser:
    """The parser of every command, or of only the commands `groups` (names of modules of
    `tracker_tui.commands`) register: the others and their modules are left out."""
    from tracker_tui.command_summaries import SUMMARIES

    parser, subparsers = _root_parser(parser_class)
    issues = subparsers.add_parser(
        "issues",
        help=SUMMARIES["issues"],
        description="Issues: reads come from the local cache; writes go through the outbox.",
    )
    issue_commands = issues.add_subparsers(dest="issues_command", metavar="ISSUES_COMMAND")
    issues.set_defaults(run=lambda _args: _help(issues))
    if groups is None:
        chosen = command_groups()
    else:
        chosen = tuple(importlib.import_module(f"tracker_tui.commands.{name}") for name in groups)
    for group in chosen:
        group.register(subparsers, issue_commands)
    noted = {name: need for name, need in ISSUE_WRITES.items() if name in issue_commands.choices}
    if noted:
        from tracker_tui.commands.online import note_permission

        for name, permission in noted.items():
            note_permission(issue_commands.choices[name], permission)
    return parser


def summary_parser(
    parser_class: type[argparse.ArgumentParser] = Parser,
) -> argparse.ArgumentParser:
    """A parser whose commands have their summaries and nothing else: all `tracker-tui --help`
    shows of them, printed without importing their groups."""
    from tracker_tui.command_summaries import SUMMARIES

    parser, subparsers = _root_parser(parser_class)
    for name, summary in SUMMARIES.items():
        subparsers.add_parser(name, help=summary)
    return parser


def asks_for_help(argv: Sequence[str]) -> bool:
    """`tracker-tui --help` or `-h`, with nothing else but the app's options: the help that
    lists the commands (`summary_parser`)."""
    others = _app_options(argv, _app_defaults())
    if not others:
        return False
    return all(item in ("-h", "--help") for item in others)


class _NotAlone(Exception):
    """The parser of one group could not read the command line (`_OneGroup`)."""


class _OneGroup(Parser):
    """A parser of some commands only: a line it cannot read (a mistake, or a command of
    another group) goes to the whole parser, which says what is wrong as it always did."""

    def error(self, message: str) -> NoReturn:
        raise _NotAlone(message)


def groups_for(argv: Sequence[str]) -> tuple[str, ...] | None:
    """The groups whose parser reads `argv` as the whole parser would: the one of its
    command, none for `--version`. None (the whole parser) for anything else: `--help`,
    `issues` alone, `completion` and `man`, an abbreviated option, a mistake."""
    items = iter(argv)
    for item in items:
        if item in ("--read-only", "--live", "--version") or item.startswith("--profile="):
            continue
        if item == "--profile":
            value = next(items, None)
            if value is None or value.startswith("-"):
                return None
            continue
        if item.startswith("-"):
            return None
        if item == "issues":
            group = ISSUE_COMMAND_GROUPS.get(next(items, ""))
        else:
            group = COMMAND_GROUPS.get(item)
        return None if group is None else (group,)
    return ()


def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    """`build_parser().parse_args(argv)`, building only the parser of the command given:
    every group's module imported costs each command start (docs/architecture.md#start-up)."""
    if asks_for_help(argv):
        return summary_parser().parse_args(argv)
    groups = groups_for(argv)
    if groups is not None:
        with contextlib.suppress(_NotAlone):
            return build_parser(groups, _OneGroup).parse_args(argv)
    return build_parser().parse_args(argv)


def _open_app(args: argparse.Namespace) -> int:
    """No command: the app itself, on the chosen profile (first run: the login screen)."""
    require_terminal()
    from tracker_tui.launch import run_for_profile

    return run_for_profile(args.profile, read_only=args.read_only, live=args.live)


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return Exit.USAGE


def joined_dash_values(argv: Sequence[str]) -> list[str]:
    """`--sort -priority` as `--sort=-priority`, for the options of `VALUES_WITH_A_DASH`."""
    joined: list[str] = []
    items = iter(argv)
    for item in items:
        if item in VALUES_WITH_A_DASH:
            value = next(items, None)
            joined.append(item if value is None else f"{item}={value}")
        elif item == "--":
            joined.extend([item, *items])
        else:
            joined.append(item)
    return joined


def app_arguments(argv: Sequence[str]) -> argparse.Namespace | None:
    """What `build_parser().parse_args(argv)` gives when `argv` only chooses how the app opens
    (`tracker-tui`, `tracker-tui --profile work --read-only`), read without building the parser
    of every command, which imports every command's module (docs/architecture.md#start-up).
    None for anything else (a command, `--help`, an abbreviated or malformed option): the full
    parser reads it, and says what is wrong."""
    chosen = _app_defaults()
    if _app_options(argv, chosen) != []:
        return None
    chosen.run = _open_app
    return chosen


def _app_defaults() -> argparse.Namespace:
    return argparse.Namespace(profile=None, read_only=False, live=False, command=None)


def _app_options(argv: Sequence[str], chosen: argparse.Namespace) -> list[str] | None:
    """The app's own options in `argv` (`--profile NAME` or `=NAME`, `--read-only`, `--live`)
    set on `chosen`, and the other items, in order; None when `--profile` has no value."""
    others: list[str] = []
    items = iter(argv)
    for item in items:
        if item in ("--read-only", "--live"):
            setattr(chosen, item[2:].replace("-", "_"), True)
        elif item.startswith("--profile="):
            chosen.profile = item.partition("=")[2]
        elif item == "--profile":
            value = next(items, None)
            if value is None or value.startswith("-"):
                return None
            chosen.profile = value
        else:
            others.append(item)
    return others


LONG_RUNNING = frozenset({"demo", "sync", "watch"})
"""Commands that may run for minutes: the cyclic garbage collector runs for them as usual once
they start (`main`). The app (no command) turns it back on once its first list is drawn
(`tracker_tui.app.release_collections`)."""


def main(argv: Sequence[str] | None = None, *, ending: bool = False) -> int:
    """Run the command line, the cyclic garbage collector paused (`tracker_tui.collector`):
    the commands that may run long collect as usual once they start, the app once it has
    drawn its first list. `ending`: the process ends when this returns (`run`)."""
    with paused(ending=ending):
        given = joined_dash_values(sys.argv[1:] if argv is None else argv)
        args = app_arguments(given) or parse_arguments(given)
        if getattr(args, "command", None) in LONG_RUNNING:
            collect_again()
        return _run(args)


def run() -> int:
    """The console script `tracker-tui` and `python -m tracker_tui`: `main` on the process's
    own arguments, the process ending when it returns."""
    return main(ending=True)


def _run(args: argparse.Namespace) -> int:
    with ending_cleanly():
        try:
            status = int(args.run(args))
            sys.stdout.flush()
            return status
        except Terminated as ended:
            _say(f"tracker-tui: ended by {ended}")
            return ended.status
        except KeyboardInterrupt:
            _say("tracker-tui: interrupted")
            return Exit.INTERRUPTED
        except EOFError:
            _say("tracker-tui: cancelled (end of input)")
            return Exit.INTERRUPTED
        except BrokenPipeError:
            _quiet_stdout()
            return for_signal(signal.SIGPIPE)
        except Exception as error:
            # Imported only now: what `describe` knows of every package's errors costs a
            # command that succeeds nothing.
            from tracker_tui.errors import EXPECTED, UsageError, describe

            if isinstance(error, UsageError):
                _say(f"tracker-tui: {describe(error)}")
                return Exit.USAGE
            if isinstance(error, EXPECTED):
                _say(f"tracker-tui: {describe(error)}")
                return Exit.FAILED
            raise


def _say(line: str) -> None:
    """A line on stderr, unless the terminal is gone (a hang-up): then there is no one to tell."""
    with contextlib.suppress(OSError):
        print(line, file=sys.stderr)


def _quiet_stdout() -> None:
    """The reader of stdout left (`| head`): what is still buffered goes nowhere, so Python's
    flush at exit does not print a traceback about the closed pipe."""
    try:
        target = sys.stdout.fileno()
    except (OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, target)
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(run())
