"""The seam between the settings screen and the server: run one admin call on the sync
engine's session.

Everything else the app does reads the cache and writes the outbox (a workspace rename too);
the settings screen's reads of the server and its keys and webhooks cannot wait in an outbox (a
new key or webhook secret is shown once) so they are done online, on the engine's own session:
the same client, rate limiter and request log as the sync, on the engine's thread. Without a
session (offline, the key refused, no engine) the call fails at once with `AdminUnavailable`,
which the screen shows as it is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from tracker_tui.errors import TrackerTuiError

if TYPE_CHECKING:
    from sync.admin import AdminApi

T = TypeVar("T")

OFFLINE_NOTICE = "Online only: the server cannot be reached now, and this is not queued."


class AdminUnavailable(TrackerTuiError):
    """No session to run an admin call on: nothing was sent."""


class AdminLink(Protocol):
    """Runs admin calls where the sync engine runs its requests."""

    async def admin(self, work: Callable[[AdminApi], Awaitable[T]]) -> T:
        """`work` on the engine's session; `AdminUnavailable` when there is none."""
        ...
