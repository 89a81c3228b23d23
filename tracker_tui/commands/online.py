"""What the commands that manage the service share: the profile they run on, the check of the
key's permissions before anything is sent, the session they go online through, and storing a
new key as a profile.

These commands work on the server directly (nothing of theirs is queued: a key or a webhook
shows a secret once, which must never wait in an outbox), so the server must answer; when it
cannot, the command fails with the reason and nothing is done. What the key may do is known
from `/me` (at login and at sync) or from earlier 403s (`sync.permissions`): a command the
key may not run fails before a request is sent. The network layer is imported inside the
functions that go online, as everywhere in `tracker_tui.commands`.

This module is the one place the admin commands touch profiles and the keyring.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from accounts.credentials import ResolvedProfile, resolve_profile, save_login
from accounts.keystore import KeyringStore
from accounts.profiles import AppPaths, Profile, ProfileStore, validate_profile_name
from accounts.secret import Secret
from cache import open_cache
from sync.permissions import KeyPermissions, keep_granted, key_tag, remembered_permissions
from tracker_tui import errors
from tracker_tui.collector import collect_again
from tracker_tui.errors import TrackerTuiError, UsageError, describe

if TYPE_CHECKING:
    from cache import Cache
    from sync.admin import AdminApi

T = TypeVar("T")

KEY_ID_STATE_KEY = "api_key_id"
"""`{"key": tag, "id": key id}`: which key of the server a profile's key is, when it was made
here (`keys create --save-as`); `keys revoke` asks before revoking it."""


ONLINE_ONLY = (
    "nothing was done: this needs the server now and is never queued (a new key or webhook "
    "secret is shown once)"
)


class ServerUnreachable(TrackerTuiError):
    """An online-only command could not reach the server: nothing was made or queued."""


class KeyLacksPermission(TrackerTuiError):
    """The key is known not to have the permission a command needs: nothing was sent."""


def note_permission(parser: argparse.ArgumentParser, permission: str) -> None:
    """`--help` of `parser` ends with whether the profile's key may run it, when that is known
    (read only when the help is shown, so other commands pay nothing for it)."""
    plain = parser.format_help

    def format_help() -> str:
        return plain() + _permission_line(permission)

    parser.format_help = format_help  # type: ignore[method-assign]


def _permission_line(permission: str) -> str:
    name = _profile_in_argv()
    try:
        resolved = resolve_profile(name)
        known = permissions_of(resolved)
    except errors.EXPECTED:
        return ""
    profile = resolved.name or "the environment's"
    if known.lacks(permission):
        return (
            f"\nThe key of profile {profile} lacks `{permission}`: this command would be "
            "refused before anything is sent.\n"
        )
    if known.allows(permission):
        return f"\nThe key of profile {profile} has `{permission}`.\n"
    return ""


def _profile_in_argv() -> str | None:
    """`--profile NAME` as given before the command (the help is printed while parsing)."""
    argv = sys.argv[1:]
    for index, item in enumerate(argv):
        if item == "--profile" and index + 1 < len(argv):
            return argv[index + 1]
        if item.startswith("--profile="):
            return item.partition("=")[2]
    return None


def chosen_profile(args: argparse.Namespace) -> ResolvedProfile:
    return resolve_profile(args.profile)


def permissions_of(resolved: ResolvedProfile) -> KeyPermissions:
    """What the profile's key may do, as far as its cache knows (offline)."""
    if resolved.key is None:
        return KeyPermissions()
    with open_cache(resolved.cache_name) as cache:
        return remembered_permissions(cache, resolved.server, key_tag(resolved.key.reveal()))


def require(resolved: ResolvedProfile, permission: str, doing: str) -> None:
    """Refuse, before anything is sent, what the key is known not to be allowed to do."""
    if not permissions_of(resolved).lacks(permission):
        return
    profile = resolved.name or "the environment's"
    raise KeyLacksPermission(
        f"the key of profile {profile} may not {doing}: it lacks the `{permission}` "
        "permission, so nothing was sent. Use a profile whose key has it (--profile NAME), "
        f"or ask a workspace admin for a key with `{permission}`"
    )


def current_key_id(resolved: ResolvedProfile) -> str | None:
    """The server's id of the profile's key, when it was made by this client."""
    if resolved.key is None:
        return None
    with open_cache(resolved.cache_name) as cache:
        stored = cache.state.get(KEY_ID_STATE_KEY)
    if isinstance(stored, dict) and stored.get("key") == key_tag(resolved.key.reveal()):
        found = stored.get("id")
        return found if isinstance(found, str) else None
    return None


def run_online(
    resolved: ResolvedProfile,
    work: Callable[[AdminApi], Awaitable[T]],
    *,
    cache: Cache | None = None,
    unreachable: str = ONLINE_ONLY,
) -> T:
    """Run `work` on a session of the profile: the same rate limiter, request log and
    permission learning as every other request of the profile (on `cache` when the caller
    has the profile's open already). A server that cannot be reached fails the command with
    `unreachable` said after the reason."""
    import asyncio

    from sync.admin import AdminApi
    from sync.errors import NetworkError
    from sync.session import open_session

    async def run() -> T:
        async with open_session(resolved, cache=cache) as session:
            return await work(AdminApi(session.client))

    collect_again()
    try:
        return asyncio.run(run())
    except NetworkError as error:
        raise ServerUnreachable(f"{describe(error)}; {unreachable}") from None


def check_new_profile(name: str) -> str:
    """A name for a new profile, and a keyring to keep its key in, before any key is made:
    a key made and then not kept would be lost (it is never shown when stored)."""
    name = validate_profile_name(name)
    if name in ProfileStore(AppPaths.from_env()).load().profiles:
        raise UsageError(f"profile {name!r} exists already: choose another name for --save-as")
    status = KeyringStore().status()
    if not status.usable:
        raise UsageError(
            f"no OS keyring to keep the new key in ({status.reason}); nothing was made. Run "
            "without --save-as to see the key once, and keep it yourself"
        )
    return name


def save_as_profile(
    name: str,
    resolved: ResolvedProfile,
    workspace: str,
    key: Secret,
    key_id: str,
    permissions: list[str],
) -> str:
    """Keep a new key in the OS keyring as profile `name`, on the same server; its cache
    learns what the key may do and which key it is. Returns where the key went."""
    profile = Profile(name=name, server=resolved.server, workspace=workspace)
    where = save_login(profile, key, insecure=False)
    with open_cache(name) as cache:
        tag = key_tag(key.reveal())
        keep_granted(cache, resolved.server, tag, permissions)
        cache.state.set(KEY_ID_STATE_KEY, {"key": tag, "id": key_id})
    return where.value
