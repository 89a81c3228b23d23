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
import gc
import os
import signal
import sys
from collections.abc import Sequence
from types import ModuleType

from sync.permissions import COMMENTS_WRITE, ISSUES_WRITE
from tracker_tui import __version__
from tracker_tui.errors import EXPECTED, UsageError, describe
from tracker_tui.exit_codes import Exit, for_signal
from tracker_tui.needs_terminal import require_terminal
from tracker_tui.signals import Terminated, ending_cleanly


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
        *(demo, write, outbox, account, read, users, status, sync_cmd, inbox),
        *(workspace, keys, webhooks, usage),
        *(config_cmd, completion, manual),
    )


ISSUE_WRITES = {
    "create": ISSUES_WRITE,
    "edit": ISSUES_WRITE,
    "delete": ISSUES_WRITE,
    "bulk-edit": ISSUES_WRITE,
    "comment": COMMENTS_WRITE,
}
"""The issue commands whose `--help` says whether the profile's key may run them."""

VALUES_WITH_A_DASH = frozenset({"--sort"})
"""Options whose value may start with `-` (`--sort -priority`), which argparse would take for
another option: the value is joined to its option before parsing (`--sort=-priority`)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    issues = subparsers.add_parser(
        "issues",
        help="list, show, create, edit, delete and comment on issues",
        description="Issues: reads come from the local cache; writes go through the outbox.",
    )
    issue_commands = issues.add_subparsers(dest="issues_command", metavar="ISSUES_COMMAND")
    issues.set_defaults(run=lambda _args: _help(issues))
    from tracker_tui.commands.online import note_permission

    for group in command_groups():
        group.register(subparsers, issue_commands)
    for name, permission in ISSUE_WRITES.items():
        note_permission(issue_commands.choices[name], permission)
    return parser


def _open_app(args: argparse.Namespace) -> int:
    """No command: the app itself, on the chosen profile (first run: the login screen)."""
    require_terminal()
    gc.disable()  # until the first list is drawn: tracker_tui.app.release_collections
    try:
        from tracker_tui.launch import run_for_profile

        return run_for_profile(args.profile, read_only=args.read_only, live=args.live)
    finally:
        gc.enable()


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
    chosen = argparse.Namespace(profile=None, read_only=False, live=False, command=None)
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
            return None
    chosen.run = _open_app
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    given = joined_dash_values(sys.argv[1:] if argv is None else argv)
    args = app_arguments(given) or build_parser().parse_args(given)
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
        except UsageError as error:
            _say(f"tracker-tui: {describe(error)}")
            return Exit.USAGE
        except EXPECTED as error:
            _say(f"tracker-tui: {describe(error)}")
            return Exit.FAILED


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
    sys.exit(main())
