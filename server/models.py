"""Request bodies: what each endpoint accepts, validated by pydantic.

Every body model forbids unknown members (a 400 naming the member: docs/service.md#requests). Update
models accept any subset of the writable fields (`omittable`, read with
`model_dump(exclude_unset=True)`); an explicit `null` for a field that cannot be null is refused by
`_not_null`. Every string refuses lone surrogates (`"\\ud800"` is valid JSON but not storable UTF-8
text).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)
from pydantic_core import PydanticCustomError

STATUSES = ("backlog", "todo", "in_progress", "in_review", "done", "canceled")
PRIORITIES = ("urgent", "high", "medium", "low", "none")
PROJECT_STATES = ("active", "archived")
PLANS = ("free", "pro", "enterprise")
PERMISSIONS = (
    "issues:read",
    "issues:write",
    "projects:read",
    "projects:write",
    "comments:read",
    "comments:write",
    "webhooks:manage",
    "admin",
)

Status = Literal["backlog", "todo", "in_progress", "in_review", "done", "canceled"]
Priority = Literal["urgent", "high", "medium", "low", "none"]
ProjectState = Literal["active", "archived"]
Plan = Literal["free", "pro", "enterprise"]
Permission = Literal[
    "issues:read",
    "issues:write",
    "projects:read",
    "projects:write",
    "comments:read",
    "comments:write",
    "webhooks:manage",
    "admin",
]


def _storable(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise PydanticCustomError("invalid_text", "must be valid Unicode text") from None
    return value


Storable = AfterValidator(_storable)

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _iso_text(value: Any) -> Any:
    """Left alone, pydantic reads a number (`1.0`) as Unix time; the API's times are ISO 8601."""
    if isinstance(value, datetime) or (isinstance(value, str) and _ISO_DATE.match(value)):
        return value
    raise PydanticCustomError("datetime_iso", "must be an ISO 8601 date and time")


IsoDateTime = Annotated[datetime, BeforeValidator(_iso_text)]
"""A point in time given as ISO 8601 text, such as `2026-11-21T15:33:11.561385Z`."""

Title = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=255), Storable
]
LongText = Annotated[str, StringConstraints(max_length=65_535), Storable]
CommentBody = Annotated[str, StringConstraints(min_length=1, max_length=65_535), Storable]
Label = Annotated[str, StringConstraints(min_length=1, max_length=50), Storable]
ProjectKey = Annotated[str, StringConstraints(pattern=r"^[A-Z]{2,10}$")]
Name = Annotated[str, StringConstraints(min_length=1, max_length=100), Storable]
RecordId = Annotated[str, StringConstraints(min_length=1, max_length=100), Storable]


def _distinct(labels: list[str]) -> list[str]:
    """Labels are a set shown in the order given: repeats are dropped, not refused."""
    return list(dict.fromkeys(labels))


Labels = Annotated[list[Label], Field(max_length=20), AfterValidator(_distinct)]


def omittable(**field: Any) -> Any:
    """A field that may be left out (then None, unvalidated) but not sent as null.

    Typed `Any` so that a `str` field may default to None without a union with None, which
    would show `null` in the OpenAPI schema and tag error locations with union members.
    """
    return Field(default=None, **field)


def _not_null(value: Any) -> Any:
    """Refuse an explicit null (validators do not run for an omitted field's default)."""
    if value is None:
        raise PydanticCustomError("not_null", "may not be null")
    return value


class RequestModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class IssueCreate(RequestModel):
    title: Title
    description: LongText = ""
    status: Status = "todo"
    priority: Priority = "none"
    assignee: RecordId | None = None
    project_id: RecordId | None = None
    labels: Labels = Field(default_factory=list)


class IssueUpdate(RequestModel):
    title: Title = omittable()
    description: LongText = omittable()
    status: Status = omittable()
    priority: Priority = omittable()
    assignee: RecordId | None = None
    project_id: RecordId | None = None
    labels: Labels = omittable()

    _check_not_null = field_validator(
        "title", "description", "status", "priority", "labels", mode="before"
    )(_not_null)


