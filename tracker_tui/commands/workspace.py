"""`tracker-tui workspace [--json]` and `workspace rename NAME`: the key's workspace, online.

Renaming needs the `admin` permission; a key known to lack it is refused before anything is
sent, and a 403 from the server names the permission and what to do.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from sync.permissions import ADMIN
from tracker_tui.commands.online import (
    chosen_profile,
    note_permission,
    permissions_of,
    require,
    run_online,
)
from tracker_tui.errors import UsageError
from tracker_tui.exit_codes import Exit
from tracker_tui.output import print_json

if TYPE_CHECKING:
    from sync.admin import AdminApi
    from sync.models import Workspace

NAME_MAX = 100


def register(subparsers: Any, issue_commands: Any) -> None:
    workspace = subparsers.add_parser(
        "workspace",
        help="show the key's workspace, or rename it (online)",
        description=(
            "The workspace the profile's key belongs to: name, id and plan, asked of the "
            "server. `workspace rename NAME` renames it (the key needs `admin`)."
        ),
    )
    workspace.add_argument("--json", action="store_true", help="JSON with the API's field names")
    workspace.set_defaults(run=run_show)
    commands = workspace.add_subparsers(dest="workspace_command", metavar="COMMAND")
    rename = commands.add_parser(
        "rename",
        help="rename the workspace (needs admin)",
        description="Rename the workspace; online only, and the key needs `admin`.",
    )
    rename.add_argument("name", metavar="NAME", help=f"1 to {NAME_MAX} characters")
    rename.add_argument("--json", action="store_true", help="the renamed workspace as JSON")
    rename.set_defaults(run=run_rename)
    note_permission(rename, ADMIN)


def _as_json(workspace: Workspace) -> dict[str, Any]:
    return workspace.model_dump(mode="json", exclude_none=True)


def run_show(args: argparse.Namespace) -> int:
    resolved = chosen_profile(args)

    async def work(api: AdminApi) -> Workspace:
        return (await api.workspace()).value

    workspace = run_online(resolved, work)
    granted = permissions_of(resolved).granted
    if args.json:
        print_json(
            {**_as_json(workspace), "key_permissions": None if granted is None else sorted(granted)}
        )
        return Exit.OK
    print(f"workspace  {workspace.name or '-'}")
    print(f"id         {workspace.id}")
    print(f"plan       {workspace.plan or '-'}")
    allowed = ", ".join(sorted(granted)) if granted is not None else "unknown (no /me)"
    print(f"your key   {allowed}")
    return Exit.OK


def run_rename(args: argparse.Namespace) -> int:
    name = args.name.strip()
    if not name or len(name) > NAME_MAX:
        raise UsageError(f"a workspace name is 1 to {NAME_MAX} characters, not {len(name)}")
    resolved = chosen_profile(args)
    require(resolved, ADMIN, "rename the workspace")

    async def work(api: AdminApi) -> tuple[str | None, Workspace]:
        current = (await api.workspace()).value
        return current.name, (await api.rename_workspace(current.id, name)).value

    before, renamed = run_online(resolved, work)
    if args.json:
        print_json(_as_json(renamed))
    else:
        print(f"Workspace {before or renamed.id!r} renamed to {renamed.name!r}")
    return Exit.OK
