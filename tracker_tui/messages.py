"""App-wide messages: events that are not any one widget's business.

A widget's own messages are nested in its class (`IssueList.Opened`); these are the ones that
cross the whole app, posted to the app (or bubbling up to it) from screens, workers and the sync
engine's thread (`tracker_tui/engine_link.py`).

They are plain classes with `__slots__` and an `__init__` that sets the fields, then runs
`Message.__init__` (what a dataclass's `__post_init__` did): a dataclass costs about a
millisecond at import to build, and all of these are built before the app's first frame
(docs/architecture.md#start-up). Nothing compares messages, so they keep the identity's
equality.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from textual.message import Message

from sync.connection import ConnectionState
from sync.permissions import KeyPermissions
from tracker_tui.data.marks import MarkedSelection
from tracker_tui.data.outbox_counts import OutboxCounts
from tracker_tui.data.views import SavedView

if TYPE_CHECKING:
    from sync.backfill_progress import BackfillProgress
    from sync.pull import PullProgress


class SyncStatusChanged(Message):
    """The sync engine's latest report: the one source of what every screen shows about sync
    (the status bar of each screen, the sync panel).

    Each report is complete, so a newer one replaces an older one still in the queue.
    """

    __slots__ = (
        *("profile", "connection", "outbox", "budget_minute", "budget_day", "day_limit"),
        *("progress", "last_sync", "backfill", "searched"),
    )

    profile: str
    connection: ConnectionState
    """Online, offline, key refused, waiting for the rate limit: as the engine last learnt."""
    outbox: OutboxCounts | None
    """Writes pending, failed and conflicting fields; None when unknown."""
    budget_minute: int | None
    """Requests left in the current minute window, None when unknown."""
    budget_day: int | None
    """Requests left today, None when unknown."""
    day_limit: int | None
    """The day's limit those are left of (for the status bar's alert), None when unknown."""
    progress: PullProgress | None
    """The running pull's latest progress (fetched of an estimated total), None when none
    runs."""
    last_sync: datetime | None
    """When the last pass finished, None before the first."""
    backfill: BackfillProgress | None
    """A head-first start's backfill while one is pending (docs/sync.md#head-first)."""
    searched: int
    """Issues the server's search brought in that the backfill has not reached (the list
    marks them)."""

    def __init__(
        self,
        profile: str,
        connection: ConnectionState | None = None,
        outbox: OutboxCounts | None = None,
        budget_minute: int | None = None,
        budget_day: int | None = None,
        day_limit: int | None = None,
        progress: PullProgress | None = None,
        last_sync: datetime | None = None,
        backfill: BackfillProgress | None = None,
        searched: int = 0,
    ) -> None:
        self.profile = profile
        self.connection = ConnectionState() if connection is None else connection
        self.outbox = outbox
        self.budget_minute = budget_minute
        self.budget_day = budget_day
        self.day_limit = day_limit
        self.progress = progress
        self.last_sync = last_sync
        self.backfill = backfill
        self.searched = searched
        super().__init__()

    def can_replace(self, message: Message) -> bool:
        """A newer report makes any queued older one pointless."""
        return isinstance(message, SyncStatusChanged)


class CacheChanged(Message):
    """The local cache changed underneath the app (a pull landed, an edit was queued).

    Screens reload what they show; the list keeps its cursor position.
    """

    __slots__ = ()

    def can_replace(self, message: Message) -> bool:
        """Two queued reloads are one reload."""
        return isinstance(message, CacheChanged)


class SourceFailed(Message):
    """Reading the local cache failed: shown as a notification, never as a traceback."""

    __slots__ = ("error", "operation")

    operation: str
    """What was being read, in words ("count issues")."""
    error: str

    def __init__(self, operation: str, error: str) -> None:
        self.operation = operation
        self.error = error
        super().__init__()


class SyncFailed(Message):
    """The sync engine failed in a way its connection state does not show (a page the server
    answered with something unreadable, say): a notification titled as sync's, not the
    cache's."""

    __slots__ = ("error",)

    error: str

    def __init__(self, error: str) -> None:
        self.error = error
        super().__init__()


