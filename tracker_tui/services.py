"""What the screens beyond the list need, handed to each as one value.

Screens are built with this rather than reaching for the app, so a screen can be tested (and
read) knowing exactly what it depends on: the cache to read and write, the sync link to nudge,
who "me" is, the clock, and whether writes are allowed at all.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from cache import Cache
from cache.models import Frozen
from sync.permissions import KeyPermissions
from tracker_tui.access import KeyAccess
from tracker_tui.admin_link import AdminLink
from tracker_tui.data.cache_source import CacheIssueSource
from tracker_tui.data.usage_alert import DEFAULT_ALERT_PERCENT
from tracker_tui.sync_link import SyncLink


class Services(Frozen):
    """The app's collaborators, shared by every screen."""

    _fields = (
        "cache",
        "source",
        "sync",
        "clock",
        "access",
        "me",
        "profile",
        "admin",
        "usage_alert",
        "web_url",
    )
    __slots__ = _fields
    cache: Cache
    source: CacheIssueSource
    sync: SyncLink
    clock: Callable[[], datetime]
    access: KeyAccess
    """What the key may do and whether changes are off, as learned so far (it changes while
    the app runs: `tracker_tui.access`)."""
    me: str | None
    """The current user's id (for "mine"); None when unknown."""
    profile: str
    """Shown in the status bar until the sync engine reports."""
    admin: AdminLink | None
    """Where the settings screen's online work runs; None without a sync engine."""
    usage_alert: int
    """The day's share of the rate limit past which the status bar warns, in percent."""
    web_url: str | None
    """The profile's template of an issue's web address (tracker_tui.issue_links)."""

    def __init__(
        self,
        cache: Cache,
        source: CacheIssueSource,
        sync: SyncLink,
        clock: Callable[[], datetime],
        access: KeyAccess,
        me: str | None = None,
        profile: str = "",
        admin: AdminLink | None = None,
        usage_alert: int = DEFAULT_ALERT_PERCENT,
        web_url: str | None = None,
    ) -> None:
        self._init(cache, source, sync, clock, access, me, profile, admin, usage_alert, web_url)

    @property
    def read_only(self) -> bool:
        """Changes are off (now: the key may turn out not to write issues while the app runs)."""
        return self.access.read_only

    @property
    def permissions(self) -> KeyPermissions:
        """What the key may do, as far as known now (`sync.permissions`)."""
        return self.access.permissions
