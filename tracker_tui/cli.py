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

from tracker_tui.commands import demo
from tracker_tui.errors import TrackerTuiError

COMMAND_GROUPS = (demo,)

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


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run = getattr(args, "run", None)
    if run is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        status: int = run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except TrackerTuiError as error:
        print(f"tracker-tui: {error}", file=sys.stderr)
        return EXIT_FAILURE
    return status


if __name__ == "__main__":
    sys.exit(main())
