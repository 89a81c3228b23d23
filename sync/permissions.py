"""What the profile's key may do, remembered so a command or a screen knows before it asks.

`/me`, where a server has it, lists the key's permissions (docs/api.md#current-user-get-me); a
server without it only says so with a 403 that names the permission
(docs/api.md#permissions). Both are kept in the cache's key/value state,
tagged with the server and a short tag of the key, so that what one key may do is never taken
for another's (a new login, or another TRACKER_API_KEY sharing the env cache). Unknown is a
normal state: a check answers None and the caller lets the request go, as before this existed.

The tag is the first 12 hex digits of the key's SHA-256: it tells two keys apart and says
nothing usable about a key of 40 random characters. Permissions never change for a key
(no server here edits a key), so `/me` is asked once per key (`sync.session`).

Apart from the HTTP client, so that the command line's checks before a write load none of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cache.errors import CacheError
from issuefields.frozen import Frozen

if TYPE_CHECKING:
    from cache import Cache, JsonValue
    from sync.models import Me
    from sync.session import SyncSession

PERMISSIONS_STATE_KEY = "key_permissions"

ADMIN = "admin"
WEBHOOKS = "webhooks:manage"
ISSUES_WRITE = "issues:write"
COMMENTS_WRITE = "comments:write"
PROJECTS_WRITE = "projects:write"

KNOWN = (
    "issues:read",
    ISSUES_WRITE,
    "projects:read",
    PROJECTS_WRITE,
    "comments:read",
    COMMENTS_WRITE,
    WEBHOOKS,
    ADMIN,
)
"""The permissions the client knows (docs/api.md#permissions), in that order (a server may
have others: they are kept as text)."""


def key_tag(key: str) -> str:
    import hashlib  # with OpenSSL behind it: reads never tag a key

    return hashlib.sha256(key.strip().encode()).hexdigest()[:12]


class KeyPermissions(Frozen):
    """`granted` as `/me` listed it (None: not known); `denied` as 403s named them."""

    _fields = ("granted", "denied")
    __slots__ = _fields
    granted: frozenset[str] | None
    denied: frozenset[str]

    def __init__(
        self, granted: frozenset[str] | None = None, denied: frozenset[str] = frozenset()
    ) -> None:
        self._init(granted, denied)

    def allows(self, permission: str) -> bool | None:
        """True or False when known, None when nothing says; `/me` outranks a 403's words."""
        if self.granted is not None:
            return permission in self.granted
        return False if permission in self.denied else None

    def lacks(self, permission: str) -> bool:
        """Whether the key is known not to have `permission` (unknown: False)."""
        return self.allows(permission) is False


def remembered_permissions(cache: Cache, server: str, tag: str) -> KeyPermissions:
    """What is known of this key on this server; nothing known is `KeyPermissions()`."""
    try:
        stored = cache.state.get(PERMISSIONS_STATE_KEY)
    except CacheError:
        return KeyPermissions()
    if not isinstance(stored, dict) or stored.get("server") != server or stored.get("key") != tag:
        return KeyPermissions()
    granted = stored.get("granted")
    denied = stored.get("denied")
    return KeyPermissions(
        granted=frozenset(map(str, granted)) if isinstance(granted, list) else None,
        denied=frozenset(map(str, denied)) if isinstance(denied, list) else frozenset(),
    )


def keep_granted(cache: Cache, server: str, tag: str, granted: list[str]) -> KeyPermissions:
    """Store `/me`'s list (it outranks what 403s said before)."""
    known = KeyPermissions(frozenset(granted))
    _store(cache, server, tag, known)
    return known


def learn_denied(cache: Cache, server: str, tag: str, permission: str) -> None:
    """A 403 named a permission this key lacks."""
    known = remembered_permissions(cache, server, tag)
    if permission in known.denied:
        return
    _store(cache, server, tag, KeyPermissions(known.granted, known.denied | {permission}))


def _store(cache: Cache, server: str, tag: str, known: KeyPermissions) -> None:
    granted: JsonValue = None if known.granted is None else list(sorted(known.granted))
    denied: JsonValue = list(sorted(known.denied))
    cache.state.set(
        PERMISSIONS_STATE_KEY,
        {"server": server, "key": tag, "granted": granted, "denied": denied},
    )


def session_permissions(session: SyncSession) -> KeyPermissions:
    return remembered_permissions(session.cache, session.server, session.key_tag)


async def learn_from_me(session: SyncSession, *, who: bool = False) -> Me | None:
    """Ask `/me` (where the server has it) when this key's permissions are not known yet, or
    when `who` asks for the answer anyway; store its permissions. None when not asked or it
    failed: only a help, whose failure the caller's own requests meet and say."""
    from sync.errors import SyncError

    if not session.features.me:
        return None
    if not who and session_permissions(session).granted is not None:
        return None
    try:
        me = (await session.client.me()).value
    except SyncError:
        return None
    keep_granted(session.cache, session.server, session.key_tag, list(me.permissions))
    if me.workspace is not None:
        from sync.admin import keep_workspace

        keep_workspace(session.cache, me.workspace)
    if me.user is not None:
        session.user = me.user.id
    return me
