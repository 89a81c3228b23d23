"""`tracker-tui completion SHELL`: a completion script for bash, zsh or fish, made by shtab.

The script is generated from the parser, so it offers every command and option there is, and
it is static: pressing tab runs the shell's own code, never Python, so completing does not wait
for the client's imports (building the script does, once, when it is installed). What to put
in which file is in `--help` and README.md, 'Shell completion'.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tracker_tui.command_summaries import SUMMARIES

SHELLS = ("bash", "zsh", "fish")

INSTALL = """\
Install it where your shell looks for completions, once (and again after an upgrade):
  bash:  tracker-tui completion bash > ~/.local/share/bash-completion/completions/tracker-tui
  zsh:   tracker-tui completion zsh > ~/.zfunc/_tracker-tui
         (with fpath+=(~/.zfunc); autoload -Uz compinit; compinit in ~/.zshrc)
  fish:  tracker-tui completion fish > ~/.config/fish/completions/tracker-tui.fish"""


def register(subparsers: Any, issue_commands: Any) -> None:
    completion = subparsers.add_parser(
        "completion",
        help=SUMMARIES["completion"],
        description=(
            "Print a script that completes tracker-tui's commands and options in SHELL. It is "
            "plain shell code: completing runs no Python, so it answers at once."
        ),
        epilog=INSTALL,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    completion.add_argument("shell", choices=SHELLS, metavar="SHELL", help=", ".join(SHELLS))
    completion.set_defaults(run=run_completion)


def run_completion(args: argparse.Namespace) -> int:
    import shtab

    parser: argparse.ArgumentParser = args.root_parser
    sys.stdout.write(shtab.complete(parser, shell=args.shell))
    sys.stdout.write("\n")
    return 0
