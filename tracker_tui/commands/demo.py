"""`tracker-tui demo`: the product with no account, against an embedded, seeded service."""

from __future__ import annotations

import argparse
import threading
from typing import Any

from tracker_tui.demo_service import DemoService


def register(subparsers: Any, issue_commands: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="run against an embedded demo service with seeded data (no account needed)",
        description=(
            "Start the reference service on a free loopback port with a fresh workspace of "
            "seeded issues in a temporary folder, with a key held in memory only. Nothing is "
            "kept after it exits."
        ),
    )
    parser.add_argument(
        "--issues", type=int, default=3_000, help="how many issues to seed (default 3000)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with DemoService(issues=args.issues) as service:
        print(f"Demo service with {args.issues} issues at {service.base_url}")
        print("The terminal app is not wired to it yet; press Ctrl+C to stop.")
        threading.Event().wait()
    return 0
