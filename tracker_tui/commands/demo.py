"""`tracker-tui demo`: the product with no account, against an embedded, seeded service.

The demo lives in the `demo` package, imported here only when the command runs: it embeds the
reference service, whose packages (the `service` extra) an install of the client alone lacks.
Then the command says in one line how to get them (status 2, like any command that cannot run
as asked).
"""

from __future__ import annotations

import argparse
import importlib.util
from typing import Any

from tracker_tui.command_summaries import SUMMARIES
from tracker_tui.errors import UsageError
from tracker_tui.needs_terminal import require_terminal

SERVICE_PACKAGES = ("fastapi", "uvicorn")
"""What the `service` extra of pyproject.toml installs, which the demo's service runs on."""


def register(subparsers: Any, issue_commands: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help=SUMMARIES["demo"],
        description=(
            "Start the reference service on a free loopback port with a fresh workspace of "
            "seeded issues in a temporary folder, with a key held in memory only, turn on live "
            "updates, and open the app against it. Nothing is kept after it exits. Needs the "
            "'service' extra: pip install 'tracker-tui[service]'."
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
    if args.issues < 1:
        raise UsageError("--issues must be at least 1")
    missing = [name for name in SERVICE_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        raise UsageError(
            f"the demo runs the reference service, which needs {' and '.join(missing)}, from "
            "the 'service' extra: pip install 'tracker-tui[service]' (in a checkout: make demo)"
        )
    require_terminal()
    from demo.launch import run_demo

    return run_demo(issues=args.issues, another_user=args.another_user, read_only=args.read_only)
