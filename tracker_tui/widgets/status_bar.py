"""The status bar: which profile, whether we are online, what waits to be sent, what budget is
left, and how far a sync pass has come.

It shows the app's latest `SyncStatusChanged` report, which the app keeps in its `sync_status`
reactive; until the sync engine reports, it says "offline" and shows dashes rather than zeros.
"""

from __future__ import annotations

from typing import ClassVar

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from tracker_tui.messages import SyncStatusChanged


class StatusBar(Widget):
    """One line of sync state, always visible above the footer."""

    DEFAULT_CSS: ClassVar[str] = """
    StatusBar {
        height: 1;
        background: $panel;
        color: $text-muted;
        padding: 0 1;
    }
    """

    status: reactive[SyncStatusChanged | None] = reactive(None)
    """The latest report from the sync engine, None until it sends one."""

    def __init__(self, profile: str, *, read_only: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self._profile = profile
        self._read_only = read_only

    def on_mount(self) -> None:
        """Follow the app's latest report (the app receives them, every screen shows them)."""
        self.watch(self.app, "sync_status", self._show_status)

    def _show_status(self, status: SyncStatusChanged | None) -> None:
        """Take the app's report as this bar's state."""
        self.status = status

    def render(self) -> Content:
        """Profile, connection, pending writes, budget and progress, separated by dots."""
        status = self.status
        parts: list[str | tuple[str, str]] = [
            ((status.profile if status else self._profile) or "—", "bold $text"),
        ]
        if status is not None and status.online:
            parts += ["  ", ("● online", "$text-success")]
        else:
            parts += ["  ", ("○ offline", "$text-warning")]
        pending = "—" if status is None else f"{status.pending_writes:,}"
        parts += ["  ·  ", f"↑ {pending} pending"]
        parts += ["  ·  ", f"budget {_budget(status)}"]
        if status is not None and status.sync_total:
            parts += ["  ·  ", (f"syncing {status.sync_done:,}/{status.sync_total:,}", "$text")]
        if self._read_only:
            parts += ["  ·  ", ("read-only", "bold $text-error")]
        return Content.assemble(*parts)


def _budget(status: SyncStatusChanged | None) -> str:
    """ "58/min 9,800/day", with dashes for what is unknown."""

    def left(value: int | None) -> str:
        return "—" if value is None else f"{value:,}"

    if status is None:
        return "—"
    return f"{left(status.budget_minute)}/min {left(status.budget_day)}/day"