class ProjectCreate(RequestModel):
    key: ProjectKey = omittable(description="Derived from `name` when omitted.")
    name: Name
    description: LongText = ""
    state: ProjectState = "active"
    lead: RecordId | None = None

    _check_not_null = field_validator("key", mode="before")(_not_null)


class ProjectUpdate(RequestModel):
    key: ProjectKey = omittable()
    name: Name = omittable()
    description: LongText = omittable()
    state: ProjectState = omittable()
    lead: RecordId | None = None

    _check_not_null = field_validator("key", "name", "description", "state", mode="before")(
        _not_null
    )


class CommentCreate(RequestModel):
    issue_id: RecordId
    body: CommentBody


class CommentUpdate(RequestModel):
    body: CommentBody = omittable()

    _check_not_null = field_validator("body", mode="before")(_not_null)


class WorkspaceUpdate(RequestModel):
    name: Name = omittable()

    _check_not_null = field_validator("name", mode="before")(_not_null)


EventFilter = Literal[
    "*",
    "issue.created",
    "issue.updated",
    "issue.deleted",
    "project.created",
    "project.updated",
    "project.deleted",
    "comment.created",
    "comment.updated",
    "comment.deleted",
]
"""The event types a webhook may subscribe to, or `*` for all of them (docs/service.md#webhooks)."""

WebhookURL = Annotated[str, StringConstraints(min_length=1, max_length=2048), Storable]
Events = Annotated[list[EventFilter], Field(min_length=1, max_length=10)]
Secret = Annotated[str, StringConstraints(min_length=1, max_length=255), Storable]


class WebhookCreate(RequestModel):
    url: WebhookURL
    events: Events
    secret: Secret = omittable(description="Generated when omitted; shown in this answer only.")

    _check_not_null = field_validator("secret", mode="before")(_not_null)


class WebhookUpdate(RequestModel):
    url: WebhookURL = omittable()
    events: Events = omittable()
    secret: Secret = omittable()

    _check_not_null = field_validator("url", "events", "secret", mode="before")(_not_null)


class ApiKeyCreate(RequestModel):
    name: Name
    permissions: Annotated[list[Permission], AfterValidator(_distinct)] = omittable(
        description="Default: every permission."
    )
    expires_in_days: Annotated[float, Field(gt=0, le=36_500)] = omittable(
        description="Expire this many days from now; or give `expires_at`, or neither."
    )
    expires_at: IsoDateTime = omittable(description="Expire at this future time (UTC if naive).")

    _check_not_null = field_validator(
        "permissions", "expires_in_days", "expires_at", mode="before"
    )(_not_null)


class CreateOperation(RequestModel):
    op: Literal["create"]
    fields: IssueCreate


class UpdateOperation(RequestModel):
    op: Literal["update"]
    id: RecordId
    changes: IssueUpdate


class DeleteOperation(RequestModel):
    op: Literal["delete"]
    id: RecordId


BulkOperation = CreateOperation | UpdateOperation | DeleteOperation

BULK_OPERATIONS: dict[str, type[BulkOperation]] = {
    "create": CreateOperation,
    "update": UpdateOperation,
    "delete": DeleteOperation,
}

_BULK_OPERATION_SCHEMA = {
    "type": "object",
    "description": "One operation; a malformed one fails alone, in its result.",
    "required": ["op"],
    "properties": {
        "op": {"type": "string", "enum": list(BULK_OPERATIONS)},
        "id": {"type": "string", "description": "The issue, for `update` and `delete`."},
        "fields": {"$ref": "#/components/schemas/IssueCreate"},
        "changes": {"$ref": "#/components/schemas/IssueUpdate"},
    },
}


class BulkRequest(RequestModel):
    """Each operation is checked and applied on its own, so a bad one fails alone."""

    operations: list[Annotated[dict[str, Any], Field(json_schema_extra=_BULK_OPERATION_SCHEMA)]] = (
        Field(min_length=1, max_length=100)
    )
