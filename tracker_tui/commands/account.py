"""`tracker-tui login`, `logout` and `profiles`: which server, workspace and key to use.

The key is never taken from the command line, where every user of the machine can read it
(`ps`): it comes from stdin (`--with-key`, for scripts) or a hidden prompt.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from accounts.credentials import delete_key, parse_key, save_login
from accounts.errors import ProfileNotFoundError
from accounts.profiles import (
    AppPaths,
    Profile,
    ProfileStore,
    normalize_server_url,
    validate_profile_name,
)
from accounts.secret import Secret
from cache import ME_STATE_KEY, open_cache
from issuefields.frozen import Frozen
from sync.permissions import keep_granted, key_tag
from tracker_tui.collector import collect_again
from tracker_tui.command_summaries import SUMMARIES
from tracker_tui.errors import TrackerTuiError, UsageError
from tracker_tui.exit_codes import Exit
from tracker_tui.output import print_table

DEFAULT_PROFILE = "default"


def register(subparsers: Any, issue_commands: Any) -> None:
    login = subparsers.add_parser(
        "login",
        help=SUMMARIES["login"],
        description=(
            "Check the API key against the server, then save a profile (server and workspace, "
            "in config.toml) and the key (in the OS keyring, or with --insecure-storage in a "
            "file only you can read). The key is read from stdin with --with-key, else asked "
            "for without echo; it is never accepted as an argument."
        ),
    )
    login.add_argument("--server", required=True, metavar="URL", help="e.g. https://host/v1")
    login.add_argument(
        "--profile", dest="login_profile", metavar="NAME", help="profile name (default: default)"
    )
    login.add_argument("--workspace", metavar="NAME", help="workspace label (default: the key's)")
    login.add_argument("--with-key", action="store_true", help="read the API key from stdin")
    login.add_argument(
        "--insecure-storage",
        action="store_true",
        help="without a usable OS keyring, keep the key in a plaintext 0600 file",
    )
    login.set_defaults(run=run_login)

    logout = subparsers.add_parser(
        "logout",
        help=SUMMARIES["logout"],
        description="Remove the profile's key from the keyring and any key file; the profile "
        "stays in config.toml so `login` can reuse its name.",
    )
    logout.add_argument("--profile", dest="logout_profile", metavar="NAME", help="profile name")
    logout.set_defaults(run=run_logout)

    profiles = subparsers.add_parser(
        "profiles",
        help=SUMMARIES["profiles"],
        description="List the profiles in config.toml; '*' marks the default.",
    )
    profiles.set_defaults(run=run_profiles)


class Identity(Frozen):
    """Who the key is, as far as the server says."""

    _fields = ("user", "workspace", "user_id", "permissions")
    __slots__ = _fields
    user: str | None
    workspace: str | None
    user_id: str | None
    permissions: tuple[str, ...] | None
    """What the key may do, by `/me` (None on a server without it)."""

    def __init__(
        self,
        user: str | None,
        workspace: str | None,
        user_id: str | None = None,
        permissions: tuple[str, ...] | None = None,
    ) -> None:
        self._init(user, workspace, user_id, permissions)


class KeyRefused(TrackerTuiError):
    """The server does not know the key being logged in with."""


def read_key(with_key: bool) -> Secret:
    """The key from stdin or a hidden prompt; Ctrl-D or Ctrl-C at the prompt ends the command
    cleanly (the CLI's edge turns `EOFError` and `KeyboardInterrupt` into one line)."""
    if with_key:
        return parse_key(Secret(sys.stdin.read()), "stdin")
    if not sys.stdin.isatty():
        raise UsageError("no terminal to ask for the API key: pipe it in with --with-key")
    return parse_key(Secret(getpass.getpass("API key: ")), "the prompt")


async def check_key(server: str, key: Secret) -> Identity:
    """`GET /me` where the server has it, else a one-record list: either proves the key."""
    from sync.client import ApiClient
    from sync.errors import NotFound, UnexpectedStatus

    async with ApiClient(server, key) as client:
        try:
            me = (await client.me()).value
        except (NotFound, UnexpectedStatus):  # no `GET /me` (docs/api.md#current-user-get-me)
            await client.list_issues(per_page=1)
            return Identity(None, None)
        user = me.user.name or me.user.id if me.user else None
        workspace = me.workspace.name or me.workspace.id if me.workspace else None
        user_id = me.user.id if me.user else None
        return Identity(user, workspace, user_id, tuple(me.permissions))


def run_login(args: argparse.Namespace) -> int:
    import asyncio

    from sync.errors import Unauthorized

    server = normalize_server_url(args.server)
    name = validate_profile_name(args.login_profile or args.profile or DEFAULT_PROFILE)
    key = read_key(args.with_key)
    collect_again()
    try:
        identity = asyncio.run(check_key(server, key))
    except Unauthorized as error:
        raise KeyRefused(
            f"{server} refused this API key ({error.status} {error.code}): check that it was "
            "copied whole, or create a new one in the service's settings under API (a key is "
            "shown once, when it is made). Nothing was saved."
        ) from None
    store = ProfileStore(AppPaths.from_env())
    workspace = args.workspace or identity.workspace or DEFAULT_PROFILE
    profile = Profile(name=name, server=server, workspace=workspace)
    where = save_login(profile, key, insecure=args.insecure_storage)
    with open_cache(name) as cache:
        cache.state.set(ME_STATE_KEY, identity.user_id)
        if identity.permissions is not None:
            keep_granted(cache, server, key_tag(key.reveal()), list(identity.permissions))
    default = store.load().default == name
    who = f" as {identity.user}" if identity.user else ""
    print(
        f"Logged in to {server}{who} (workspace {workspace}); profile {name!r}"
        f"{' (default)' if default else ''}, key kept in {where.value}"
    )
    return Exit.OK


def run_logout(args: argparse.Namespace) -> int:
    store = ProfileStore(AppPaths.from_env())
    name = args.logout_profile or args.profile or store.load().default
    if name is None:
        raise UsageError("no default profile: name one with --profile")
    removed = delete_key(name)
    known = name in store.load().profiles
    if not removed and not known:
        raise ProfileNotFoundError(f"no profile named {name!r} and no key stored for it")
    places = " and ".join(source.value for source in removed) or "nowhere (none was stored)"
    print(f"Logged out of profile {name!r}: key removed from {places}")
    return Exit.OK


def run_profiles(args: argparse.Namespace) -> int:
    config = ProfileStore(AppPaths.from_env()).load()
    if not config.profiles:
        print("No profiles: run `tracker-tui login --server URL`.")
        return Exit.OK
    rows = [
        {
            "mark": "*" if profile.name == config.default else "",
            "name": profile.name,
            "server": profile.server,
            "workspace": profile.workspace,
            "key": profile.key_storage.value,
        }
        for profile in config.profiles.values()
    ]
    columns = [("mark", ""), ("name", "PROFILE"), ("server", "SERVER")]
    print_table(rows, [*columns, ("workspace", "WORKSPACE"), ("key", "KEY KEPT IN")])
    return Exit.OK
