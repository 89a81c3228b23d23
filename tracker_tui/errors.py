"""Errors of the command line and the app, and how every other package's errors reach a user.

    TrackerTuiError            anything this package raises on purpose
    └── UsageError             the user asked for something that cannot be done as asked

Errors from `cache`, `sync` and `server` are not wrapped where they happen: the edge (the CLI's
`main`, the app's notification handler) turns any of them into one line through `describe`, so a
user mistake or a server problem never shows a traceback.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported for this
if TYPE_CHECKING:
    from sync.errors import Unauthorized


class TrackerTuiError(Exception):
    """Base of this package's errors; its message is written for the user."""


class UsageError(TrackerTuiError):
    """A request that is well-formed for the parser but impossible as asked."""


if TYPE_CHECKING:
    EXPECTED: tuple[type[Exception], ...]
    """What the edge turns into one line; anything else is a bug and keeps its traceback."""


def __getattr__(name: str) -> object:
    """`EXPECTED`, made when first used: it names the errors of every package (sync.errors
    alone weighs more than a command line's start), which a module that only raises
    `UsageError` should not load (docs/architecture.md#start-up)."""
    if name != "EXPECTED":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from accounts.errors import ConfigError
    from cache.errors import CacheError
    from sync.errors import SyncError

    expected: tuple[type[Exception], ...] = (TrackerTuiError, SyncError, ConfigError, CacheError)
    globals()["EXPECTED"] = expected
    return expected


def describe(error: Exception) -> str:
    """One line for the user: what went wrong and, where there is one, what to do."""
    from cache.errors import CorruptCacheError, SchemaTooNewError
    from sync.errors import (
        ApiError,
        Forbidden,
        NetworkError,
        NoCredentials,
        NotFound,
        ProtocolError,
        RateLimited,
        ServerError,
        Unauthorized,
    )

    if isinstance(error, Unauthorized):
        return _refused_key(error)
    if isinstance(error, Forbidden):
        needed = f" {error.permission}" if error.permission else ""
        return (
            f"the API key lacks the permission{needed} (403): {error.message} Use a profile "
            "whose key has it (--profile NAME), or ask a workspace admin for such a key "
            "(`tracker-tui keys create --permission ...`)"
        )
    if isinstance(error, RateLimited):
        wait = f"; retry in {error.retry_after:.0f} s" if error.retry_after is not None else ""
        return f"the server's rate limit was reached (429){wait}"
    if isinstance(error, ServerError):
        return f"the server failed ({error.status}) on {error.meta.method} {error.meta.path}"
    if isinstance(error, NotFound):
        return f"not found on the server: {error.meta.method} {error.meta.path}"
    if isinstance(error, ApiError):
        return f"the server refused the request: {error}"
    if isinstance(error, NetworkError):
        return f"cannot reach the server ({error})"
    if isinstance(error, ProtocolError):
        return f"the server's answer cannot be read: {error}"
    if isinstance(error, NoCredentials):
        return str(error)
    if isinstance(error, SchemaTooNewError):
        return str(error)
    if isinstance(error, CorruptCacheError):
        return (
            f"the local cache is damaged ({error}); move the file aside and run "
            "`tracker-tui sync` to rebuild it (pending edits live in that file)"
        )
    text = str(error) or type(error).__name__
    return " ".join(text.split())


def _refused_key(error: Unauthorized) -> str:
    """401: a revoked or an expired key says so (the reference service words it:
    docs/api.md#error-codes), and what to do."""
    words = error.message.lower()
    fix = (
        "log in with another key (`tracker-tui login --server URL`; an admin makes one with "
        "`tracker-tui keys create`), or check TRACKER_API_KEY"
    )
    for word, state in (("revoked", "has been revoked"), ("expired", "has expired")):
        if word in words:
            return f"the server refused the API key: it {state} (401 {error.code}); {fix}"
    return (
        f"the server refused the API key ({error.status} {error.code}): log in again with "
        "`tracker-tui login`, or check TRACKER_API_KEY"
    )
