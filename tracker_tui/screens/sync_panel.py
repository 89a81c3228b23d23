"""The sync panel: the engine's connection (and why), when it last synced, what waits in the
outbox, what failed (with the server's words), what conflicts, field by field, with the
server's copy, which creates may already be on the server (their answer was lost and
look-alike records are there), and which records the server sent could not be read.

The connection and the counts are the engine's report, drawn with the status bar's words
(`widgets.sync_text`), so the panel and every status bar always agree. Records are named as a
person knows them (#42, a project's key), never by internal id. Failed writes can be retried,
discarded or edited; each conflicting field is settled by keeping mine or taking theirs; an
unsure create is settled as one of the records it may have made, sent anyway, or discarded.
Everything here reads and writes the cache; the engine picks the outcome up on its next pass
(it is poked after every change).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from cache import ACTIVE_STATES, Cache, Conflict, EntryState, OutboxEntry, Resolution, Resource
from sync.connection import Connection
from tracker_tui.data.changes import entry_summary, value_text
from tracker_tui.formatting import relative_time
from tracker_tui.key_names import hint_keys
from tracker_tui.messages import EditIssueRequested, SourceFailed, SyncStatusChanged
from tracker_tui.screens.binding_commands import BindingCommands
from tracker_tui.screens.choice_dialog import ChoiceDialog
from tracker_tui.screens.declared_keys import DeclaredKeyOrder
from tracker_tui.services import Services
from tracker_tui.widgets.status_bar import TICK, StatusBar
from tracker_tui.widgets.sync_text import (
    backfill_text,
    budget_text,
    connection_text,
    has_countdown,
    outbox_text,
    progress_text,
)
from tracker_tui.workers import read_in_thread, write_in_thread

if TYPE_CHECKING:
    from sync.remembered import Unreadable

PENDING_SHOWN = 30
"""Pending writes listed one by one; more are only counted."""


@dataclass(frozen=True)
class OutboxState:
    """Outbox entries not yet settled (what the panel is about), with names for ids."""

    entries: list[OutboxEntry]
    conflicts: list[Conflict]
    names: dict[str, str]
    """User names and project keys by id, for field values."""
    targets: dict[int, str]
    """What each entry is about, as a person names it ("#42", "comment on #42"), by entry id."""
    unreadable: list[Unreadable] = field(default_factory=list)
    """Records the server sent that the pull could not read (sync.remembered)."""

    def target(self, entry: OutboxEntry) -> str:
        return self.targets.get(entry.id, "")


class SyncPanelScreen(DeclaredKeyOrder[None]):
    """The sync engine's state and the outbox's troubles, with ways out of them."""

    COMMANDS = {BindingCommands}
    HELP_GROUP: ClassVar[str] = "Sync panel"
    CSS_PATH = "sync_panel.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Back", id="sync.back"),
        Binding("r", "retry", "Retry failed", id="sync.retry"),
        Binding("x", "discard", "Discard failed", id="sync.discard"),
        Binding("e", "edit", "Edit failed", id="sync.edit"),
        Binding("m", "resolve('mine')", "Keep mine", id="sync.keep_mine"),
        Binding("t", "resolve('theirs')", "Take theirs", id="sync.take_theirs"),
        Binding("s", "same", "Unsure: it is on the server", id="sync.same"),
        Binding("n", "send_anyway", "Unsure: send anyway", id="sync.send_anyway"),
    ]

    @dataclass
    class Loaded(Message):
        state: OutboxState

    @dataclass
    class SuspectsRead(Message):
        """The records an unsure create may have made, as (id, label) choices."""

        entry_id: int
        choices: list[tuple[str, str]]

    def __init__(self, services: Services) -> None:
        super().__init__()
        self._services = services
        self.state = OutboxState([], [], {}, {})
        self._status: SyncStatusChanged | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="sync-summary")
        with VerticalScroll(id="sync-body"):
            retry, discard = hint_keys(self, "sync.retry"), hint_keys(self, "sync.discard")
            edit = hint_keys(self, "sync.edit")
            yield Label(
                f"Failed writes ({retry} retry · {discard} discard · {edit} edit)",
                classes="sync-heading",
            )
            yield OptionList(id="failed")
            mine, theirs = hint_keys(self, "sync.keep_mine"), hint_keys(self, "sync.take_theirs")
            yield Label(
                f"Conflicts ({mine} keep mine · {theirs} take theirs)", classes="sync-heading"
            )
            yield OptionList(id="conflicts")
            same, anyway = hint_keys(self, "sync.same"), hint_keys(self, "sync.send_anyway")
            yield Label(
                f"May already be on the server ({same} it is · {anyway} send anyway · "
                f"{discard} discard)",
                classes="sync-heading",
            )
            yield OptionList(id="unsure")
            yield Label("Waiting to be sent", classes="sync-heading")
            yield Static("", id="pending")
            heading = Label("Could not be read", classes="sync-heading", id="unreadable-heading")
            listed = Static("", id="unreadable")
            heading.display = listed.display = False
            yield heading
            yield listed
        yield StatusBar(self._services.profile, read_only=self._services.read_only)
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.app, "cache_revision", self._load, init=False)
        self.watch(self.app, "sync_status", self._show_summary)
        self.set_interval(TICK, self._tick)
        self._load()

    def _load(self) -> None:
        services = self._services

        def read() -> OutboxState:
            entries = services.cache.outbox.entries(ACTIVE_STATES)
            conflicts = services.cache.outbox.conflicts()
            names = services.source.user_names() | services.source.project_keys()
            shown = [entry for entry in entries if entry.state is not EntryState.PENDING]
            shown += [entry for entry in entries if entry.state is EntryState.PENDING][
                :PENDING_SHOWN
            ]
            from sync.remembered import unreadable_records

            return OutboxState(
                entries,
                conflicts,
                names,
                targets(services.cache, shown, names),
                unreadable_records(services.cache),
            )

        read_in_thread(self, "read the outbox", read, self.Loaded)

    def _tick(self) -> None:
        """Count down a wait for the rate limit or for the next retry."""
        if self._status is not None and has_countdown(self._status.connection):
            self._show_summary(self._status)

    def _show_summary(self, status: SyncStatusChanged | None) -> None:
        """The connection and why, the last sync, the budget, the counts: the engine's latest
        report, in the status bar's words."""
        self._status = status
        now = self._services.clock()
        last = "never"
        if status is not None and status.last_sync is not None:
            last = relative_time(status.last_sync, now)
        budget = "—" if status is None else budget_text(status.budget_minute, status.budget_day)
        connection = status.connection if status is not None else None
        parts: list[str | Content | tuple[str, str]] = [
            connection_text(connection, time.monotonic()),
            f"   last sync {last}   budget left {budget}",
        ]
        progress = progress_text(status.progress) if status is not None else None
        if progress:
            parts.append(f"\n{progress}")
        backfill = backfill_text(status.backfill, long=True) if status is not None else None
        if backfill:
            parts.append(f"\n{backfill}")
        if connection is not None and connection.detail:
            parts.append((f"\n{connection.detail}", "$text-muted"))
        if connection is not None and connection.kind is Connection.KEY_REFUSED:
            parts.append("\nLog in with a valid key: tracker-tui login")
        summary = self.query_one("#sync-summary", Static)
        summary.update(Content.assemble(*parts))
        summary.border_subtitle = outbox_text(status.outbox if status else None)

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
                        (state.target(entry), "bold"),
                        " ",
                        (entry_summary(entry, state.names), "bold"),
                        "\n  ",
                        (entry.last_error or "rejected by the server", "red"),
                    ),
                    id=str(entry.id),
                )
                for entry in failed
            ],
            "No failed writes.",
        )
        unsure = [entry for entry in state.entries if entry.state is EntryState.UNSURE]
        self._fill(
            "#unsure",
            [
                Option(
                    Text.assemble(
                        (entry_summary(entry, state.names), "bold"),
                        "\n  ",
                        (entry.last_error or "may already be on the server", "red"),
                    ),
                    id=str(entry.id),
                )
                for entry in unsure
            ],
            "No unsure writes.",
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
            text.append(f"{state.target(entry)} {entry_summary(entry, state.names)}\n")
        if len(pending) > PENDING_SHOWN:
            text.append(f"… and {len(pending) - PENDING_SHOWN:,} more\n", style="dim")
        if not pending:
            text.append("Nothing: the server has everything.", style="dim")
        self.query_one("#pending", Static).update(text)
        self._show_unreadable(state.unreadable)

    def _show_unreadable(self, unreadable: list[Unreadable]) -> None:
        """The records the server sent that the pull skipped, with why: the cache holds no
        copy of them, or an older one, until the server sends them readable."""
        listed = self.query_one("#unreadable", Static)
        self.query_one("#unreadable-heading", Label).display = listed.display = bool(unreadable)
        text = Text()
        for item in unreadable:
            text.append(f"{item.resource} {item.id or '(no id)'}", style="bold")
            text.append(f"  {item.reason}\n", style="red")
        text.append(
            "Not in the cache, or an older copy, until the server sends them readable.", "dim"
        )
        listed.update(text)

    def _conflict_line(self, conflict: Conflict, state: OutboxState) -> Table:
        """Base | mine | theirs, side by side, for one field."""
        entry = next((item for item in state.entries if item.id == conflict.entry_id), None)
        where = state.target(entry) if entry else "a write"
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
                self, "retry the write", lambda: cache.outbox.retry(entry_id), done="Queued again."
            )

    def action_discard(self) -> None:
        """Drop the highlighted failed write (the server's copy shows again), or the unsure
        create when its list has the focus."""
        focused = self.focused
        selector = "#unsure" if focused is not None and focused.id == "unsure" else "#failed"
        if (entry_id := self._chosen(selector)) is not None and self._writable():
            cache = self._services.cache
            write_in_thread(
                self, "discard the write", lambda: cache.outbox.discard(entry_id), done="Discarded."
            )

    def action_edit(self) -> None:
        """Open the failed write's issue in the form, filled in with what the server refused,
        to fix it: saving the form replaces the failed write."""
        entry_id = self._chosen("#failed")
        entry = next((item for item in self.state.entries if item.id == entry_id), None)
        if entry is None:
            return
        if entry.resource is not Resource.ISSUES:
            self.notify("Only issue writes open in the form.", severity="warning")
            return
        self.post_message(EditIssueRequested(entry.target_id, replacing=entry.id))

    def action_same(self) -> None:
        """The highlighted unsure create is on the server: link it to the record it made
        (asking which when it may be one of several), and send nothing."""
        if (entry_id := self._chosen("#unsure")) is None or not self._writable():
            return
        cache = self._services.cache

        def read() -> None:
            try:
                found = cache.outbox.suspects(entry_id)
            except Exception as error:
                self.post_message(SourceFailed("read what the write may have made", str(error)))
                return
            choices = [(str(record["id"]), record_label(record)) for record in found]
            self.post_message(self.SuspectsRead(entry_id, choices))

        self.run_worker(read, thread=True, exit_on_error=False, group="suspects")

    @on(SuspectsRead)
    def ask_which(self, message: SuspectsRead) -> None:
        """Link at once to the only record the write may have made, else ask which."""
        cache, entry_id = self._services.cache, message.entry_id

        def link(record_id: str | None) -> None:
            if record_id is not None:
                write_in_thread(
                    self,
                    "settle the write",
                    lambda: cache.outbox.same_as(entry_id, record_id),
                    done="Linked: nothing more is sent.",
                )

        if len(message.choices) == 1:
            link(message.choices[0][0])
        elif message.choices:
            self.app.push_screen(
                ChoiceDialog("Which one did this write make?", message.choices), callback=link
            )

    def action_send_anyway(self) -> None:
        """The highlighted unsure create is not on the server: send it (once more) as it is."""
        if (entry_id := self._chosen("#unsure")) is not None and self._writable():
            cache = self._services.cache
            write_in_thread(
                self,
                "send the write",
                lambda: cache.outbox.send_anyway(entry_id),
                done="Queued again.",
            )

    def action_resolve(self, side: str) -> None:
        """Settle the highlighted conflicting field with my value or the server's."""
        if (conflict_id := self._chosen("#conflicts")) is None or not self._writable():
            return
        cache, resolution = self._services.cache, Resolution(side)
        write_in_thread(
            self,
            "resolve the conflict",
            lambda: cache.outbox.resolve_conflict(conflict_id, resolution),
            done="Kept mine." if resolution is Resolution.MINE else "Took theirs.",
        )


