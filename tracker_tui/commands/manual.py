"""`tracker-tui man`: the manual page (roff), generated from the parser by argparse-manpage.

Every command and option has its page section, written from the same `--help` texts, so the
manual cannot drift from the program. `make man` writes it to build/man/tracker-tui.1;
`tracker-tui man | man -l -` reads it at once.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tracker_tui import __version__
from tracker_tui.command_summaries import SUMMARIES

SEE_ALSO = (
    "The README (Keys, Configuration, Commands) and docs/configuration.md describe the app, "
    "config.toml and its [keymap] and [columns] tables."
)


def register(subparsers: Any, issue_commands: Any) -> None:
    manual = subparsers.add_parser(
        "man",
        help=SUMMARIES["man"],
        description="Print tracker-tui's manual page, generated from its commands' help.",
    )
    manual.set_defaults(run=run_manual)


def run_manual(args: argparse.Namespace) -> int:
    from argparse_manpage.manpage import Manpage

    parser: argparse.ArgumentParser = args.root_parser
    page = Manpage(parser)
    page.source = f"tracker-tui {__version__}"
    page.manual = "tracker-tui manual"
    page.description = "a keyboard-driven terminal client for an issue tracker"
    sys.stdout.write(f"{page}\n.SH SEE ALSO\n{SEE_ALSO}\n")
    return 0
