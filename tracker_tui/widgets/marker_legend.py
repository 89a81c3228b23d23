"""The legend line under the issue list: what the markers at the start of a row mean.

It names only the markers the list can show right now (rows are marked, writes wait to be sent,
were refused or conflict, issues came from the server's search ahead of the backfill), so it
takes a line only while there is something to explain, and says nothing twice to a user who has
none of them. The help screen lists all of them (`MARKERS`).
"""

from __future__ import annotations

from typing import ClassVar

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from tracker_tui.data.outbox_counts import OutboxCounts
from tracker_tui.messages import SyncStatusChanged
from tracker_tui.widgets.issue_columns import MARKERS, SEARCHED_GLYPH


class MarkerLegend(Widget):
    """One muted line: `● marked  ↑ not sent yet  ≠ conflict  ✗ refused  ↓ from the server`,
    those that apply."""

    DEFAULT_CSS: ClassVar[str] = """
    MarkerLegend {
        height: 1;
        padding: 0 1;
        color: $text-muted;
        display: none;
        &.-shown { display: block; }
    }
    """

    marked: reactive[int] = reactive(0)
    """How many rows are marked."""
    outbox: reactive[OutboxCounts | None] = reactive(None)
    searched: reactive[int] = reactive(0)
    """Issues the server's search brought in that the backfill has not reached."""

    def on_mount(self) -> None:
        self.watch(self.app, "sync_status", self._show_status)

    def _show_status(self, status: SyncStatusChanged | None) -> None:
        self.outbox = None if status is None else status.outbox
        self.searched = 0 if status is None else status.searched

    def present(self) -> list[str]:
        """The markers the list may show now, in the legend's order."""
        outbox = self.outbox or OutboxCounts()
        shown = {
            "●": self.marked > 0,
            "↑": outbox.pending + outbox.unsure > 0,
            "≠": outbox.conflicts > 0,
            "✗": outbox.failed > 0,
            SEARCHED_GLYPH: self.searched > 0,
        }
        return [glyph for glyph, _ in MARKERS if shown[glyph]]

    def render(self) -> Content:
        words = dict(MARKERS)
        parts = [Content.assemble((glyph, "bold"), f" {words[glyph]}") for glyph in self.present()]
        return Content("   ").join(parts)

    def watch_marked(self) -> None:
        self._update()

    def watch_outbox(self) -> None:
        self._update()

    def watch_searched(self) -> None:
        self._update()

    def _update(self) -> None:
        """Take a line only while a marker is there to explain."""
        self.set_class(bool(self.present()), "-shown")
        self.refresh()
