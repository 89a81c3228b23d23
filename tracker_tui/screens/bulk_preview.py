"""Bulk edit, step two: the preview before queuing, then each issue's result as it is sent.

Enter queues the plan as one outbox batch (undone as one by `u`); from then on the screen
shows the batch's entries as the sync engine moves them through pending, sent, failed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Footer, Static

from cache import EntryState, OutboxEntry
from tracker_tui.data.bulk import BulkPlan, queue
from tracker_tui.key_names import hint_keys
from tracker_tui.messages import SourceFailed, WriteQueued
from tracker_tui.screens.binding_commands import BindingCommands
from tracker_tui.screens.declared_keys import DeclaredKeyOrder
from tracker_tui.services import Services
from tracker_tui.widgets.status_bar import StatusBar
from tracker_tui.workers import describe, read_in_thread


class BulkPreviewScreen(DeclaredKeyOrder[None]):
    """What the bulk change will do; enter queues it, esc leaves."""

    COMMANDS = {BindingCommands}
    HELP_GROUP: ClassVar[str] = "Bulk preview"
    CSS_PATH = "bulk_preview.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "queue", "Queue change", id="preview.queue"),
        Binding("escape", "close", "Close", id="preview.close"),
    ]

    @dataclass
    class Queued(Message):
        batch_id: str | None

    @dataclass
    class Results(Message):
        entries: list[OutboxEntry]

    def __init__(
        self,
        services: Services,
        plan: BulkPlan,
        names: Mapping[str, str],
        *,
        then: Callable[[], object] | None = None,
    ) -> None:
        super().__init__()
        self._services = services
        self.plan = plan
        self._then = then
        """Run in the same worker once the plan is queued (dropping the draft it came from)."""
        self._names = dict(names)
        self.batch_id: str | None = None
        self.queued = False
        self.entries: list[OutboxEntry] = []

    def compose(self) -> ComposeResult:
        yield Static("Bulk change: preview", id="bulk-title")
        with VerticalScroll(id="bulk-body"):
            yield Static(self._preview_text(), id="bulk-summary")
            yield Static("", id="bulk-results")
        yield Static(
            f"{hint_keys(self, 'preview.queue')} queues the change · "
            f"{hint_keys(self, 'preview.close')} cancels",
            id="bulk-hint",
        )
        yield StatusBar(self._services.profile, read_only=self._services.read_only)
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.app, "cache_revision", self._load_results, init=False)

    def _preview_text(self) -> Text:
        text = Text()
        for index, line in enumerate(self.plan.summary(self._names)):
            text.append(line + "\n", style="bold" if index == 0 else "")
        return text

    def action_queue(self) -> None:
        """Queue the plan in the outbox, once."""
        if self.queued:
            return
        if self._services.read_only:
            self.notify("Read-only mode: changes are off.", severity="warning")
            return
        if not self.plan.updates:
            self.notify("Nothing to change.", severity="warning")
            return
        self.queued = True
        cache, plan, app = self._services.cache, self.plan, self.app

        def job() -> None:
            try:
                batch = queue(cache, plan)
                if self._then is not None:
                    self._then()
            except Exception as error:
                app.post_message(SourceFailed("queue the bulk change", describe(error)))
                return
            self.post_message(self.Queued(batch))
            app.post_message(WriteQueued(f"Bulk change queued ({len(plan.updates)}).", batch))

        self.run_worker(job, thread=True, exit_on_error=False, group="writes")

    @on(Queued)
    def show_queued(self, message: Queued) -> None:
        """From now on, show how each issue fares."""
        self.batch_id = message.batch_id
        self.query_one("#bulk-title", Static).update("Bulk change: queued")
        self.query_one("#bulk-hint", Static).update(
            f"{hint_keys(self, 'app.undo_bulk')} undoes it · "
            f"{hint_keys(self, 'preview.close')} closes"
        )
        self._load_results()

    def _load_results(self) -> None:
        if self.batch_id is None:
            return
        cache, batch = self._services.cache, self.batch_id
        read_in_thread(
            self,
            "read the bulk results",
            lambda: [entry for entry in cache.outbox.entries() if entry.batch_id == batch],
            self.Results,
        )

    @on(Results)
    def show_results(self, message: Results) -> None:
        """Counts per state, then each failed issue with the server's message."""
        self.entries = message.entries
        states = Counter(entry.state.value for entry in message.entries)
        text = Text("\nResults: ", style="bold")
        text.append(", ".join(f"{count} {state}" for state, count in sorted(states.items())))
        text.append("\n")
        for entry in message.entries:
            if entry.state in (EntryState.FAILED, EntryState.CONFLICT):
                text.append(f"{entry.target_id}: {entry.state.value}", style="red")
                text.append(f" — {entry.last_error or ''}\n")
        if not message.entries:
            text.append("Undone (nothing of it is left in the outbox).\n", style="dim")
        self.query_one("#bulk-results", Static).update(text)

    def action_close(self) -> None:
        self.dismiss(None)
