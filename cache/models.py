"""The typed vocabulary of the cache API: what callers pass in and get back.

Rows are frozen so the UI can hold them across refreshes without aliasing bugs; every server
record also travels as its whole JSON object (`record`), because the client must keep members
and values it does not understand.

They are `Frozen` classes written out, not dataclasses: making a dataclass compiles its
methods when the module loads (~1 ms each on this machine), and importing `dataclasses`
(with `inspect` behind it) cost a read command ~15 ms more, on every command line start
(docs/architecture.md#start-up). `Frozen.replace` copies one as `dataclasses.replace` would.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import TypeAlias

from issuefields import (
    ASSIGNEE,
    CREATED_AT,
    DEFAULT_SORT,
    NUMBER,
    PRIORITY,
    PROJECT,
    SORTS_BY_KEY,
    STATUS,
    TITLE,
    UPDATED_AT,
)
from issuefields.frozen import Frozen

JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
JsonObject: TypeAlias = dict[str, JsonValue]
Cell: TypeAlias = str | int | float | None
"""A column's value as SQLite holds it."""


class Resource(StrEnum):
    """Record types the cache stores; the value is the API collection name."""

    ISSUES = "issues"
    PROJECTS = "projects"
    COMMENTS = "comments"
    USERS = "users"
    WORKSPACES = "workspaces"


WRITABLE_RESOURCES = frozenset(
    {Resource.ISSUES, Resource.PROJECTS, Resource.COMMENTS, Resource.WORKSPACES}
)
EDIT_ONLY_RESOURCES = frozenset({Resource.WORKSPACES})
"""Written only by edits: a workspace is renamed, never created or deleted from here."""


