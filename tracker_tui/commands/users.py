"""`tracker-tui users [--json]`: who can be assigned, from the local cache (offline).

`--assignee` takes `me`, an id, or a name or the start of one; this is where to look them up.
"""

from __future__ import annotations

import argparse
from typing import Any

from cache import ME_STATE_KEY
from tracker_tui.command_summaries import SUMMARIES
from tracker_tui.commands.read import open_profile_cache
from tracker_tui.exit_codes import Exit
from tracker_tui.output import print_json, print_table


def register(subparsers: Any, issue_commands: Any) -> None:
    users = subparsers.add_parser(
        "users",
        help=SUMMARIES["users"],
        description=(
            "The members of the workspace, as last synced; '*' marks you. `--assignee` "
            "takes `me`, a user id, or a name or the start of one of its words."
        ),
    )
    users.add_argument("--json", action="store_true", help="JSON with the API's field names")
    users.set_defaults(run=run_users)


def run_users(args: argparse.Namespace) -> int:
    with open_profile_cache(args) as cache:
        rows = cache.reads.users()
        me = cache.state.get(ME_STATE_KEY)
    if args.json:
        print_json([{"id": u.id, "name": u.name, "email": u.email, "me": u.id == me} for u in rows])
        return Exit.OK
    if not rows:
        print("no users in the local cache: run `tracker-tui sync` (the server may not list them)")
        return Exit.OK
    table = [
        {
            "mark": "*" if user.id == me else "",
            "name": user.name,
            "email": user.email,
            "id": user.id,
        }
        for user in rows
    ]
    print_table(table, [("mark", ""), ("name", "NAME"), ("email", "EMAIL"), ("id", "ID")])
    return Exit.OK