class ViewsChanged(Message):
    """The saved views changed; the app hands them to its `on_views_changed` callback."""

    __slots__ = ("views",)

    views: list[SavedView]

    def __init__(self, views: list[SavedView]) -> None:
        self.views = views
        super().__init__()


class EditIssueRequested(Message):
    """The user asked to edit an issue (only posted when the app is writable)."""

    __slots__ = ("issue_id", "replacing")

    issue_id: str
    replacing: int | None
    """A refused write of the issue (its outbox entry) to start the form from: what the user
    typed then is filled in again, and saving the form replaces that write."""

    def __init__(self, issue_id: str, replacing: int | None = None) -> None:
        self.issue_id = issue_id
        self.replacing = replacing
        super().__init__()


class EditorEditRequested(Message):
    """The user asked to edit an issue as a template in `$EDITOR` (only posted when the app is
    writable)."""

    __slots__ = ("issue_id",)

    issue_id: str

    def __init__(self, issue_id: str) -> None:
        self.issue_id = issue_id
        super().__init__()


class BulkEditorRequested(Message):
    """The user asked to edit the marked issues (or the whole query, `selection.count` 0) as
    a table in `$EDITOR` (only posted when the app is writable)."""

    __slots__ = ("selection",)

    selection: MarkedSelection

    def __init__(self, selection: MarkedSelection) -> None:
        self.selection = selection
        super().__init__()


class CreateIssueRequested(Message):
    """The user asked to create an issue (only posted when the app is writable)."""

    __slots__ = ()


class BulkEditRequested(Message):
    """The user asked to change every marked issue (only posted when the app is writable)."""

    __slots__ = ("selection",)

    selection: MarkedSelection

    def __init__(self, selection: MarkedSelection) -> None:
        self.selection = selection
        super().__init__()


class WriteQueued(Message):
    """A local write reached the outbox: screens re-read, the sync engine is poked."""

    __slots__ = ("batch_id", "notice")

    notice: str | None
    """What to tell the user, if anything ("Comment queued")."""
    batch_id: str | None
    """The batch of a bulk edit, remembered so `u` can undo it."""

    def __init__(self, notice: str | None = None, batch_id: str | None = None) -> None:
        self.notice = notice
        self.batch_id = batch_id
        super().__init__()


class PermissionsChanged(Message):
    """The sync engine learned what the key may do (`/me` read, or a 403 that named a
    permission): the app takes it up at once (`tracker_tui.access`)."""

    __slots__ = ("permissions",)

    permissions: KeyPermissions

    def __init__(self, permissions: KeyPermissions) -> None:
        self.permissions = permissions
        super().__init__()

    def can_replace(self, message: Message) -> bool:
        """Each report is complete: a newer one makes a queued older one pointless."""
        return isinstance(message, PermissionsChanged)


class OpenIssueRequested(Message):
    """Open an issue's screen (from a screen other than the list: the inbox)."""

    __slots__ = ("issue_id",)

    issue_id: str

    def __init__(self, issue_id: str) -> None:
        self.issue_id = issue_id
        super().__init__()


class InboxChanged(Message):
    """Changes of the inbox were marked read: the unread count is read again."""

    __slots__ = ()


class InboxCounted(Message):
    """How many changes of the inbox are unread, counted in a worker."""

    __slots__ = ("unread",)

    unread: int

    def __init__(self, unread: int) -> None:
        self.unread = unread
        super().__init__()

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, InboxCounted)


class SearchTyped(Message):
    """The list's search text changed: the engine may ask the server too while the cache is
    still being filled (docs/sync.md#head-first)."""

    __slots__ = ("text",)

    text: str

    def __init__(self, text: str) -> None:
        self.text = text
        super().__init__()


class ServerHitsArrived(Message):
    """The server's search answered while the backfill is incomplete: its hits are stored,
    `new` of them issues the cache did not hold yet."""

    __slots__ = ("found", "new", "text")

    text: str
    found: int
    new: int

    def __init__(self, text: str, found: int, new: int) -> None:
        self.text = text
        self.found = found
        self.new = new
        super().__init__()
