"""Records as a real server sends them, read without losing anything.

The published API leaves most of a record open (docs/api.md#issues-and-ids), and another vendor's
server may send more, or other values, than the client knows (docs/api.md#known-values). So: unknown
members are kept (`extra="allow"`, and `raw` gives back the dict exactly as received, for the
cache); status and priority are plain strings (the values the client knows are in `issuefields`),
never a closed enum that would reject a new one; ids are opaque strings; timestamps are read
whatever their precision or zone into aware UTC, while `raw` keeps the server's own string for
cursors. In a list, a record that cannot be read is reported and skipped (`Page.skipped`) instead of
failing the whole page.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Generic, Self, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PlainSerializer,
    PlainValidator,
    ValidationError,
    model_validator,
)

from sync.errors import ErrorBody
from sync.timeutil import format_timestamp, parse_timestamp


def _timestamp(value: object) -> datetime:
    if type(value) is str and len(value) == 27 and value[26] == "Z":
        # The reference service's form (microseconds and `Z`), most of what a pull reads: already
        # UTC, and with nothing around it to strip, `parse_timestamp` would return the same.
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            pass
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, str):
        return parse_timestamp(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, UTC)
    raise ValueError("not a timestamp")


Timestamp = Annotated[
    datetime,
    PlainValidator(_timestamp),
    PlainSerializer(format_timestamp, return_type=str, when_used="json"),
]
"""An aware UTC datetime, from ISO 8601 with or without fraction, `Z` or offset (or Unix time)."""

Strings = Annotated[list[str], BeforeValidator(lambda value: [] if value is None else value)]
"""A list of strings where a server may also send null for "none"."""


def _integer(value: object) -> int | None:
    return value if type(value) is int else None


Number = Annotated[int | None, BeforeValidator(_integer)]
"""An issue's `number`: an integer, of any size, or else none. It only labels the issue
(docs/api.md#issue-numbers), so a value that is not one (`"forty-two"`, `1e30`) leaves the
issue without a number rather than making it unreadable: the record is kept with the value
as sent (`raw`), and shown by its id. Refused, the issue was skipped and never stored, the
cursor moving on past it (docs/sync.md#records-the-cache-cannot-hold)."""


class ServerModel(BaseModel):
    """Something the server sent: unknown members kept, the received dict kept in `raw`.

    The received dict lives in a slot of the instance, not in a pydantic private attribute:
    pydantic sets private attributes up in Python for every instance, once per class of its
    chain (three times for an `Issue`), which doubled the cost of reading a page of records.
    """

    __slots__ = ("_received",)
    model_config = ConfigDict(extra="allow", frozen=True, coerce_numbers_to_str=True)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_raw(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        model = handler(data)
        if isinstance(data, Mapping):
            object.__setattr__(model, "_received", dict(data))
        return model

    @property
    def raw(self) -> dict[str, Any]:
        """The members exactly as received (a copy of the top level), for storing as is."""
        received: dict[str, Any] = getattr(self, "_received", {})
        return dict(received)


class Record(ServerModel):
    """Any record with an id. The reference service gives every record both timestamps; the
    published API promises neither."""

    id: str = Field(min_length=1)
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None

    @property
    def raw(self) -> dict[str, Any]:
        """The members as received, but the id as the string it was read as: a server whose
        ids are JSON numbers (docs/api.md#issues-and-ids) sends `7`, which every path to the
        cache stores as `"7"`; stored as sent, it failed the page it came in at every pull."""
        received = super().raw
        if received.get("id") != self.id:
            received["id"] = self.id
        return received


class Tombstone(Record):
    """A record deleted after `updated_after`: `{"id", "deleted": true, "updated_at"}`
    (docs/api.md#tombstones)."""

    deleted: bool = True


class Issue(Record):
    """An issue. Only `id` is needed to keep one; the published API makes `title` required on
    creation."""

    number: Number = None
    title: str = ""
    description: str | None = None
    status: str | None = None
    priority: str | None = None
    assignee: str | None = None
    project_id: str | None = None
    labels: Strings = Field(default_factory=list)


class Project(Record):
    """A project (the published API shows no fields; these are the reference service's)."""

    key: str | None = None
    name: str = ""
    description: str | None = None
    state: str | None = None
    lead: str | None = None


class Comment(Record):
    """A comment on an issue."""

    issue_id: str | None = None
    body: str = ""
    author: str | None = None


class User(Record):
    """A member of the workspace."""

    name: str | None = None
    email: str | None = None


class Workspace(Record):
    """The workspace a key belongs to."""

    name: str | None = None
    plan: str | None = None


class Webhook(Record):
    """A webhook registration; `secret` is only present in the answer to its creation."""

    url: str = ""
    events: Strings = Field(default_factory=list)
    secret: str | None = None


class ApiKey(Record):
    """An API key's description [ext]; `key` (the value) is only in the answer to its creation."""

    name: str | None = None
    permissions: Strings = Field(default_factory=list)
    expires_at: Timestamp | None = None
    revoked: bool = False
    key: str | None = None

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """`repr` and `str` without the value: crash screens show the `repr` of locals."""
        return ((name, value) for name, value in super().__repr_args__() if name != "key")


class DeliveryAttempt(ServerModel):
    """One attempt to deliver one event to a webhook [ext]; it has no id of its own."""

    event_id: str | None = None
    event_type: str | None = None
    attempt: int | None = None
    status: str | None = None
    response_code: int | None = None
    error: str | None = None
    scheduled_at: Timestamp | None = None
    attempted_at: Timestamp | None = None
    completed_at: Timestamp | None = None


class Me(ServerModel):
    """`GET /me` (docs/api.md#current-user-get-me): who the key is, where, with which permissions,
    on which plan."""

    user: User | None = None
    workspace: Workspace | None = None
    permissions: Strings = Field(default_factory=list)
    plan: str | None = None

    @property
    def effective_plan(self) -> str | None:
        """The plan, from the top level or else from the workspace."""
        return self.plan or (self.workspace.plan if self.workspace else None)


class Pagination(ServerModel):
    """The published paging information (docs/api.md#list-envelope-and-paging); any member may be
    missing from a loose server."""

    page: int | None = None
    per_page: int | None = None
    total: int | None = None


R = TypeVar("R", bound=Record)


@dataclass(frozen=True)
class SkippedRecord:
    """A list item that could not be read: where it was, its id if any, and why."""

    index: int
    id: str | None
    reason: str
    raw: object


@dataclass(frozen=True)
class Page(Generic[R]):
    """One page of a list: records and tombstones in server order, and what was skipped."""

    items: tuple[R | Tombstone, ...]
    pagination: Pagination
    skipped: tuple[SkippedRecord, ...] = ()

    @property
    def data(self) -> list[R]:
        """The live records."""
        return [item for item in self.items if not isinstance(item, Tombstone)]

    @property
    def tombstones(self) -> list[Tombstone]:
        """The deleted records (docs/api.md#tombstones)."""
        return [item for item in self.items if isinstance(item, Tombstone)]

    @property
    def received(self) -> int:
        """How many items the server sent, readable or not (to tell a full page)."""
        return len(self.items) + len(self.skipped)


def describe(error: ValidationError) -> str:
    """A short reason for a report: fields and messages, never the (possibly long) input."""
    return "; ".join(
        f"{'.'.join(str(part) for part in issue['loc']) or 'record'}: {issue['msg']}"
        for issue in error.errors(include_url=False, include_input=False)
    )


def parse_item(item: object, model: type[R]) -> R | Tombstone:
    """One list item: a tombstone when it says `deleted: true`, else a `model`."""
    if not isinstance(item, Mapping):
        raise ValueError(f"not an object but {type(item).__name__}")
    if item.get("deleted") is True:
        return Tombstone.model_validate(item)
    return model.model_validate(item)


def parse_page(payload: object, model: type[R]) -> Page[R]:
    """A list envelope; unreadable items are skipped and listed in `Page.skipped`.

    Raises `ValueError` when the payload is not an envelope at all.
    """
    if not isinstance(payload, Mapping) or not isinstance(payload.get("data"), list):
        raise ValueError("not a list envelope with a 'data' array")
    pagination = Pagination.model_validate(payload.get("pagination") or {})
    items: list[R | Tombstone] = []
    skipped: list[SkippedRecord] = []
    for index, item in enumerate(payload["data"]):
        try:
            items.append(parse_item(item, model))
        except ValidationError as error:
            skipped.append(SkippedRecord(index, _id_of(item), describe(error), item))
        except ValueError as error:
            skipped.append(SkippedRecord(index, _id_of(item), str(error), item))
    return Page(items=tuple(items), pagination=pagination, skipped=tuple(skipped))


def _id_of(item: object) -> str | None:
    identifier = item.get("id") if isinstance(item, Mapping) else None
    return None if identifier is None else str(identifier)


@dataclass(frozen=True)
class BulkCreate:
    """A bulk operation creating an issue."""

    fields: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"op": "create", "fields": dict(self.fields)}


@dataclass(frozen=True)
class BulkUpdate:
    """A bulk operation changing some fields of an issue."""

    id: str
    changes: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"op": "update", "id": self.id, "changes": dict(self.changes)}


@dataclass(frozen=True)
class BulkDelete:
    """A bulk operation deleting an issue."""

    id: str

    def to_json(self) -> dict[str, Any]:
        return {"op": "delete", "id": self.id}


BulkOperation = BulkCreate | BulkUpdate | BulkDelete


@dataclass(frozen=True)
class BulkResult:
    """The outcome of one bulk operation; each succeeds or fails on its own."""

    index: int
    status: int
    issue: Issue | None = None
    error: ErrorBody | None = None

    @property
    def ok(self) -> bool:
        """Whether this operation succeeded (a 2xx status)."""
        return 200 <= self.status < 300


def parse_bulk(payload: object) -> list[BulkResult]:
    """The answer to `POST /issues/bulk`; raises `ValueError` when it has another shape.

    Unlike a page, nothing is skipped: a result that cannot be read leaves its operation's
    outcome unknown, which the caller must treat like a lost answer.
    """
    if not isinstance(payload, Mapping) or not isinstance(payload.get("data"), list):
        raise ValueError("not a bulk answer with a 'data' array")
    results: list[BulkResult] = []
    for item in payload["data"]:
        if not isinstance(item, Mapping):
            raise ValueError("a bulk result is not an object")
        index, status = item.get("index"), item.get("status")
        if not isinstance(index, int) or not isinstance(status, int):
            raise ValueError("a bulk result lacks an integer index or status")
        issue = item.get("issue")
        error = item.get("error")
        results.append(
            BulkResult(
                index=index,
                status=status,
                issue=None if issue is None else Issue.model_validate(issue),
                error=None if error is None else ErrorBody.from_payload({"error": error}),
            )
        )
    return results
