"""The local SQLite cache: the server copy, the outbox of local writes, sync state, the
shared request log and full-text search, behind one typed API (`Cache`, split by who uses
it: `cache.reads`, `cache.outbox`, `cache.push`, `cache.server`, `cache.state`,
`cache.drafts`, `cache.requests`, `cache.inbox`; see cache.store).

Open a profile's cache with `open_cache(profile)`, or an explicit file with
`Cache.open(path)`. Errors are the tree in `cache.errors`; threading rules in `cache.db`.

Each name loads its module when first used (PEP 562): a module that needs only the errors
or the row types (`from cache.errors import ...`, or `from cache import IssueRow`) does not
load the store and everything it opens (docs/architecture.md#start-up).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cache.changelog import Change, ChangeKind
    from cache.errors import (
        AmbiguousIssueError,
        CacheBusyError,
        CacheClosedError,
        CacheError,
        CacheOpenError,
        CorruptCacheError,
        InvalidProfileError,
        InvalidRecordError,
        OutboxStateError,
        RecordNotFoundError,
        SchemaTooNewError,
    )
    from cache.inbox import Inbox
    from cache.keyed import Drafts, State
    from cache.models import (
        ACTIVE_STATES,
        ApplyResult,
        CommentRow,
        Conflict,
        Cursor,
        EntryState,
        FieldConflict,
        IssueDetail,
        IssueFilter,
        IssueRow,
        IssueSort,
        JsonObject,
        JsonValue,
        LogCheck,
        Operation,
        OutboxEntry,
        ProjectRow,
        Resolution,
        Resource,
        SyncState,
        UserRow,
        WorkspaceRow,
    )
    from cache.reads import Reads
    from cache.records import Prepared
    from cache.requestlog import RequestLog
    from cache.sending import SETTLED_RETENTION, Push
    from cache.server_copy import ServerCopy
    from cache.store import Cache
    from cache.suspects import BulkAttempt
    from cache.syncstate import ME_STATE_KEY
    from cache.writes import Outbox

__all__ = [
    "ACTIVE_STATES",
    "ME_STATE_KEY",
    "SETTLED_RETENTION",
    "AmbiguousIssueError",
    "ApplyResult",
    "BulkAttempt",
    "Cache",
    "CacheBusyError",
    "CacheClosedError",
    "CacheError",
    "CacheOpenError",
    "Change",
    "ChangeKind",
    "CommentRow",
    "Conflict",
    "CorruptCacheError",
    "Cursor",
    "Drafts",
    "EntryState",
    "FieldConflict",
    "Inbox",
    "InvalidProfileError",
    "InvalidRecordError",
    "IssueDetail",
    "IssueFilter",
    "IssueRow",
    "IssueSort",
    "JsonObject",
    "JsonValue",
    "LogCheck",
    "Operation",
    "Outbox",
    "OutboxEntry",
    "OutboxStateError",
    "Prepared",
    "ProjectRow",
    "Push",
    "Reads",
    "RecordNotFoundError",
    "RequestLog",
    "Resolution",
    "Resource",
    "SchemaTooNewError",
    "ServerCopy",
    "State",
    "SyncState",
    "UserRow",
    "WorkspaceRow",
    "open_cache",
]

_HOMES = {
    "ACTIVE_STATES": "cache.models",
    "AmbiguousIssueError": "cache.errors",
    "ApplyResult": "cache.models",
    "BulkAttempt": "cache.suspects",
    "Cache": "cache.store",
    "CacheBusyError": "cache.errors",
    "CacheClosedError": "cache.errors",
    "CacheError": "cache.errors",
    "CacheOpenError": "cache.errors",
    "Change": "cache.changelog",
    "ChangeKind": "cache.changelog",
    "CommentRow": "cache.models",
    "Conflict": "cache.models",
    "CorruptCacheError": "cache.errors",
    "Cursor": "cache.models",
    "Drafts": "cache.keyed",
    "EntryState": "cache.models",
    "FieldConflict": "cache.models",
    "Inbox": "cache.inbox",
    "InvalidProfileError": "cache.errors",
    "InvalidRecordError": "cache.errors",
    "IssueDetail": "cache.models",
    "IssueFilter": "cache.models",
    "IssueRow": "cache.models",
    "IssueSort": "cache.models",
    "JsonObject": "cache.models",
    "JsonValue": "cache.models",
    "LogCheck": "cache.models",
    "ME_STATE_KEY": "cache.syncstate",
    "Operation": "cache.models",
    "Outbox": "cache.writes",
    "OutboxEntry": "cache.models",
    "OutboxStateError": "cache.errors",
    "Prepared": "cache.records",
    "ProjectRow": "cache.models",
    "Push": "cache.sending",
    "Reads": "cache.reads",
    "RecordNotFoundError": "cache.errors",
    "RequestLog": "cache.requestlog",
    "Resolution": "cache.models",
    "Resource": "cache.models",
    "SETTLED_RETENTION": "cache.sending",
    "SchemaTooNewError": "cache.errors",
    "ServerCopy": "cache.server_copy",
    "State": "cache.keyed",
    "SyncState": "cache.models",
    "UserRow": "cache.models",
    "WorkspaceRow": "cache.models",
}
"""The module each name of `__all__` lives in, imported on first use."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def open_cache(profile: str, *, root: Path | None = None) -> Cache:
    """`cache.store.open_cache`, here so that importing the name costs nothing: the store and
    everything it opens load when a cache is first opened (`tracker-tui --help` opens none)."""
    from cache.store import open_cache as opening

    return opening(profile, root=root)