def record_label(record: Mapping[str, object]) -> str:
    """ "#12 Weekly review", or the title alone for a record without a number."""
    number = record.get("number")
    title = str(record.get("title") or "")
    return f"#{number} {title}" if number is not None else title


def targets(cache: Cache, entries: Iterable[OutboxEntry], names: dict[str, str]) -> dict[int, str]:
    """What each entry is about, as a person names it: "#42" for an issue, "comment on #42",
    a project's key; "new issue" for one not yet created on the server (no number yet)."""
    numbers: dict[str, str] = {}

    def issue(issue_id: str | None) -> str:
        if issue_id is None:
            return "an issue"
        if issue_id not in numbers:
            detail = cache.reads.issue(issue_id)
            number = detail.issue.number if detail is not None else None
            numbers[issue_id] = "new issue" if number is None else f"#{number}"
        return numbers[issue_id]

    found: dict[int, str] = {}
    for entry in entries:
        if entry.resource is Resource.ISSUES:
            found[entry.id] = issue(entry.target_id)
        elif entry.resource is Resource.COMMENTS:
            found[entry.id] = f"comment on {issue(entry.parent_id)}"
        elif entry.resource is Resource.PROJECTS:
            key = names.get(entry.target_id)
            found[entry.id] = f"project {key}" if key else "new project"
        elif entry.resource is Resource.WORKSPACES:
            found[entry.id] = "workspace"
        else:
            found[entry.id] = entry.resource.value.rstrip("s")
    return found
