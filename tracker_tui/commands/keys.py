"""`tracker-tui keys list | create | revoke`: the workspace's API keys (online; needs `admin`).

A new key's value is in the server's answer to its creation and nowhere else, ever. `create`
prints it once; with `--save-as PROFILE` it goes straight into the OS keyring as that new
profile's key and is not printed at all (so it never reaches the terminal's scrollback), and
it is written nowhere else: not in config.toml, the cache, a log, or argv. Revoking the key the
profile itself uses (or one it cannot tell from it) asks first; `--yes` skips the question.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from accounts.secret import Secret
from sync.permissions import ADMIN, KNOWN
from tracker_tui import errors
from tracker_tui.command_summaries import SUMMARIES
from tracker_tui.commands.online import (
    check_new_profile,
    chosen_profile,
    current_key_id,
    note_permission,
    require,
    run_online,
    save_as_profile,
)
from tracker_tui.errors import TrackerTuiError, UsageError, describe
from tracker_tui.exit_codes import Exit
from tracker_tui.output import ask, notice, print_json, print_table

if TYPE_CHECKING:
    from accounts.credentials import ResolvedProfile
    from sync.admin import AdminApi, OwnKey
    from sync.models import ApiKey, Workspace

EXPIRY_MAX_DAYS = 36_500


def register(subparsers: Any, issue_commands: Any) -> None:
    keys = subparsers.add_parser(
        "keys",
        help=SUMMARIES["keys"],
        description=(
            "The workspace's API keys. A key's value is shown once, when it is made; "
            "`create --save-as PROFILE` keeps it in the OS keyring as a new profile instead, "
            "without showing it. The key of this profile needs the `admin` permission."
        ),
    )
    keys.set_defaults(run=lambda _args: _usage(keys))
    commands = keys.add_subparsers(dest="keys_command", metavar="COMMAND")

    listing = commands.add_parser("list", help="list the keys (never their values)")
    listing.add_argument("--json", action="store_true", help="JSON with the API's field names")
    listing.set_defaults(run=run_list)

    create = commands.add_parser(
        "create",
        help="make a key; shown once, or kept as a profile with --save-as",
        description=(
            "Make an API key of your user. Without --permission it gets every permission. "
            "The key is printed once (copy it now: the server never shows it again), unless "
            "--save-as keeps it in the OS keyring as a new profile on this server."
        ),
    )
    create.add_argument("--name", required=True, help="what the key is for, e.g. 'CI bot'")
    create.add_argument(
        "--permission",
        action="append",
        default=[],
        metavar="P",
        help=f"repeat for each: {', '.join(KNOWN)} (default: all)",
    )
    create.add_argument(
        "--expires-in", type=float, metavar="DAYS", help="expire after DAYS days (default: never)"
    )
    create.add_argument(
        "--save-as",
        metavar="PROFILE",
        help="keep the key in the OS keyring as this new profile; it is not printed",
    )
    create.add_argument("--json", action="store_true", help="the new key as JSON")
    create.set_defaults(run=run_create)

    revoke = commands.add_parser(
        "revoke",
        help="revoke a key (asks first when it may be this profile's own)",
        description=(
            "Revoke a key: every request with it is refused from then on. Revoking the key "
            "this profile uses, or one it cannot tell from it, asks first; --yes skips that."
        ),
    )
    revoke.add_argument("id", metavar="ID", help="the key's id (key_...), from `keys list`")
    revoke.add_argument("--yes", "-y", action="store_true", help="revoke without asking")
    revoke.add_argument("--json", action="store_true", help="the revoked key as JSON")
    revoke.set_defaults(run=run_revoke)
    for parser in (keys, listing, create, revoke):
        note_permission(parser, ADMIN)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return Exit.USAGE


def _state(key: ApiKey, now: datetime) -> str:
    if key.revoked:
        return "revoked"
    if key.expires_at is not None and key.expires_at <= now:
        return "expired"
    return "active"


def _as_json(key: ApiKey) -> dict[str, Any]:
    return key.model_dump(mode="json", exclude={"key"}, exclude_none=True)


def run_list(args: argparse.Namespace) -> int:
    resolved = chosen_profile(args)
    require(resolved, ADMIN, "list the API keys")

    found, granted = run_online(resolved, _keys_and_me)
    own = current_key_id(resolved) or _told(found, granted).mine
    if args.json:
        print_json([{**_as_json(key), "this_profile": key.id == own} for key in found])
        return Exit.OK
    now = datetime.now(UTC)
    rows = [
        {
            "mark": "*" if key.id == own else "",
            "id": key.id,
            "name": key.name,
            "permissions": ",".join(key.permissions),
            "expires": key.expires_at.strftime("%Y-%m-%d %H:%M") if key.expires_at else "never",
            "state": _state(key, now),
        }
        for key in found
    ]
    columns = [("mark", ""), ("id", "ID"), ("name", "NAME"), ("state", "STATE")]
    print_table(
        rows,
        [*columns, ("expires", "EXPIRES (UTC)"), ("permissions", "PERMISSIONS")],
        widest={"name": 30},
    )
    return Exit.OK


def _permissions(given: list[str]) -> list[str] | None:
    if not given:
        return None
    chosen = list(dict.fromkeys(p.strip() for p in given))
    unknown = [p for p in chosen if p not in KNOWN]
    if unknown:
        raise UsageError(f"unknown permission {unknown[0]!r}: choose from {', '.join(KNOWN)}")
    return chosen


def run_create(args: argparse.Namespace) -> int:
    name = args.name.strip()
    if not name or len(name) > 100:
        raise UsageError("a key's name is 1 to 100 characters")
    permissions = _permissions(args.permission)
    days = args.expires_in
    if days is not None and not 0 < days <= EXPIRY_MAX_DAYS:
        raise UsageError(f"--expires-in is a number of days above 0, at most {EXPIRY_MAX_DAYS}")
    profile = None if args.save_as is None else check_new_profile(args.save_as)
    resolved = chosen_profile(args)
    require(resolved, ADMIN, "create API keys")
    from sync.errors import SyncError

    async def work(api: AdminApi) -> tuple[ApiKey, Workspace | None]:
        made = (await api.create_key(name, permissions, days)).value
        if profile is None or resolved.workspace is not None:
            return made, None
        try:
            return made, (await api.workspace()).value
        except SyncError:
            return made, None

    made, workspace = run_online(resolved, work)
    value = Secret(made.key or "")
    made = made.model_copy(update={"key": None})
    if not value.reveal():
        raise TrackerTuiError(f"the server made key {made.id} but did not answer its value")
    if profile is not None:
        label = resolved.workspace or (workspace.name if workspace else None) or profile
        return _save(profile, resolved, label, value, made, args.json)
    if args.json:
        print_json({**_as_json(made), "key": value.reveal()})
        return Exit.OK
    expiry = f", expires {made.expires_at:%Y-%m-%d %H:%M} UTC" if made.expires_at else ""
    print(f"Created key {made.id} ({made.name}; {', '.join(made.permissions)}{expiry}):")
    print(f"\n    {value.reveal()}\n")
    print(
        "This is the only time it is shown: keep it now (e.g. `tracker-tui login --server "
        f"{resolved.server} --profile NAME --with-key`, pasting it on stdin)."
    )
    return Exit.OK


def _save(
    profile: str,
    resolved: ResolvedProfile,
    workspace: str,
    value: Secret,
    made: ApiKey,
    as_json: bool,
) -> int:
    """Keep the new key as a profile; if that fails, revoke it (it was never shown, so no one
    could use it) and say so."""
    from sync.errors import SyncError

    try:
        where = save_as_profile(profile, resolved, workspace, value, made.id, made.permissions)
    except errors.EXPECTED as error:
        del value
        reason = describe(error)

        async def undo(api: AdminApi) -> None:
            await api.revoke_key(made.id)

        try:
            run_online(resolved, undo)
            after = f"key {made.id} was revoked again, since no one has it"
        except SyncError as revoking:
            after = f"revoke key {made.id} by hand: {describe(revoking)}"
        raise TrackerTuiError(f"could not keep the new key as profile {profile!r} ({reason}); "
                              f"{after}") from None  # fmt: skip
    if as_json:
        print_json({**_as_json(made), "profile": profile, "stored_in": where})
        return Exit.OK
    print(
        f"Created key {made.id} ({made.name}; {', '.join(made.permissions)}) and kept it in "
        f"the {where} as profile {profile!r}; it was not shown. Use it with "
        f"`tracker-tui --profile {profile} ...`."
    )
    return Exit.OK


def run_revoke(args: argparse.Namespace) -> int:
    resolved = chosen_profile(args)
    require(resolved, ADMIN, "revoke API keys")
    own, maybe = _which_is_mine(resolved, args.id)
    if (args.id == own or maybe) and not _confirmed(
        args, resolved.name or "the environment's", args.id == own
    ):
        return Exit.INTERRUPTED

    async def work(api: AdminApi) -> ApiKey | None:
        return (await api.revoke_key(args.id)).value

    revoked = run_online(resolved, work)
    if args.json:
        print_json(_as_json(revoked) if revoked else {"id": args.id, "revoked": True})
    else:
        print(f"Revoked key {args.id}{f' ({revoked.name})' if revoked and revoked.name else ''}")
    return Exit.OK


async def _keys_and_me(api: AdminApi) -> tuple[list[ApiKey], frozenset[str] | None]:
    """The workspace's keys, and the permissions `/me` gives the caller's (None without it)."""
    from sync.admin import ABSENT

    keys = await api.list_keys()
    try:
        return keys, frozenset((await api.me()).value.permissions)
    except ABSENT:
        return keys, None


def _told(keys: list[ApiKey], granted: frozenset[str] | None) -> OwnKey:
    """Which keys may be the profile's own (`sync.admin.own_key`); all of them when unknown."""
    from sync.admin import OwnKey, own_key

    if granted is None:
        return OwnKey(frozenset(key.id for key in keys))
    return own_key(keys, granted, datetime.now(UTC))


def _which_is_mine(resolved: ResolvedProfile, key_id: str) -> tuple[str | None, bool]:
    """The profile's own key id where known, and whether `key_id` may be it otherwise: known
    when this client made the key (`--save-as`), else told by the listing's permissions
    against `/me`'s (one request more); a key that cannot be ours is revoked without asking."""
    stored = current_key_id(resolved)
    if stored is not None:
        return stored, False
    keys, granted = run_online(resolved, _keys_and_me)
    told = _told(keys, granted)
    if key_id not in {key.id for key in keys}:
        return told.mine, False  # the server's 404 says so
    return told.mine, told.may_be(key_id) and told.mine is None


def _confirmed(args: argparse.Namespace, profile: str, known: bool) -> bool:
    if args.yes:
        return True
    which = (
        f"{args.id} is the key profile {profile} uses"
        if known
        else f"this client cannot tell whether {args.id} is the key profile {profile} uses"
    )
    question = f"{which}; once revoked, that profile stops working. Revoke it? [y/N] "
    if not sys.stdin.isatty():
        raise UsageError(f"{which}: not revoking without a yes; add --yes in scripts")
    if ask(question).strip().lower() in ("y", "yes"):
        return True
    notice(f"tracker-tui: key {args.id} not revoked")
    return False
