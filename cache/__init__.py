"""The local SQLite cache: the server copy, the outbox of local writes, sync state, the
shared request log and full-text search, behind one typed API (`Cache`, split by who uses
it: `cache.reads`, `cache.outbox`, `cache.push`, `cache.server`, `cache.state`,
`cache.drafts`, `cache.requests`, `cache.inbox`; see cache.store).

Open a profile's cache with `open_cache(profile)`, or an explicit file with
`Cache.open(path)`. Errors are the tree in `cache.errors`; threading rules in `cache.db`.
"""

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
from cache.store import Cache, open_cache
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
