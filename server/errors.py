"""The service's errors: each one is an HTTP answer with one of the service's error codes
(docs/api.md#error-codes).

Everything the service refuses on purpose is raised as a `ServiceError`. The handlers in
`server.handlers` render it as the published error body `{"error": {"code", "message", ...}}`, and a
bulk operation puts the same envelope into its result. The base class is Starlette's `HTTPException`
so that an error raised while FastAPI reads a request body (the streamed size limit) passes through
FastAPI unchanged instead of becoming a generic 400.

    ServiceError (starlette HTTPException)
    ├── InvalidRequest            400 invalid_request, optional details [{field, message}]
    │   ├── InvalidTransition     400 invalid_transition
    │   └── IdempotencyKeyReused  400 idempotency_key_reused
    ├── Unauthorized              401 unauthorized
    ├── Forbidden                 403 forbidden
    ├── NotFound                  404 not_found
    ├── PreconditionFailed        412 precondition_failed
    ├── PayloadTooLarge           413 payload_too_large
    └── RateLimitExceeded         429 rate_limit_exceeded, retry_after (and Retry-After)

Arguments that are wrong before any request exists (a bad plan name given to `create_key`, a
non-positive window) are plain `ValueError`s, as Python callers expect.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypedDict

from starlette.exceptions import HTTPException


class FieldError(TypedDict):
    """One entry of `error.details`: which member was wrong and why."""

    field: str
    message: str


class ServiceError(HTTPException):
    """A refusal with a status, a machine-readable code and a human-readable message."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "internal_error"

    def __init__(
        self,
        message: str,
        *,
        details: list[FieldError] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(status_code=self.status, detail=message, headers=headers)
        self.message = message
        self.details = details

    def envelope(self) -> dict[str, Any]:
        """The published error body for this error (docs/api.md#errors)."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            error["details"] = self.details
        return {"error": error}


class InvalidRequest(ServiceError):
    status = 400
    code = "invalid_request"

    @classmethod
    def for_field(cls, field: str, message: str) -> InvalidRequest:
        """An error about one member, named both in the message and in `details`."""
        return cls(f"Invalid `{field}`: {message}.", details=[{"field": field, "message": message}])


class InvalidTransition(InvalidRequest):
    code = "invalid_transition"


class IdempotencyKeyReused(InvalidRequest):
    code = "idempotency_key_reused"


class Unauthorized(ServiceError):
    status = 401
    code = "unauthorized"


class Forbidden(ServiceError):
    status = 403
    code = "forbidden"


class NotFound(ServiceError):
    status = 404
    code = "not_found"


class PreconditionFailed(ServiceError):
    status = 412
    code = "precondition_failed"


class PayloadTooLarge(ServiceError):
    status = 413
    code = "payload_too_large"


class RateLimitExceeded(ServiceError):
    status = 429
    code = "rate_limit_exceeded"

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            f"Rate limit exceeded; retry after {retry_after} seconds.",
            headers={"Retry-After": str(retry_after)},
        )
        self.retry_after = retry_after

    def envelope(self) -> dict[str, Any]:
        body = super().envelope()
        body["error"]["retry_after"] = self.retry_after
        return body
