"""The local SQLite cache: the server copy, the outbox of local writes, sync state, the
shared request log and full-text search, behind one typed API (`Cache`).

Open a profile's cache with `open_cache(profile)`, or an explicit file with
`Cache.open(path)`. Errors are the tree in `cache.errors`; threading rules in `cache.db`.
"""

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
from cache.records import Prepared
from cache.store import Cache, open_cache
from cache.suspects import BulkAttempt

__all__ = [
    "ACTIVE_STATES",
    "AmbiguousIssueError",
    "ApplyResult",
    "BulkAttempt",
    "Cache",
    "CacheBusyError",
    "CacheClosedError",
    "CacheError",
    "CacheOpenError",
    "CommentRow",
    "Conflict",
    "CorruptCacheError",
    "Cursor",
    "EntryState",
    "FieldConflict",
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
    "OutboxEntry",
    "OutboxStateError",
    "Prepared",
    "ProjectRow",
    "RecordNotFoundError",
    "Resolution",
    "Resource",
    "SchemaTooNewError",
    "SyncState",
    "UserRow",
    "WorkspaceRow",
    "open_cache",
]
