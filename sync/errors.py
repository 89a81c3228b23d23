"""Every error `sync/` raises for a request, a response or a session, in one tree; a profile, a
key's storage or the config file fail with `accounts.errors` instead (their own tree, under
`ConfigError`), and a malformed key given to `ApiClient` is a programming error (`TypeError`,
`ValueError`), since the accounts check keys before they get there.

    SyncError                      anything from sync/
    ├── ApiError                   the server answered with an error status (.status .code .meta)
    │   ├── InvalidRequest         400 (or 422): the request was wrong (.details)
    │   │   ├── InvalidTransition      code invalid_transition: a status move the workflow forbids
    │   │   └── IdempotencyKeyReused   code idempotency_key_reused: same key, another body
    │   ├── Unauthorized           401: missing, revoked or expired key
    │   ├── Forbidden              403: the key lacks a permission (.permission when named)
    │   ├── NotFound               404: no such record (or another workspace's)
    │   ├── PreconditionFailed     412: `If-Match` no longer matches; the record changed
    │   ├── PayloadTooLarge        413
    │   ├── RateLimited            429 (.retry_after: seconds, or None when the server said nothing)
    │   ├── ServerError            5xx
    │   └── UnexpectedStatus       any other status (405, 409, a redirect...)
    ├── NetworkError               no response (.request_sent: could the server have acted?)
    ├── ProtocolError              a response that cannot be read: bad JSON, truncated, wrong shape
    ├── Unsupported                the server lacks an [ext] operation asked for (`.operation`)
    └── NoCredentials              no API key for the profile: log in, or set TRACKER_API_KEY

How the three outcomes of an attempt (docs/sync.md#three-outcomes) map: *retryable* are NetworkError
with `request_sent` False, RateLimited and ServerError; *rejected* are the other ApiErrors;
*unknown* are NetworkError with `request_sent` True and a ProtocolError on a write with a 2xx
`status` (the write happened, its answer is unreadable).

No exception here holds an `httpx.Request`, a header or the API key, and the client raises
them outside the `except` block that caught httpx's, so no traceback (with locals or not)
reaches the `Authorization` header through `__context__`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from issuefields.frozen import Frozen
from sync.ratelimit.headers import ResponseMeta

_PERMISSION = re.compile(r"\b[a-z][a-z_]*:[a-z][a-z_]*\b")
_ADMIN = re.compile(r"\badmin\b")

DEFAULT_CODES: dict[int, str] = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    412: "precondition_failed",
    413: "payload_too_large",
    422: "invalid_request",
    429: "rate_limit_exceeded",
}
"""The code for each status (docs/api.md#error-codes), for error bodies that do not name one."""


class ErrorDetail(Frozen):
    """One field-level complaint: the reference service's `{field, message}`
    (docs/service.md#requests) or FastAPI's `{loc, msg}`."""

    _fields = ("field", "message")
    __slots__ = _fields
    field: str | None
    message: str

    def __init__(self, field: str | None, message: str) -> None:
        self._init(field, message)


class ErrorBody(Frozen):
    """An error body, read leniently: the published body (docs/api.md#errors), FastAPI's `detail`,
    or plain text."""

    _fields = ("code", "message", "details", "retry_after", "permission")
    __slots__ = _fields
    code: str | None
    message: str | None
    details: tuple[ErrorDetail, ...]
    retry_after: object
    permission: str | None

    def __init__(
        self,
        code: str | None = None,
        message: str | None = None,
        details: tuple[ErrorDetail, ...] = (),
        retry_after: object = None,
        permission: str | None = None,
    ) -> None:
        self._init(code, message, details, retry_after, permission)

    @classmethod
    def from_payload(cls, payload: object) -> ErrorBody:
        """Whatever the body held (parsed JSON or text); never raises."""
        if isinstance(payload, str):
            text = " ".join(payload.split())[:200]
            return cls(message=text or None)
        if not isinstance(payload, Mapping):
            return cls()
        inner = payload.get("error")
        source: Mapping[str, Any] = inner if isinstance(inner, Mapping) else payload
        message = _text(source.get("message")) or _text(inner) or _text(payload.get("detail"))
        raw_details = source.get("details", payload.get("detail"))
        return cls(
            code=_text(source.get("code")),
            message=message,
            details=_details(raw_details),
            retry_after=source.get("retry_after"),
            permission=_text(source.get("permission")),
        )

    @classmethod
    def from_content(cls, content: bytes) -> ErrorBody:
        """A raw body: JSON if it parses, else its text (an HTML error page, say)."""
        text = content.decode("utf-8", errors="replace")
        try:
            return cls.from_payload(json.loads(text))
        except ValueError:
            return cls.from_payload(text)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _details(value: object) -> tuple[ErrorDetail, ...]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return ()
    found: list[ErrorDetail] = []
    for item in value:
        if isinstance(item, Mapping):
            loc = item.get("loc")
            field = _text(item.get("field")) or (
                ".".join(str(part) for part in loc) if isinstance(loc, Sequence) else None
            )
            message = _text(item.get("message")) or _text(item.get("msg")) or ""
            found.append(ErrorDetail(field=field, message=message))
        elif isinstance(item, str):
            found.append(ErrorDetail(field=None, message=item))
    return tuple(found)


class SyncError(Exception):
    """Base of every error raised by `sync/`."""


class ApiError(SyncError):
    """The server answered with an error status; `message` is its text (or a stand-in)."""

    def __init__(self, meta: ResponseMeta, body: ErrorBody) -> None:
        self.meta = meta
        self.status = meta.status
        self.code = body.code or DEFAULT_CODES.get(meta.status, "error")
        self.message = body.message or f"HTTP {meta.status}"
        self.details = body.details
        super().__init__(f"{meta.status} {self.code} on {meta.method} {meta.path}: {self.message}")


class InvalidRequest(ApiError):
    """400: the server refused the request as written; `details` names fields when it can."""


class InvalidTransition(InvalidRequest):
    """400 `invalid_transition`: the workflow does not allow this status move."""


class IdempotencyKeyReused(InvalidRequest):
    """400 `idempotency_key_reused`: this key was used with another body; a client bug."""


class Unauthorized(ApiError):
    """401: the key is missing, wrong, revoked or expired."""


class Forbidden(ApiError):
    """403: the key lacks a permission; `permission` is its name when the server gave it."""

    def __init__(self, meta: ResponseMeta, body: ErrorBody) -> None:
        super().__init__(meta, body)
        self.permission = body.permission or _permission_in(self.message)


def _permission_in(message: str) -> str | None:
    found = _PERMISSION.search(message)
    if found:
        return found.group(0)
    if "permission" in message.lower() and _ADMIN.search(message):
        return "admin"
    return None


class NotFound(ApiError):
    """404: no such record, or one of another workspace (the reference service never says which)."""


class PreconditionFailed(ApiError):
    """412: the record changed since the `ETag` sent in `If-Match`."""


class PayloadTooLarge(ApiError):
    """413: the request body is over the server's limit (1 MiB on the reference service)."""


class RateLimited(ApiError):
    """429: `retry_after` is the server's wait in seconds (body or header), or None."""

    @property
    def retry_after(self) -> float | None:
        return self.meta.retry_after


class ServerError(ApiError):
    """5xx: the server failed; worth retrying later."""


class UnexpectedStatus(ApiError):
    """A status the published API does not use for this request: 405 for an absent endpoint, 409, a
    3xx."""


class NetworkError(SyncError):
    """No response. `request_sent` False: the request never left, resending is safe.

    True: it was sent (or partly), so the server may have acted on it; look before resending.
    """

    def __init__(self, message: str, *, method: str, path: str, request_sent: bool) -> None:
        self.method = method
        self.path = path
        self.request_sent = request_sent
        super().__init__(f"{method} {path}: {message}")


class ProtocolError(SyncError):
    """A response that cannot be understood: its `status` says whether a write went through."""

    def __init__(self, message: str, *, method: str, path: str, meta: ResponseMeta) -> None:
        self.method = method
        self.path = path
        self.meta = meta
        self.status = meta.status
        super().__init__(f"{method} {path}: {message}")


_BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    412: PreconditionFailed,
    413: PayloadTooLarge,
    422: InvalidRequest,
    429: RateLimited,
}
_BY_CODE: dict[str, type[ApiError]] = {
    "invalid_transition": InvalidTransition,
    "idempotency_key_reused": IdempotencyKeyReused,
}


def error_for(meta: ResponseMeta, body: ErrorBody) -> ApiError:
    """The error a response with an error status means."""
    kind = _BY_STATUS.get(meta.status)
    if kind is InvalidRequest and body.code in _BY_CODE:
        kind = _BY_CODE[body.code]
    if kind is None:
        kind = ServerError if meta.status >= 500 else UnexpectedStatus
    return kind(meta, body)


class Unsupported(SyncError):
    """The server has no such operation (an optional one the published API does not promise:
    docs/api.md#optional-features); nothing was done."""

    def __init__(self, operation: str, message: str) -> None:
        self.operation = operation
        super().__init__(message)


class NoCredentials(SyncError):
    """No API key could be found for the profile: the user must log in or set one."""
