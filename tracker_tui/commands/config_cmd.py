"""`tracker-tui config`: where config.toml is, its JSON Schema, and a check of a file.

`config check` names every problem of a file with its line (`config.toml:12: keymap: ...`),
before the app would refuse to start on it; it reads the schema shipped in the package, so it
loads neither Textual nor the network layer (tracker_tui.data.config_check).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from accounts.profiles import AppPaths
from tracker_tui.command_summaries import SUMMARIES
from tracker_tui.exit_codes import Exit
from tracker_tui.output import notice


def register(subparsers: Any, issue_commands: Any) -> None:
    config = subparsers.add_parser(
        "config",
        help=SUMMARIES["config"],
        description=(
            "config.toml holds the profiles, the app's [keymap] and [columns]; "
            "docs/configuration.md describes every key."
        ),
    )
    commands = config.add_subparsers(dest="config_command", metavar="CONFIG_COMMAND")
    config.set_defaults(run=lambda _args: _help(config))
    check = commands.add_parser(
        "check",
        help="check a config file against the schema, the keymap and the columns",
        description=(
            "Check FILE (default: this profile's config.toml) and print each problem with its "
            "line, as `FILE:LINE: what`; exit 1 when there is any, 0 when there is none."
        ),
    )
    check.add_argument("file", nargs="?", type=Path, metavar="FILE", help="the file to check")
    check.set_defaults(run=run_check)
    schema = commands.add_parser(
        "schema",
        help="print the JSON Schema of config.toml (for an editor's completion and checks)",
        description=(
            "Print the JSON Schema config.toml follows, or with --path where the installed "
            "copy is (taplo and VS Code's Even Better TOML can point at either)."
        ),
    )
    schema.add_argument("--path", action="store_true", help="print the file's path instead")
    schema.set_defaults(run=run_schema)
    path = commands.add_parser("path", help="print where config.toml is (TRACKER_HOME moves it)")
    path.set_defaults(run=run_path)


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return Exit.USAGE


def run_check(args: argparse.Namespace) -> int:
    from tracker_tui.data.config_check import check_text

    path: Path = args.file or AppPaths.from_env().config_file
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        notice(f"{path}: no such file (the app makes it at the first login)")
        return Exit.USAGE
    except (OSError, UnicodeDecodeError) as error:
        notice(f"{path}: cannot be read: {error}")
        return Exit.USAGE
    problems = check_text(text)
    for problem in problems:
        print(problem.at(path))
    count = len(problems)
    notice(f"{path}: {count} problem{'s' if count != 1 else ''}" if count else f"{path}: fine")
    return Exit.FAILED if problems else Exit.OK


def run_schema(args: argparse.Namespace) -> int:
    from importlib import resources

    from tracker_tui.data.config_check import SCHEMA_NAME

    found = resources.files("tracker_tui").joinpath(SCHEMA_NAME)
    if args.path:
        print(found)
    else:
        sys.stdout.write(found.read_text(encoding="utf-8"))
    return Exit.OK


def run_path(_args: argparse.Namespace) -> int:
    print(AppPaths.from_env().config_file)
    return Exit.OK
