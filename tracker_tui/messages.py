"""App-wide messages: events that are not any one widget's business.

A widget's own messages are nested in its class (`IssueList.Opened`); these are the ones that
cross the whole app, posted to the app (or bubbling up to it) from screens, workers and the sync
engine's thread (`tracker_tui/engine_link.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
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


@dataclass
class SyncStatusChanged(Message):
    """The sync engine's latest report: the one source of what every screen shows about sync
    (the status bar of each screen, the sync panel).

    Each report is complete, so a newer one replaces an older one still in the queue.
    """

    profile: str
    connection: ConnectionState = field(default_factory=ConnectionState)
    """Online, offline, key refused, waiting for the rate limit: as the engine last learnt."""
    outbox: OutboxCounts | None = None
    """Writes pending, failed and conflicting fields; None when unknown."""
    budget_minute: int | None = None
    """Requests left in the current minute window, None when unknown."""
    budget_day: int | None = None
    """Requests left today, None when unknown."""
    day_limit: int | None = None
    """The day's limit those are left of (for the status bar's alert), None when unknown."""
    progress: PullProgress | None = None
    """The running pull's latest progress (fetched of an estimated total), None when none
    runs."""
    last_sync: datetime | None = None
    """When the last pass finished, None before the first."""
    backfill: BackfillProgress | None = None
    """A head-first start's backfill while one is pending (docs/sync.md#head-first)."""
    searched: int = 0
    """Issues the server's search brought in that the backfill has not reached (the list
    marks them)."""

    def can_replace(self, message: Message) -> bool:
        """A newer report makes any queued older one pointless."""
        return isinstance(message, SyncStatusChanged)


@dataclass
class CacheChanged(Message):
    """The local cache changed underneath the app (a pull landed, an edit was queued).

    Screens reload what they show; the list keeps its cursor position.
    """

    def can_replace(self, message: Message) -> bool:
        """Two queued reloads are one reload."""
        return isinstance(message, CacheChanged)


@dataclass
class SourceFailed(Message):
    """Reading the local cache failed: shown as a notification, never as a traceback."""

    operation: str
    """What was being read, in words ("count issues")."""
    error: str


@dataclass
class SyncFailed(Message):
    """The sync engine failed in a way its connection state does not show (a page the server
    answered with something unreadable, say): a notification titled as sync's, not the
    cache's."""

    error: str


@dataclass
class ViewsChanged(Message):
    """The saved views changed; the app hands them to its `on_views_changed` callback."""

    views: list[SavedView]


@dataclass
class EditIssueRequested(Message):
    """The user asked to edit an issue (only posted when the app is writable)."""

    issue_id: str
    replacing: int | None = None
    """A refused write of the issue (its outbox entry) to start the form from: what the user
    typed then is filled in again, and saving the form replaces that write."""


@dataclass
class EditorEditRequested(Message):
    """The user asked to edit an issue as a template in `$EDITOR` (only posted when the app is
    writable)."""

    issue_id: str


@dataclass
class BulkEditorRequested(Message):
    """The user asked to edit the marked issues (or the whole query, `selection.count` 0) as
    a table in `$EDITOR` (only posted when the app is writable)."""

    selection: MarkedSelection


@dataclass
class CreateIssueRequested(Message):
    """The user asked to create an issue (only posted when the app is writable)."""


@dataclass
class BulkEditRequested(Message):
    """The user asked to change every marked issue (only posted when the app is writable)."""

    selection: MarkedSelection


@dataclass
class WriteQueued(Message):
    """A local write reached the outbox: screens re-read, the sync engine is poked."""

    notice: str | None = None
    """What to tell the user, if anything ("Comment queued")."""
    batch_id: str | None = None
    """The batch of a bulk edit, remembered so `u` can undo it."""


@dataclass
class PermissionsChanged(Message):
    """The sync engine learned what the key may do (`/me` read, or a 403 that named a
    permission): the app takes it up at once (`tracker_tui.access`)."""

    permissions: KeyPermissions

    def can_replace(self, message: Message) -> bool:
        """Each report is complete: a newer one makes a queued older one pointless."""
        return isinstance(message, PermissionsChanged)


@dataclass
class OpenIssueRequested(Message):
    """Open an issue's screen (from a screen other than the list: the inbox)."""

    issue_id: str


class InboxChanged(Message):
    """Changes of the inbox were marked read: the unread count is read again."""


@dataclass
class InboxCounted(Message):
    """How many changes of the inbox are unread, counted in a worker."""

    unread: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, InboxCounted)


@dataclass
class SearchTyped(Message):
    """The list's search text changed: the engine may ask the server too while the cache is
    still being filled (docs/sync.md#head-first)."""

    text: str


@dataclass
class ServerHitsArrived(Message):
    """The server's search answered while the backfill is incomplete: its hits are stored,
    `new` of them issues the cache did not hold yet."""

    text: str
    found: int
    new: int
