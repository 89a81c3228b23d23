"""What a sync leaves in a profile's cache for the next process, and how it is read back.

The server's features (probed once per server URL), the limits the rate limiter learned (so a
new process does not start at Free's 60 a minute), the last pull that finished and the records
a pull could not read live in the cache's key/value state. `sync.session` and the pull engine
write them; `tracker-tui status` (and the app's sync panel) read them, which is why they are
here, apart from the HTTP client and the engines.

Records a pull could not read (docs/sync.md#records-the-cache-cannot-hold): one the models
cannot read (no id, a timestamp that is not one) is skipped and the rest of its page stored,
the cursor moving on past it, so the cache holds no copy of it, or an older one. Only the
report of a pull that met it named it, and only `tracker-tui sync` showed that; the app said
nothing. So each is kept, by resource and id, with why (`note_unreadable`, from every page
the pull reads: sync.pull.context); a later page that holds the record readable, or its
tombstone, clears it. One without an id can never be matched again: it stays until
`UNREADABLE_KEPT` newer ones push it out.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from cache import Cache, JsonValue
from issuefields.frozen import Frozen
from sync.features import ServerFeatures
from sync.ratelimit.learned import Learned

if TYPE_CHECKING:
    from sync.models import SkippedRecord

FEATURES_STATE_KEY = "server_features"
LIMITS_STATE_KEY = "server_limits"
LAST_PULL_STATE_KEY = "last_pull"
"""`{"at": Unix time, "requests", "changed", "full"}` of the last pull that finished."""
UNREADABLE_STATE_KEY = "pull_unreadable"
UNREADABLE_KEPT = 50
"""Unreadable records kept at most, the newest: enough to show what is wrong."""


def remembered_features(cache: Cache, server: str | None = None) -> ServerFeatures | None:
    """The features last found on `server` (None: whichever server the profile's cache last
    probed), or None when nothing readable is stored."""
    text = _stored(cache, FEATURES_STATE_KEY, "features", server)
    try:
        return None if text is None else ServerFeatures.from_json(text)
    except ValueError:
        return None


def keep_features(cache: Cache, server: str, features: ServerFeatures) -> None:
    cache.state.set(FEATURES_STATE_KEY, {"server": server, "features": features.to_json()})


def remembered_limits(cache: Cache, server: str | None = None) -> Learned | None:
    """What the last session learned about the limits of `server` (None: whichever server the
    profile's cache last talked to), or None when nothing readable is stored."""
    text = _stored(cache, LIMITS_STATE_KEY, "limits", server)
    try:
        return None if text is None else Learned.from_json(text)
    except ValueError:
        return None


def keep_limits(cache: Cache, server: str, learned: Learned) -> None:
    cache.state.set(LIMITS_STATE_KEY, {"server": server, "limits": learned.to_json()})


def _stored(cache: Cache, key: str, member: str, server: str | None) -> str | None:
    stored = cache.state.get(key)
    if not isinstance(stored, dict) or (server is not None and stored.get("server") != server):
        return None
    text = stored.get(member)
    return text if isinstance(text, str) else None


class Unreadable(Frozen):
    """A record a pull skipped: its resource, its id if it had one, and why."""

    _fields = ("resource", "id", "reason", "at")
    __slots__ = _fields
    resource: str
    id: str | None
    reason: str
    at: float
    """Local Unix time it was last skipped."""

    def __init__(self, resource: str, id: str | None, reason: str, at: float) -> None:
        self._init(resource, id, reason, at)

    def to_json(self) -> JsonValue:
        return {"resource": self.resource, "id": self.id, "reason": self.reason, "at": self.at}


def unreadable_records(cache: Cache) -> list[Unreadable]:
    """The records kept as unreadable, oldest first."""
    stored = cache.state.get(UNREADABLE_STATE_KEY)
    found: list[Unreadable] = []
    for item in stored if isinstance(stored, list) else []:
        if not isinstance(item, dict):
            continue
        resource, key, reason, at = (item.get(n) for n in ("resource", "id", "reason", "at"))
        if isinstance(resource, str) and isinstance(reason, str) and isinstance(at, int | float):
            found.append(Unreadable(resource, key if isinstance(key, str) else None, reason, at))
    return found


def note_unreadable(
    cache: Cache,
    resource: str,
    skipped: Sequence[SkippedRecord],
    read: Iterable[str],
    now: float | None = None,
) -> list[Unreadable]:
    """Keep what a page of `resource` skipped, and forget what it `read` (the ids of its
    records and tombstones); what is kept now."""
    at = time.time() if now is None else now
    gone = set(read)
    fresh = [Unreadable(resource, item.id, item.reason, at) for item in skipped]
    named = {(item.resource, item.id) for item in fresh if item.id is not None}
    kept = [
        item
        for item in unreadable_records(cache)
        if not (item.resource == resource and item.id in gone)
        and (item.id is None or (item.resource, item.id) not in named)
    ]
    kept = (kept + fresh)[-UNREADABLE_KEPT:]
    cache.state.set(UNREADABLE_STATE_KEY, [item.to_json() for item in kept] or None)
    return kept