class Operation(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"


class EntryState(StrEnum):
    """Life of an outbox entry: pending -> sending -> done, or failed / conflict on the way.

    `unsure`: a create whose answer was lost, and the server holds more records like it, made
    since it was sent, than there are such creates: it may already be on the server (as one
    of them) or not. Neither sent nor dropped: the user says which (`Cache.outbox.same_as`,
    `Cache.outbox.send_anyway`, `Cache.outbox.discard`).
    """

    PENDING = "pending"
    SENDING = "sending"
    FAILED = "failed"
    CONFLICT = "conflict"
    DONE = "done"
    UNSURE = "unsure"


ACTIVE_STATES = (
    EntryState.PENDING,
    EntryState.SENDING,
    EntryState.FAILED,
    EntryState.CONFLICT,
    EntryState.UNSURE,
)


class SyncState(StrEnum):
    """Marker on every row the UI draws: does the screen show exactly the server's copy?"""

    SYNCED = "synced"
    PENDING = "pending"
    CONFLICT = "conflict"
    FAILED = "failed"


class Resolution(StrEnum):
    MINE = "mine"
    THEIRS = "theirs"


class IssueFilter(Frozen):
    """AND across fields, OR within a field; an empty set leaves the field unconstrained. The
    fields are the filterable ones of `issuefields.FILTERS`, each named by its `word`.

    `None` in `assignee` / `project` means "unassigned" / "no project". `mine` is the current
    user's id (the TUI knows it from /me). `text` is what the user typed: qualifiers, phrases,
    exclusions and numbers are taken apart by cache.search_syntax; free tokens are matched as
    whole words except the last, which is a prefix once it has 3 characters (search as you
    type), unless the text ends in whitespace.
    """

    _fields = ("status", "priority", "assignee", "project", "label", "text", "mine", "me")
    __slots__ = _fields
    status: frozenset[str]
    priority: frozenset[str]
    assignee: frozenset[str | None]
    project: frozenset[str | None]
    label: frozenset[str]
    text: str
    mine: str | None
    me: str | None
    """Who `assignee:me` in the text is (cache.search_syntax); `mine` says the list is
    narrowed to them, this only who they are."""

    def __init__(
        self,
        status: frozenset[str] = frozenset(),
        priority: frozenset[str] = frozenset(),
        assignee: frozenset[str | None] = frozenset(),
        project: frozenset[str | None] = frozenset(),
        label: frozenset[str] = frozenset(),
        text: str = "",
        mine: str | None = None,
        me: str | None = None,
    ) -> None:
        self._init(status, priority, assignee, project, label, text, mine, me)


class IssueSort(Frozen):
    """Descending priority is urgent first (unknown values last, then "no priority" before
    them), as "priority ▼" reads; ascending status is workflow order, unknown values last.
    The other direction is the exact reverse. Within a status or priority, the most recently
    updated come first in the direction that shows most first (descending priority,
    ascending status), and reversed along with the rest in the other."""

    _fields = ("key", "descending")
    __slots__ = _fields
    key: str
    """One of `issuefields.SORT_KEYS`."""
    descending: bool

    def __init__(self, key: str = DEFAULT_SORT.key, descending: bool = True) -> None:
        if key not in SORTS_BY_KEY:
            raise ValueError(f"unknown sort key {key!r}")
        self._init(key, descending)


class Cursor(Frozen):
    """Where an incremental pull resumes: the server's `updated_at` text, sent back verbatim as
    `updated_after`, and the ids already seen at exactly that timestamp (to de-duplicate the
    overlap re-read)."""

    _fields = ("updated_at", "ids")
    __slots__ = _fields
    updated_at: str
    ids: frozenset[str]

    def __init__(self, updated_at: str, ids: frozenset[str] = frozenset()) -> None:
        self._init(updated_at, ids)


class ApplyResult(Frozen):
    _fields = ("inserted", "updated", "unchanged", "deleted")
    __slots__ = _fields
    inserted: int
    updated: int
    unchanged: int
    deleted: int

    def __init__(
        self, inserted: int = 0, updated: int = 0, unchanged: int = 0, deleted: int = 0
    ) -> None:
        self._init(inserted, updated, unchanged, deleted)


class LogCheck(Frozen):
    _fields = ("since", "limit", "bucket")
    __slots__ = _fields
    since: float
    limit: int
    bucket: str | None

    def __init__(self, since: float, limit: int, bucket: str | None) -> None:
        self._init(since, limit, bucket)


def _text(value: Cell) -> str | None:
    return None if value is None else str(value)


class IssueRow(Frozen):
    """One issue as the list shows it: its fields by member in `cells`, as the cache stores
    them (`cache.resources`; descriptions are left out, `IssueDetail` has them), its labels,
    and how it stands against the server. The properties read the fields code names."""

    _fields = ("id", "cells", "labels", "sync_state", "searched")
    __slots__ = _fields
    id: str
    cells: Mapping[str, Cell]
    labels: tuple[str, ...]
    sync_state: SyncState
    searched: bool
    """Brought in by the server's search ahead of the backfill, which has not reached it yet
    (cache.searched): the list marks it as from the server."""

    def __init__(
        self,
        id: str,
        cells: Mapping[str, Cell],
        labels: tuple[str, ...],
        sync_state: SyncState,
        searched: bool = False,
    ) -> None:
        self._init(id, cells, labels, sync_state, searched)

    @property
    def number(self) -> int | None:
        value = self.cells.get(NUMBER.member)
        return value if isinstance(value, int) else None

    @property
    def title(self) -> str:
        return str(self.cells.get(TITLE.member) or "")

    @property
    def status(self) -> str | None:
        return _text(self.cells.get(STATUS.member))

    @property
    def priority(self) -> str | None:
        return _text(self.cells.get(PRIORITY.member))

    @property
    def assignee(self) -> str | None:
        return _text(self.cells.get(ASSIGNEE.member))

    @property
    def project_id(self) -> str | None:
        return _text(self.cells.get(PROJECT.member))

    @property
    def created_at(self) -> str | None:
        return _text(self.cells.get(CREATED_AT.member))

    @property
    def updated_at(self) -> str | None:
        return _text(self.cells.get(UPDATED_AT.member))


class CommentRow(Frozen):
    _fields = (
        "id",
        "issue_id",
        "body",
        "author",
        "created_at",
        "updated_at",
        "sync_state",
        "record",
    )
    __slots__ = _fields
    _compared = _fields[:-1]
    id: str
    issue_id: str | None
    body: str
    author: str | None
    created_at: str | None
    updated_at: str | None
    sync_state: SyncState
    record: JsonObject

    def __init__(
        self,
        id: str,
        issue_id: str | None,
        body: str,
        author: str | None,
        created_at: str | None,
        updated_at: str | None,
        sync_state: SyncState,
        record: JsonObject,
    ) -> None:
        self._init(id, issue_id, body, author, created_at, updated_at, sync_state, record)


class ProjectRow(Frozen):
    _fields = (
        "id",
        "key",
        "name",
        "description",
        "state",
        "lead",
        "created_at",
        "updated_at",
        "sync_state",
        "record",
    )
    __slots__ = _fields
    _compared = _fields[:-1]
    id: str
    key: str | None
    name: str
    description: str
    state: str | None
    lead: str | None
    created_at: str | None
    updated_at: str | None
    sync_state: SyncState
    record: JsonObject

    def __init__(
        self,
        id: str,
        key: str | None,
        name: str,
        description: str,
        state: str | None,
        lead: str | None,
        created_at: str | None,
        updated_at: str | None,
        sync_state: SyncState,
        record: JsonObject,
    ) -> None:
        self._init(
            id, key, name, description, state, lead, created_at, updated_at, sync_state, record
        )


class WorkspaceRow(Frozen):
    """The key's workspace as the screen shows it: a queued rename shows at once, its entry
    pending (or failed, with the server's reason) until the server has it."""

    _fields = ("id", "name", "plan", "sync_state", "entries", "record")
    __slots__ = _fields
    _compared = _fields[:4]
    id: str
    name: str
    plan: str | None
    sync_state: SyncState
    entries: tuple[OutboxEntry, ...]
    record: JsonObject

    def __init__(
        self,
        id: str,
        name: str,
        plan: str | None,
        sync_state: SyncState,
        entries: tuple[OutboxEntry, ...],
        record: JsonObject,
    ) -> None:
        self._init(id, name, plan, sync_state, entries, record)


class UserRow(Frozen):
    _fields = ("id", "name", "email")
    __slots__ = _fields
    id: str
    name: str
    email: str | None

    def __init__(self, id: str, name: str, email: str | None) -> None:
        self._init(id, name, email)


class OutboxEntry(Frozen):
    """One durable local write. `base` holds the changed fields' values before the edit,
    `changes` their values after (for a create: every field sent). `idempotency_key` is made
    once at enqueue and must be sent with every attempt."""

    _fields = (
        "id",
        "resource",
        "record_id",
        "server_id",
        "parent_id",
        "operation",
        "base",
        "changes",
        "idempotency_key",
        "attempts",
        "state",
        "last_error",
        "batch_id",
        "created_at",
        "updated_at",
        "sent_at",
        "place",
    )
    __slots__ = _fields
    id: int
    resource: Resource
    record_id: str
    server_id: str | None
    parent_id: str | None
    operation: Operation
    base: JsonObject
    changes: JsonObject
    idempotency_key: str
    attempts: int
    state: EntryState
    last_error: str | None
    batch_id: str | None
    created_at: float
    updated_at: float
    sent_at: float | None
    place: int | None
    """The id of the entry this one was split off (see `cache.outbox_life.split_off`): it holds
    that entry's place in the queue. None: its own id is its place."""

    def __init__(
        self,
        id: int,
        resource: Resource,
        record_id: str,
        server_id: str | None,
        parent_id: str | None,
        operation: Operation,
        base: JsonObject,
        changes: JsonObject,
        idempotency_key: str,
        attempts: int,
        state: EntryState,
        last_error: str | None,
        batch_id: str | None,
        created_at: float,
        updated_at: float,
        sent_at: float | None,
        place: int | None = None,
    ) -> None:
        self._init(
            id,
            resource,
            record_id,
            server_id,
            parent_id,
            operation,
            base,
            changes,
            idempotency_key,
            attempts,
            state,
            last_error,
            batch_id,
            created_at,
            updated_at,
            sent_at,
            place,
        )

    @property
    def queue_order(self) -> tuple[int, int]:
        """Where the entry stands in the queue: writes of one record are shown, sent and
        rebased in this order."""
        return (self.place or self.id, self.id)

    @property
    def target_id(self) -> str:
        """The id to address on the server once known, else the local id."""
        return self.server_id or self.record_id


class FieldConflict(Frozen):
    _fields = ("field", "base", "mine", "theirs")
    __slots__ = _fields
    field: str
    base: JsonValue
    mine: JsonValue
    theirs: JsonValue

    def __init__(self, field: str, base: JsonValue, mine: JsonValue, theirs: JsonValue) -> None:
        self._init(field, base, mine, theirs)


class Conflict(Frozen):
    _fields = (
        "id",
        "entry_id",
        "field",
        "base",
        "mine",
        "theirs",
        "created_at",
        "resolution",
        "resolved_at",
    )
    __slots__ = _fields
    id: int
    entry_id: int
    field: str
    base: JsonValue
    mine: JsonValue
    theirs: JsonValue
    created_at: float
    resolution: Resolution | None
    resolved_at: float | None

    def __init__(
        self,
        id: int,
        entry_id: int,
        field: str,
        base: JsonValue,
        mine: JsonValue,
        theirs: JsonValue,
        created_at: float,
        resolution: Resolution | None,
        resolved_at: float | None,
    ) -> None:
        self._init(id, entry_id, field, base, mine, theirs, created_at, resolution, resolved_at)


class IssueDetail(Frozen):
    _fields = ("issue", "description", "record", "comments", "entries", "conflicts")
    __slots__ = _fields
    issue: IssueRow
    description: str
    record: JsonObject
    comments: tuple[CommentRow, ...]
    entries: tuple[OutboxEntry, ...]
    conflicts: tuple[Conflict, ...]

    def __init__(
        self,
        issue: IssueRow,
        description: str,
        record: JsonObject,
        comments: tuple[CommentRow, ...],
        entries: tuple[OutboxEntry, ...],
        conflicts: tuple[Conflict, ...],
    ) -> None:
        self._init(issue, description, record, comments, entries, conflicts)

    @property
    def number(self) -> int | None:
        """The issue's number as the server sent it: exact beyond the 64-bit integers its
        column holds as a float, which a row (`IssueRow.number`) shows as no number."""
        number = self.record.get(NUMBER.member)
        return number if type(number) is int else self.issue.number
