"""The sync panel: is the engine online, when did it last sync, what waits in the outbox, what
failed (with the server's words) and what conflicts, field by field, with the server's copy.

Failed writes can be retried, discarded or edited; each conflicting field is settled by
keeping mine or taking theirs. Everything here reads and writes the cache; the engine picks
the outcome up on its next pass (it is poked after every change).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from cache import ACTIVE_STATES, Conflict, EntryState, OutboxEntry, Resolution, Resource
from tracker_tui.data.changes import entry_summary, value_text
from tracker_tui.formatting import count_label, relative_time
from tracker_tui.messages import EditIssueRequested, SyncStatusChanged
from tracker_tui.screens.binding_commands import BindingCommands
from tracker_tui.services import Services
from tracker_tui.widgets.status_bar import StatusBar
from tracker_tui.workers import read_in_thread, write_in_thread

"""Outbox entries not yet settled: what the panel is about."""

PENDING_SHOWN = 30
"""Pending writes listed one by one; more are only counted."""


@dataclass(frozen=True)
class OutboxState:
    entries: list[OutboxEntry]
    conflicts: list[Conflict]
    names: dict[str, str]


class SyncPanelScreen(Screen[None]):
    """The sync engine's state and the outbox's troubles, with ways out of them."""

    COMMANDS = {BindingCommands}
    HELP_GROUP: ClassVar[str] = "Sync panel"
    CSS_PATH = "sync_panel.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Back"),
        Binding("r", "retry", "Retry failed"),
        Binding("x", "discard", "Discard failed"),
        Binding("e", "edit", "Edit failed"),
        Binding("m", "resolve('mine')", "Keep mine"),
        Binding("t", "resolve('theirs')", "Take theirs"),
    ]

    @dataclass
    class Loaded(Message):
        state: OutboxState

    def __init__(self, services: Services) -> None:
        super().__init__()
        self._services = services
        self.state = OutboxState([], [], {})

    def compose(self) -> ComposeResult:
        yield Static("", id="sync-summary")
        with VerticalScroll(id="sync-body"):
            yield Label("Failed writes (r retry · x discard · e edit)", classes="sync-heading")
            yield OptionList(id="failed")
            yield Label("Conflicts (m keep mine · t take theirs)", classes="sync-heading")
            yield OptionList(id="conflicts")
            yield Label("Waiting to be sent", classes="sync-heading")
            yield Static("", id="pending")
        yield StatusBar(self._services.profile, read_only=self._services.read_only)
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.app, "cache_revision", self._load, init=False)
        self.watch(self.app, "sync_status", self._show_summary)
        self._load()

    def _load(self) -> None:
        services = self._services

        def read() -> OutboxState:
            return OutboxState(
                services.cache.outbox(ACTIVE_STATES),
                services.cache.conflicts(),
                services.source.user_names() | services.source.project_keys(),
            )

        read_in_thread(self, "read the outbox", read, self.Loaded)

    def _show_summary(self, status: SyncStatusChanged | None) -> None:
        """Online or not, the last sync, the budget: from the engine's latest report."""
        now = self._services.clock()
        online = Text("○ offline", "yellow")
        if status is not None and status.online:
            online = Text("● online", "green")
        last = "never"
        if status is not None and status.last_sync is not None:
            last = relative_time(status.last_sync, now)

        def left(value: int | None) -> str:
            return "—" if value is None else f"{value:,}"

        minute = left(status.budget_minute if status else None)
        day = left(status.budget_day if status else None)
        summary = Text.assemble(
            online,
            f"   last sync {last}   budget left {minute} this minute, {day} today",
        )
        self.query_one("#sync-summary", Static).update(summary)

    @on(Loaded)
    def show_outbox(self, message: Loaded) -> None:
        """Fill the failed, conflict and pending lists."""
        self.state = state = message.state
        failed = [entry for entry in state.entries if entry.state is EntryState.FAILED]
        self._fill(
            "#failed",
            [
                Option(
                    Text.assemble(
                        (entry_summary(entry, state.names), "bold"),
                        f"  {entry.target_id}\n  ",
                        (entry.last_error or "rejected by the server", "red"),
                    ),
                    id=str(entry.id),
                )
                for entry in failed
            ],
            "No failed writes.",
        )
        self._fill(
            "#conflicts",
            [
                Option(self._conflict_line(conflict, state), id=str(conflict.id))
                for conflict in state.conflicts
            ],
            "No conflicts.",
        )
        pending = [
            entry
            for entry in state.entries
            if entry.state in (EntryState.PENDING, EntryState.SENDING)
        ]
        text = Text()
        for entry in pending[:PENDING_SHOWN]:
            text.append(f"{entry.state.value:<8} ", style="bold")
            text.append(entry_summary(entry, state.names) + "\n")
        if len(pending) > PENDING_SHOWN:
            text.append(f"… and {len(pending) - PENDING_SHOWN:,} more\n", style="dim")
        if not pending:
            text.append("Nothing: the server has everything.", style="dim")
        self.query_one("#pending", Static).update(text)
        self.query_one("#sync-summary", Static).border_subtitle = (
            f"{count_label(len(pending), 'pending write')} · {len(failed)} failed · "
            f"{len(state.conflicts)} conflicting fields"
        )

    def _conflict_line(self, conflict: Conflict, state: OutboxState) -> Table:
        """Base | mine | theirs, side by side, for one field."""
        entry = next((item for item in state.entries if item.id == conflict.entry_id), None)
        where = entry.target_id if entry else f"entry {conflict.entry_id}"
        table = Table.grid(padding=(0, 2), expand=True)
        for _ in range(4):
            table.add_column(ratio=1)
        names = state.names
        table.add_row(
            Text(f"{where} · {conflict.field}", style="bold"),
            Text("was " + value_text(conflict.field, conflict.base, names), style="dim"),
            Text("mine " + value_text(conflict.field, conflict.mine, names), style="cyan"),
            Text("theirs " + value_text(conflict.field, conflict.theirs, names), style="magenta"),
        )
        return table

    def _fill(self, selector: str, options: list[Option], empty: str) -> None:
        option_list = self.query_one(selector, OptionList)
        highlighted = option_list.highlighted
        option_list.clear_options()
        if options:
            option_list.add_options(options)
            option_list.highlighted = min(highlighted or 0, len(options) - 1)
        else:
            option_list.add_option(Option(Text(empty, style="dim"), disabled=True))

    def _chosen(self, selector: str) -> int | None:
        option_list = self.query_one(selector, OptionList)
        if option_list.highlighted is None:
            return None
        option = option_list.get_option_at_index(option_list.highlighted)
        return int(option.id) if option.id else None

    def _writable(self) -> bool:
        if self._services.read_only:
            self.notify("Read-only mode: changes are off.", severity="warning")
        return not self._services.read_only

    def action_retry(self) -> None:
        """Put the highlighted failed write back in the queue."""
        if (entry_id := self._chosen("#failed")) is not None and self._writable():
            cache = self._services.cache
            write_in_thread(
                self, "retry the write", lambda: cache.retry(entry_id), done="Queued again."
            )

    def action_discard(self) -> None:
        """Drop the highlighted failed write (the server's copy shows again)."""
        if (entry_id := self._chosen("#failed")) is not None and self._writable():
            cache = self._services.cache
            write_in_thread(
                self, "discard the write", lambda: cache.discard(entry_id), done="Discarded."
            )

    def action_edit(self) -> None:
        """Open the failed write's issue in the form, to fix what the server refused."""
        entry_id = self._chosen("#failed")
        entry = next((item for item in self.state.entries if item.id == entry_id), None)
        if entry is None:
            return
        if entry.resource is not Resource.ISSUES:
            self.notify("Only issue writes open in the form.", severity="warning")
            return
        self.post_message(EditIssueRequested(entry.target_id))

    def action_resolve(self, side: str) -> None:
        """Settle the highlighted conflicting field with my value or the server's."""
        if (conflict_id := self._chosen("#conflicts")) is None or not self._writable():
            return
        cache, resolution = self._services.cache, Resolution(side)
        write_in_thread(
            self,
            "resolve the conflict",
            lambda: cache.resolve_conflict(conflict_id, resolution),
            done="Kept mine." if resolution is Resolution.MINE else "Took theirs.",
        )
