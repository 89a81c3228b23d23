"""`tracker-tui demo`: the product with no account, against an embedded, seeded service."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any, issue_commands: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="open the app against an embedded demo service (no account needed)",
        description=(
            "Start the reference service on a free loopback port with a fresh workspace of "
            "seeded issues in a temporary folder, with a key held in memory only, turn on live "
            "updates, and open the app against it. Nothing is kept after it exits."
        ),
    )
    parser.add_argument(
        "--issues", type=int, default=3_000, help="how many issues to seed (default 3000)"
    )
    parser.add_argument(
        "--another-user",
        action="store_true",
        help="a colleague edits a few issues every few seconds, to show live updates and conflicts",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from demo.launch import run_demo
    from tracker_tui.errors import UsageError

    if args.issues < 1:
        raise UsageError("--issues must be at least 1")
    return run_demo(issues=args.issues, another_user=args.another_user, read_only=args.read_only)
