"""`tracker-tui workspace [--json]` and `workspace rename NAME [--no-push]`: the key's workspace.

Showing it asks the server (and keeps the answer in the cache). A rename is a write like any
other: checked, queued durably in the outbox against the workspace the cache knows, and
pushed at once unless `--no-push` (offline work; the next sync or the app sends it). It needs
the `admin` permission: a key known to lack it is refused before anything is queued, and a
403 from the server leaves the rename failed in the outbox, naming the permission and what to
do (`sync.push.outcomes`), with exit status 3 like every refused write.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from cache import EntryState, Resource, open_cache
from sync.permissions import ADMIN
from tracker_tui.command_summaries import SUMMARIES
from tracker_tui.commands.online import (
    chosen_profile,
    note_permission,
    permissions_of,
    require,
    run_online,
)
from tracker_tui.commands.write import add_push_option, outcome
from tracker_tui.errors import UsageError
from tracker_tui.exit_codes import Exit
from tracker_tui.output import print_json

if TYPE_CHECKING:
    from accounts.credentials import ResolvedProfile
    from cache import Cache, WorkspaceRow
    from sync.admin import AdminApi
    from sync.models import Workspace

NAME_MAX = 100


def register(subparsers: Any, issue_commands: Any) -> None:
    workspace = subparsers.add_parser(
        "workspace",
        help=SUMMARIES["workspace"],
        description=(
            "The workspace the profile's key belongs to: name, id and plan, asked of the "
            "server. `workspace rename NAME` renames it (the key needs `admin`): queued like "
            "every write, and sent at once unless --no-push."
        ),
    )
    workspace.add_argument("--json", action="store_true", help="JSON with the API's field names")
    workspace.set_defaults(run=run_show)
    commands = workspace.add_subparsers(dest="workspace_command", metavar="COMMAND")
    rename = commands.add_parser(
        "rename",
        help="rename the workspace (needs admin)",
        description=(
            "Rename the workspace: the rename is queued in the outbox and sent at once (with "
            "--no-push, at the next sync or by the app). The key needs `admin`; a refusal "
            "stays in `tracker-tui outbox`, failed, saying what to do. Exit status: 0 renamed "
            "(or queued, with --no-push), 2 refused before anything was queued, 3 the server "
            "refused it, 4 the server could not be reached and the rename stays queued."
        ),
    )
    rename.add_argument("name", metavar="NAME", help=f"1 to {NAME_MAX} characters")
    rename.add_argument("--json", action="store_true", help="the workspace as shown, as JSON")
    add_push_option(rename)
    rename.set_defaults(run=run_rename)
    note_permission(rename, ADMIN)


def _as_json(workspace: Workspace) -> dict[str, Any]:
    return workspace.model_dump(mode="json", exclude_none=True)


def run_show(args: argparse.Namespace) -> int:
    from sync.admin import keep_workspace

    resolved = chosen_profile(args)
    with open_cache(resolved.cache_name) as cache:

        async def work(api: AdminApi) -> Workspace:
            return (await api.workspace()).value

        workspace = run_online(resolved, work, cache=cache)
        keep_workspace(cache, workspace)
        pending = _pending_name(cache.reads.workspace())
    granted = permissions_of(resolved).granted
    if args.json:
        print_json(
            {
                **_as_json(workspace),
                "key_permissions": None if granted is None else sorted(granted),
                "pending_name": pending,
            }
        )
        return Exit.OK
    print(f"workspace  {workspace.name or '-'}")
    if pending is not None:
        print(f"           (rename to {pending!r} queued: `tracker-tui outbox`)")
    print(f"id         {workspace.id}")
    print(f"plan       {workspace.plan or '-'}")
    allowed = ", ".join(sorted(granted)) if granted is not None else "unknown (no /me)"
    print(f"your key   {allowed}")
    return Exit.OK


def _pending_name(row: WorkspaceRow | None) -> str | None:
    """The name a queued (or refused) rename gives, while the server has another."""
    if row is None or not row.entries:
        return None
    return row.name


def run_rename(args: argparse.Namespace) -> int:
    name = args.name.strip()
    if not name or len(name) > NAME_MAX:
        raise UsageError(f"a workspace name is 1 to {NAME_MAX} characters, not {len(name)}")
    resolved = chosen_profile(args)
    require(resolved, ADMIN, "rename the workspace")
    with open_cache(resolved.cache_name) as cache:
        known = _known_workspace(args, resolved, cache)
        entry = cache.outbox.update(Resource.WORKSPACES, known.id, {"name": name})
        if entry is None:
            print(f"The workspace is named {name!r} already: nothing to do")
            return Exit.OK
        status = outcome(args, cache, [entry])
        now = cache.outbox.entry(entry.id)
        shown = cache.reads.workspace()
    if args.json:
        print_json(_row_json(shown, now.id, now.state))
    elif args.no_push:
        print(
            f"Rename of workspace {known.name!r} to {name!r} queued (outbox entry {now.id}); "
            "the next sync sends it"
        )
    elif now.state is EntryState.DONE:
        print(f"Workspace {known.name or known.id!r} renamed to {name!r}")
    return status


def _known_workspace(
    args: argparse.Namespace, resolved: ResolvedProfile, cache: Cache
) -> WorkspaceRow:
    """The workspace the cache knows, read from the server first when it knows none yet
    (a rename needs its id; with --no-push nothing may be asked)."""
    from sync.admin import keep_workspace

    found = cache.reads.workspace()
    if found is not None:
        return found
    if args.no_push:
        raise UsageError(
            "the workspace is not known here yet, so a rename cannot be queued offline: run "
            "`tracker-tui workspace` or `tracker-tui sync` once online first"
        )

    async def work(api: AdminApi) -> Workspace:
        return (await api.workspace()).value

    unreachable = (
        "the workspace is not known here yet, so the rename was not queued: run it again once "
        "the server can be reached (later renames queue offline too)"
    )
    keep_workspace(cache, run_online(resolved, work, cache=cache, unreachable=unreachable))
    found = cache.reads.workspace()
    assert found is not None  # just stored
    return found


def _row_json(row: WorkspaceRow | None, entry_id: int, state: EntryState) -> dict[str, Any]:
    record = {} if row is None else dict(row.record)
    return {**record, "outbox_entry": entry_id, "write_state": state.value}
