"""Which optional features (docs/api.md#optional-features) a server has: found by asking
(`sync.probe`), never assumed.

A user may point the client at another vendor's server that has only the published API, so every
optional feature is probed once, stored (`ServerFeatures.to_json`, in the cache's key/value
state, `sync.remembered`) and used only when present. A feature is True (seen working), False
(seen absent or refused) or None (not determinable yet: the caller falls back as for False, and
may upgrade it with `replace` when sync observes it, e.g. the first tombstone).

Apart from the probe, which needs the HTTP client, so that what is remembered of a server can
be read (`tracker-tui status`) without loading it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from issuefields.frozen import Frozen

if TYPE_CHECKING:
    from sync.models import Record

FEATURES_VERSION = 1


class ServerFeatures(Frozen):
    """What a server was found to support; JSON-serialisable for the cache's state store."""

    _fields = (
        "me",
        "updated_after",
        "tombstones",
        "keyset_order",
        "etag",
        "bulk",
        "comments_list",
        "users_list",
        "idempotency",
        "page_size",
        "plan",
        "detected_at",
        "requests",
        "version",
    )
    __slots__ = _fields
    me: bool | None
    updated_after: bool | None
    tombstones: bool | None
    keyset_order: bool | None
    etag: bool | None
    bulk: bool | None
    comments_list: bool | None
    users_list: bool | None
    idempotency: bool | None
    page_size: int | None
    plan: str | None
    detected_at: float | None
    requests: int
    version: int

    def __init__(
        self,
        me: bool | None = None,
        updated_after: bool | None = None,
        tombstones: bool | None = None,
        keyset_order: bool | None = None,
        etag: bool | None = None,
        bulk: bool | None = None,
        comments_list: bool | None = None,
        users_list: bool | None = None,
        idempotency: bool | None = None,
        page_size: int | None = None,
        plan: str | None = None,
        detected_at: float | None = None,
        requests: int = 0,
        version: int = FEATURES_VERSION,
    ) -> None:
        self._init(
            me,
            updated_after,
            tombstones,
            keyset_order,
            etag,
            bulk,
            comments_list,
            users_list,
            idempotency,
            page_size,
            plan,
            detected_at,
            requests,
            version,
        )

    def to_json(self) -> str:
        return json.dumps({name: getattr(self, name) for name in self._fields}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ServerFeatures:
        """Read stored features; `ValueError` when unreadable or from another version.

        Either way the caller detects again: a stale answer is worse than a few requests.
        """
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("version") != FEATURES_VERSION:
            raise ValueError("stored server features are unreadable or of another version")
        values: dict[str, Any] = {}
        for name in cls._fields:
            default = getattr(_UNKNOWN, name)
            value = data.get(name, default)
            if not _fits(name, value, default):
                raise ValueError(f"stored server feature {name!r} has a wrong type")
            values[name] = value
        return cls(**values)


_UNKNOWN = ServerFeatures()
"""Every member at its default: what a store that lacks one of them means."""

_KINDS: dict[str, tuple[type, ...]] = {
    "page_size": (int,),
    "plan": (str,),
    "detected_at": (int, float),
    "requests": (int,),
    "version": (int,),
}
"""Types of the members that are not yes/no/unknown features."""


def _fits(name: str, value: object, default: object) -> bool:
    if value is None:
        return default is None
    if isinstance(value, bool):
        return name not in _KINDS
    return isinstance(value, _KINDS.get(name, (bool,)))


def is_keyset_ordered(items: Sequence[Record]) -> bool | None:
    """Whether records come sorted by `(updated_at, id)` ascending; None with under two.

    The pull engine should check every page too: a server sorting by creation time looks
    keyset-ordered until something is edited.
    """
    if any(item.updated_at is None for item in items):
        return False
    if len(items) < 2:
        return None
    return all((a.updated_at, a.id) < (b.updated_at, b.id) for a, b in pairwise(items))
