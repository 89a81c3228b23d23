"""The inbox (`i`): what changed in the issues that concern the user since they last looked,
grouped by issue, the issue changed last on top, each change in words (`priority Low → High`).

It reads the cache's change log (`Cache.inbox`, filled by the pull: docs/sync.md#change-log)
in a worker, again whenever the cache changes. Opening an issue (enter here, or from anywhere)
marks its changes read (`NavigatingApp`); `r` marks everything shown read (not what arrived
after it was drawn). Read state lives in the cache, so it outlasts the app. `a` switches
between the unread changes and all those kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from cache import Inbox
from tracker_tui.data.cache_source import parse_time
from tracker_tui.data.inbox import IssueChanges, load
from tracker_tui.formatting import count_label, relative_time
from tracker_tui.key_names import hint_keys
from tracker_tui.messages import InboxChanged, OpenIssueRequested
from tracker_tui.screens.binding_commands import BindingCommands
from tracker_tui.screens.declared_keys import DeclaredKeyOrder
from tracker_tui.services import Services
from tracker_tui.widgets.status_bar import StatusBar
from tracker_tui.workers import failed, read_in_thread


class InboxScreen(DeclaredKeyOrder[None]):
    """The changes of the user's issues; enter opens an issue and marks its changes read."""

    CSS_PATH = "inbox.tcss"
    COMMANDS = {BindingCommands}
    HELP_GROUP: ClassVar[str] = "Inbox"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Back", id="inbox.back"),
        Binding("r", "mark_all_read", "Mark all read", id="inbox.mark_all_read"),
        Binding("a", "toggle_read", "Show read", id="inbox.toggle_read"),
    ]

    @dataclass
    class Loaded(Message):
        groups: list[IssueChanges]
        newest: int
        """The newest change shown: what `r` marks read, at most."""

    def __init__(self, services: Services) -> None:
        super().__init__()
        self._services = services
        self.groups: list[IssueChanges] = []
        self.newest = 0
        self.show_read = False

    def compose(self) -> ComposeResult:
        yield Static("Inbox", id="inbox-header")
        yield OptionList(id="inbox")
        yield Static("", id="inbox-empty")
        yield StatusBar(self._services.profile, read_only=self._services.read_only)
        yield Footer()

    def on_mount(self) -> None:
        """Read again when a pull lands and when changes are marked read."""
        self.watch(self.app, "cache_revision", self._load, init=False)
        self.watch(self.app, "inbox_revision", self._load, init=False)
        self._load()

    def on_screen_resume(self) -> None:
        """Back from an issue: what was read there is no longer new."""
        self._load()

    def _load(self) -> None:
        cache, unread_only = self._services.cache, not self.show_read
        read_in_thread(
            self,
            "read the inbox",
            lambda: load(cache, unread_only=unread_only),
            lambda found: self.Loaded(*found),
        )

    @on(Loaded)
    def show_changes(self, message: Loaded) -> None:
        self.groups, self.newest = message.groups, message.newest
        options = self.query_one(OptionList)
        highlighted = options.highlighted_option
        options.clear_options()
        now = self._services.clock()
        for group in message.groups:
            options.add_option(Option(_entry(group, now), id=group.issue_id))
        if highlighted is not None and highlighted.id is not None:
            kept = [index for index, g in enumerate(self.groups) if g.issue_id == highlighted.id]
            options.highlighted = kept[0] if kept else 0
        elif self.groups:
            options.highlighted = 0
        unread = sum(group.unread for group in message.groups)
        issues = sum(1 for group in message.groups if group.unread)
        which = "all kept" if self.show_read else "unread"
        header = f"Inbox · {count_label(unread, 'unread change')} on {count_label(issues, 'issue')}"
        self.query_one("#inbox-header", Static).update(f"{header} ({which})")
        empty = self.query_one("#inbox-empty", Static)
        empty.display = not message.groups
        empty.update(
            f"Nothing new since you last looked. `{hint_keys(self, 'inbox.toggle_read')}` shows "
            "what was read."
            if not self.show_read
            else "Nothing changed in your issues yet: changes others make to issues assigned "
            "to you, created here or that you commented on show here as syncs bring them in."
        )

    @on(OptionList.OptionSelected)
    def open_issue(self, event: OptionList.OptionSelected) -> None:
        """Open the issue (the app marks its changes read, as from anywhere else)."""
        if event.option.id is not None:
            self.app.post_message(OpenIssueRequested(event.option.id))

    def action_mark_all_read(self) -> None:
        """Mark every change shown read (what came after it was drawn stays new)."""
        if not self.newest:
            return
        newest = self.newest
        self._mark(lambda inbox: inbox.mark_read(up_to=newest))
        self.notify("Inbox marked read.", timeout=2)

    def action_toggle_read(self) -> None:
        self.show_read = not self.show_read
        self._load()

    def _mark(self, mark: Callable[[Inbox], object]) -> None:
        """Mark in a worker of the app's (it outlives this screen), which then tells the app,
        and so every screen showing the inbox or its count."""
        inbox = self._services.cache.inbox
        app = self.app

        def job() -> None:
            try:
                mark(inbox)
            except Exception as error:
                app.post_message(failed("mark the inbox read", error))
                return
            app.post_message(InboxChanged())

        app.run_worker(job, thread=True, exit_on_error=False, group="inbox-read")


def _entry(group: IssueChanges, now: datetime) -> Text:
    """An issue's lines: its number, title and when it last changed, then each change."""
    number = f"#{group.number}" if group.number is not None else "new"
    when = group.changes[0].at
    moment = relative_time(parse_time(when), now) if when else ""
    head = Text.assemble(
        ("● " if group.unread else "  ", "bold"),
        (f"{number} ", "bold"),
        (group.title or group.issue_id, "bold" if group.unread else ""),
        (f"  {moment}", "dim"),
    )
    lines = [head]
    for change, line in zip(group.changes, group.lines, strict=True):
        lines.append(Text(f"    {line}", style="dim" if change.read else ""))
    return Text("\n").join(lines)
