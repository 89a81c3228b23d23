"""Every failure the cache reports, as one tree so callers can catch as broadly as they need.

```
CacheError                      anything the cache refuses or cannot do
├── CacheOpenError              the file cannot be used as a cache at all
│   ├── CorruptCacheError       not a SQLite database, or damaged pages
│   ├── SchemaTooNewError       written by a newer tracker-tui (unknown migrations)
│   └── InvalidProfileError     a profile name that cannot become a file name
├── CacheBusyError              another connection held the write lock past busy_timeout
├── CacheClosedError            the Cache was closed; open a new one
├── InvalidRecordError          a server record without a usable string `id`
├── RecordNotFoundError         an edit aimed at a record the effective view does not hold
├── AmbiguousIssueError         digits that are one issue's number and another issue's id
└── OutboxStateError            an outbox transition that the entry's state forbids
```

`sqlite3` exceptions never escape the public API: the connection layer translates them here,
because the UI must tell "your disk copy is damaged, rebuild it" apart from "try again".
A `CorruptCacheError` can surface on any call, not only on open, when SQLite first touches a
damaged page.
"""

from __future__ import annotations


class CacheError(Exception):
    """Base of every error raised by the cache package."""


class CacheOpenError(CacheError):
    """The file cannot serve as this profile's cache."""


class CorruptCacheError(CacheOpenError):
    """The file is not a SQLite database or SQLite found it damaged.

    The server copy can be re-pulled, but the outbox lives only here, so the UI should offer
    to move the file aside rather than delete it.
    """


class SchemaTooNewError(CacheOpenError):
    """The cache holds migrations this version does not know: a newer client wrote it."""

    def __init__(self, unknown: list[str]) -> None:
        super().__init__(
            "this cache was written by a newer tracker-tui (unknown migrations: "
            + ", ".join(unknown)
            + "); upgrade tracker-tui or use another profile"
        )
        self.unknown = unknown


class InvalidProfileError(CacheOpenError):
    """Profile names become file names, so only a safe alphabet is accepted."""


class CacheBusyError(CacheError):
    """Another process kept the database locked for longer than the busy timeout."""


class CountStopped(CacheError):
    """A count was abandoned because its caller no longer wanted it (`Reads.count`'s stop)."""


class CacheClosedError(CacheError):
    """The cache was closed; its connections are gone."""


class InvalidRecordError(CacheError):
    """A record from the server lacks a string `id`, so it cannot be stored or matched."""


class RecordNotFoundError(CacheError):
    """The record is not in the effective view (never pulled, deleted, or a discarded create)."""


class AmbiguousIssueError(CacheError):
    """`42` is the number of one issue and the id of another (a server with numeric ids):
    acting on either could be acting on the wrong one."""

    def __init__(self, ref: str, ids: list[str]) -> None:
        super().__init__(f"{ref!r} names more than one issue: {', '.join(ids)}")
        self.ref = ref
        self.ids = ids


class OutboxStateError(CacheError):
    """The outbox entry is missing or its state does not allow the requested transition."""
