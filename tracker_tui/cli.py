"""The `tracker-tui` command line: parsing, dispatch, and the edge where errors become one line.

Commands live in `tracker_tui.commands`, one module per group, so this file stays the single
place that decides exit statuses and how a failure is told to the user. Each group module has
`register(subparsers, issue_commands)`: top-level commands go on the first, `issues ...`
commands on the second (the `issues` group is shared by reads and writes).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tracker_tui.commands import account, demo, outbox, read, status, sync_cmd, write
from tracker_tui.errors import EXPECTED, describe

COMMAND_GROUPS = (demo, write, outbox, account, read, status, sync_cmd)

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracker-tui",
        description=(
            "A keyboard-driven terminal client for an issue tracker. Reads from a local cache, "
            "so it works offline; writes go to a durable outbox that syncs under the rate limits."
        ),
        epilog=(
            "Environment: TRACKER_HOME moves config and cache (for scripts and tests); "
            "TRACKER_SERVER and TRACKER_API_KEY run without a stored profile."
        ),
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
    parser.set_defaults(run=_open_app)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    issues = subparsers.add_parser(
        "issues",
        help="list, show, create, edit, delete and comment on issues",
        description="Issues: reads come from the local cache; writes go through the outbox.",
    )
    issue_commands = issues.add_subparsers(dest="issues_command", metavar="ISSUES_COMMAND")
    issues.set_defaults(run=lambda _args: _help(issues))
    for group in COMMAND_GROUPS:
        group.register(subparsers, issue_commands)
    return parser


def _open_app(args: argparse.Namespace) -> int:
    """No command: the app itself, on the chosen profile (first run: the login screen)."""
    from tracker_tui.launch import run_for_profile

    return run_for_profile(args.profile, read_only=args.read_only, live=args.live)


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except EXPECTED as error:
        print(f"tracker-tui: {describe(error)}", file=sys.stderr)
        return EXIT_FAILURE
    return status


if __name__ == "__main__":
    sys.exit(main())
