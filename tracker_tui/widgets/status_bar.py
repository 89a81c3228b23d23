"""The status bar: which profile, the connection, what waits to be sent (and what failed or
conflicts), the inbox's unread changes (`i` shows them), how far a pull has come, and what
budget is left; once the day's use passes the profile's alert (80 % unless set), a warning
saying what the client does about it takes the budget's place.

It shows the app's latest `SyncStatusChanged` report, which the app keeps in its `sync_status`
reactive; until the sync engine reports, it says "offline" and shows dashes rather than zeros.
The words are `sync_text`'s, shared with the sync panel. What a key just did (a copy) is echoed
first for a few seconds. While a countdown shows (a wait for
the rate limit, the next retry), it is redrawn every second.
"""

from __future__ import annotations

import time
from typing import ClassVar

from textual.content import Content
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget

from tracker_tui.data.usage_alert import DEFAULT_ALERT_PERCENT, alert_words, day_used_percent
from tracker_tui.messages import SyncStatusChanged
from tracker_tui.widgets.sync_text import (
    backfill_text,
    budget_text,
    connection_text,
    has_countdown,
    outbox_text,
    progress_text,
)

TICK = 1.0
"""Seconds between redraws while a countdown shows."""
DOT = "  ·  "
ECHO_SECONDS = 4.0


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
    unread: reactive[int] = reactive(0)
    """Unread changes of the inbox (the app's `inbox_unread`), shown when there are some."""

    read_only: reactive[bool] = reactive(False)
    """Shown at the end; set again when the key turns out not to write (`tracker_tui.access`)."""
    echoed: reactive[str | None] = reactive(None)
    """A short word on what a key just did (`Copied #42`), shown for `ECHO_SECONDS`."""

    def __init__(self, profile: str, *, read_only: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self._profile = profile
        self.set_reactive(StatusBar.read_only, read_only)
        self._echo_timer: Timer | None = None

    def on_mount(self) -> None:
        """Follow the app's latest report (the app receives them, every screen shows them)."""
        self.watch(self.app, "sync_status", self._show_status)
        if hasattr(self.app, "inbox_unread"):
            self.watch(self.app, "inbox_unread", self._show_unread)
        self.set_interval(TICK, self._tick)

    def echo(self, text: str) -> None:
        """Say what a key just did, in place of the progress and budget for a moment."""
        self.echoed = text
        if self._echo_timer is not None:
            self._echo_timer.stop()
        self._echo_timer = self.set_timer(ECHO_SECONDS, self._end_echo)

    def _end_echo(self) -> None:
        self.echoed = None
        self._echo_timer = None

    def _show_unread(self, unread: int) -> None:
        self.unread = unread

    def _show_status(self, status: SyncStatusChanged | None) -> None:
        """Take the app's report as this bar's state."""
        self.status = status

    def _alert_at(self) -> int:
        """The profile's alert threshold, which the app's services carry."""
        services = getattr(self.app, "services", None)
        return int(getattr(services, "usage_alert", DEFAULT_ALERT_PERCENT))

    def _tick(self) -> None:
        if self.status is not None and has_countdown(self.status.connection):
            self.refresh()

    def render(self) -> Content:
        """Profile, connection, writes waiting, progress and budget, separated by dots; on a
        narrow terminal the budget goes first, then the progress, so the connection and what
        waits always show."""
        status = self.status
        head = Content.assemble(
            ((status.profile if status else self._profile) or "—", "bold $text"),
            "  ",
            connection_text(status.connection if status else None, time.monotonic()),
            DOT,
            outbox_text(status.outbox if status else None),
            *((DOT, Content.styled(f"inbox {self.unread}", "bold $text")) if self.unread else ()),
        )
        progress = progress_text(status.progress) if status is not None else None
        if status is not None and (progress is None or status.backfill is not None):
            progress = backfill_text(status.backfill) or progress
        budget = "—" if status is None else budget_text(status.budget_minute, status.budget_day)
        optional: list[Content] = [Content.styled(progress, "$text")] if progress else []
        optional.append(Content(f"budget {budget}"))
        tail = [Content.styled("read-only", "bold $text-error")] if self.read_only else []
        room = self.content_size.width or 10_000
        percent = None if status is None else day_used_percent(status.budget_day, status.day_limit)
        if percent is not None and percent >= self._alert_at():
            for short in (False, True):
                alert = Content.styled(alert_words(percent, short=short), "bold $warning")
                if _length(head, [alert, *tail]) <= room or short:
                    optional = [alert]
                    break
        if self.echoed:
            optional.insert(0, Content.styled(self.echoed, "bold $text-success"))
        while optional and _length(head, [*optional, *tail]) > room:
            optional.pop()
        return Content.assemble(
            head, *(part for item in [*optional, *tail] for part in (DOT, item))
        )


def _length(head: Content, parts: list[Content]) -> int:
    return head.cell_length + sum(len(DOT) + part.cell_length for part in parts)
