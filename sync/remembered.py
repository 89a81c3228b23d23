"""What a sync leaves in a profile's cache for the next process, and how it is read back.

The server's features (probed once per server URL), the limits the rate limiter learned (so a
new process does not start at Free's 60 a minute) and the last pull that finished live in the
cache's key/value state. `sync.session` and the pull engine write them; `tracker-tui status`
reads them, which is why they are here, apart from the HTTP client and the engines.
"""

from __future__ import annotations

from cache import Cache
from sync.features import ServerFeatures
from sync.ratelimit.learned import Learned

FEATURES_STATE_KEY = "server_features"
LIMITS_STATE_KEY = "server_limits"
LAST_PULL_STATE_KEY = "last_pull"
"""`{"at": Unix time, "requests", "changed", "full"}` of the last pull that finished."""


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
