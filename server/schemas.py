"""Response shapes, declared for the OpenAPI document and checked on the way out.

Routes return plain dicts built by `server.records`; FastAPI validates them against these models,
so a record that strays from its documented shape fails loudly in the tests instead of
reaching a client.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from server.models import EventFilter, Permission, Plan, Priority, ProjectState, Status

Timestamp = Annotated[
    str,
    Field(
        json_schema_extra={"format": "date-time"},
        description="ISO 8601 UTC with microseconds, e.g. 2026-11-21T15:33:11.561385Z",
    ),
]


class Issue(BaseModel):
    id: str
    number: int
    title: str
    description: str
    status: Status
    priority: Priority
    assignee: str | None
    project_id: str | None
    labels: list[str]
    created_at: Timestamp
    updated_at: Timestamp


class Project(BaseModel):
    id: str
    key: str
    name: str
    description: str
    state: ProjectState
    lead: str | None
    created_at: Timestamp
    updated_at: Timestamp


class Comment(BaseModel):
    id: str
    issue_id: str
    body: str
    author: str
    created_at: Timestamp
    updated_at: Timestamp


class User(BaseModel):
    id: str
    name: str
    email: str
    created_at: Timestamp
    updated_at: Timestamp


class Workspace(BaseModel):
    id: str
    name: str
    plan: Plan
    created_at: Timestamp
    updated_at: Timestamp


class Me(BaseModel):
    user: User
    workspace: Workspace
    permissions: list[Permission]
    plan: Plan


class Tombstone(BaseModel):
    """A record deleted after `updated_after`, listed when `include_deleted=true`."""

    id: str
    deleted: Literal[True]
    updated_at: Timestamp = Field(description="When the record was deleted.")


class Pagination(BaseModel):
    page: int
    per_page: int
    total: int


class IssueList(BaseModel):
    data: list[Issue | Tombstone]
    pagination: Pagination


class ProjectList(BaseModel):
    data: list[Project | Tombstone]
    pagination: Pagination


class CommentList(BaseModel):
    data: list[Comment | Tombstone]
    pagination: Pagination


class UserList(BaseModel):
    data: list[User]
    pagination: Pagination


class WorkspaceList(BaseModel):
    data: list[Workspace]
    pagination: Pagination


class SearchResults(BaseModel):
    data: list[Issue]
    pagination: Pagination


class Webhook(BaseModel):
    id: str
    workspace_id: str
    url: str
    events: list[EventFilter]
    created_at: Timestamp
    updated_at: Timestamp


class WebhookCreated(Webhook):
    secret: str = Field(description="Signs deliveries; shown in this answer only.")


class WebhookList(BaseModel):
    data: list[Webhook]
    pagination: Pagination


class DeliveryAttempt(BaseModel):
    """One attempt to deliver one event: `pending` until made, then `succeeded` (2xx),
    `retrying` (another attempt is scheduled) or `failed` (the last one)."""

    event_id: str
    event_type: str
    attempt: int
    status: Literal["pending", "retrying", "failed", "succeeded"]
    response_code: int | None
    error: str | None = Field(description="Why no response came, when none did.")
    scheduled_at: Timestamp
    attempted_at: Timestamp | None
    completed_at: Timestamp | None


class DeliveryList(BaseModel):
    data: list[DeliveryAttempt]
    pagination: Pagination


class ApiKey(BaseModel):
    id: str
    name: str
    permissions: list[Permission]
    expires_at: Timestamp | None
    created_at: Timestamp
    revoked: bool


class ApiKeyCreated(ApiKey):
    key: str = Field(description="The key itself, shown in this answer only.")


class ApiKeyList(BaseModel):
    data: list[ApiKey]
    pagination: Pagination


class FieldDetail(BaseModel):
    field: str
    message: str


class ErrorObject(BaseModel):
    code: str
    message: str
    details: list[FieldDetail] | SkipJsonSchema[None] = None
    retry_after: int | SkipJsonSchema[None] = Field(default=None, description="On 429 only.")


class ErrorEnvelope(BaseModel):
    error: ErrorObject


class BulkSuccess(BaseModel):
    index: int
    status: int
    issue: Issue


class BulkFailure(BaseModel):
    index: int
    status: int
    error: ErrorObject


class BulkResults(BaseModel):
    data: list[BulkSuccess | BulkFailure]
