"""The issue detail screen: everything about one issue, and editing it in place.

It reads the issue (with comments, pending outbox entries and open conflicts) in a worker and
re-reads whenever the cache changes. Each field key opens a picker; the pick is written to the
outbox at once (the screen shows it a moment later, marked pending), never to the network.
A comment being written is kept as a draft while it is typed (`tracker_tui.drafts`): it is
back in the box when the issue is opened again, even after the app was killed, and leaving the
screen with one asks before it is thrown away.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, Markdown, Static

from cache import (
    ACTIVE_STATES,
    IssueDetail,
    IssueRow,
    JsonObject,
    JsonValue,
    OutboxEntry,
    ProjectRow,
    Resource,
)
from issuefields import (
    ASSIGNEE,
    COMMENT_BODY,
    LABELS,
    LISTED,
    PRIORITY,
    PROJECT,
    STATUS,
    Field,
    Kind,
    status_choices,
)
from tracker_tui.data.cache_source import NO_VALUE, parse_time
from tracker_tui.data.changes import entry_summary, value_text
from tracker_tui.drafts import DraftKeeper, comment_key
from tracker_tui.formatting import issue_reference, relative_time
from tracker_tui.messages import EditIssueRequested
from tracker_tui.screens.binding_commands import BindingCommands
from tracker_tui.screens.choice_dialog import ChoiceDialog
from tracker_tui.screens.confirm import ConfirmDialog
from tracker_tui.screens.labels_dialog import LabelsDialog
from tracker_tui.services import Services
from tracker_tui.widgets.status_bar import StatusBar
from tracker_tui.workers import read_in_thread, write_in_thread


@dataclass(frozen=True)
class DetailData:
    """One read of everything the screen shows."""

    detail: IssueDetail | None
    users: dict[str, str]
    projects: list[ProjectRow]
    labels: list[str]
    comment_entries: tuple[OutboxEntry, ...] = ()
    """Unsettled writes to the issue's comments (`IssueDetail.entries` holds the issue's own)."""
    draft: JsonObject | None = None
    """The comment typed here earlier and not sent."""


class IssueDetailScreen(Screen[None]):
    """One issue: fields, description, comments, pending changes; edit and comment."""

    COMMANDS = {BindingCommands}
    HELP_GROUP: ClassVar[str] = "Issue screen"
    CSS_PATH = "issue_detail.tcss"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("s", "pick_status", STATUS.label),
        Binding("p", "pick_priority", PRIORITY.label),
        Binding("a", "pick_assignee", ASSIGNEE.label),
        Binding("o", "pick_project", PROJECT.label),
        Binding("l", "edit_labels", LABELS.label),
        Binding("e", "edit", "Edit"),
        Binding("c", "comment", "Comment"),
    ]

    WRITE_ACTIONS: ClassVar[frozenset[str]] = frozenset(
        {
            "pick_status",
            "pick_priority",
            "pick_assignee",
            "pick_project",
            "edit_labels",
            "edit",
            "comment",
        }
    )
    """Hidden with `--read-only`: from the footer, the help and the palette too."""

    @dataclass
    class Loaded(Message):
        """A fresh read of the issue arrived from the worker."""

        data: DetailData

    def __init__(self, services: Services, issue_id: str) -> None:
        super().__init__()
        self._services = services
        self.issue_id = issue_id
        self.data: DetailData | None = None
        self.draft: DraftKeeper | None = None
        """The comment box's draft, once the issue is loaded (the box is disabled until then,
        so the draft is kept under the issue's resolved id)."""

    def compose(self) -> ComposeResult:
        """Title and fields on top, then the long parts scrolling, then the comment field."""
        yield Static("Loading…", id="detail-title")
        yield Static("", id="detail-fields")
        with VerticalScroll(id="detail-body"):
            yield Markdown("", id="detail-description")
            yield Label("Comments", classes="detail-heading")
            yield Static("", id="detail-comments")
            yield Label("Local changes not yet on the server", classes="detail-heading")
            yield Static("", id="detail-pending")
        box = Input(
            placeholder="Write a comment (enter sends, esc leaves)",
            id="comment",
            disabled=True,
            select_on_focus=False,  # typing on would replace the draft
        )
        box.display = not self._services.read_only
        yield box
        yield StatusBar(self._services.profile, read_only=self._services.read_only)
        yield Footer()

    def on_mount(self) -> None:
        """Read the issue now and whenever the cache changes."""
        self.watch(self.app, "cache_revision", self._load, init=False)
        self._load()
        self._services.sync.issue_opened(self.issue_id)

    def _load(self) -> None:
        services = self._services

        def read() -> DetailData:
            cache = services.cache
            labels = [value for value in cache.reads.distinct_values(LABELS) if value]
            detail = cache.reads.issue(self.issue_id)
            issue_id = detail.issue.id if detail else self.issue_id
            children = tuple(
                entry
                for entry in cache.outbox.entries(ACTIVE_STATES)
                if entry.resource is Resource.COMMENTS and entry.parent_id == issue_id
            )
            draft = cache.drafts.get(comment_key(issue_id)) if self.draft is None else None
            return DetailData(
                detail,
                services.source.user_names(),
                cache.reads.projects(),
                labels,
                children,
                draft,
            )

        read_in_thread(self, "read the issue", read, self.Loaded)

    @on(Loaded)
    def show_issue(self, message: Loaded) -> None:
        """Draw the fresh read (an issue deleted meanwhile says so)."""
        self.data = message.data
        detail = message.data.detail
        if detail is None:
            self.query_one("#detail-title", Static).update("This issue is no longer in the cache.")
            return
        self.issue_id = detail.issue.id
        if self.draft is None:
            self._open_comment_box(message.data.draft)
        issue = detail.issue
        sync = "" if issue.sync_state == "synced" else f"  [{issue.sync_state.value}]"
        title = Text.assemble(
            (issue_reference(issue.number, issue.id), "bold"), "  ", issue.title, (sync, "italic")
        )
        self.query_one("#detail-title", Static).update(title)
        self.query_one("#detail-fields", Static).update(self._fields_text(message.data))
        self.query_one("#detail-description", Markdown).update(
            detail.description or "*No description.*"
        )
        self.query_one("#detail-comments", Static).update(self._comments_text(message.data))
        self.query_one("#detail-pending", Static).update(self._pending_text(message.data))

    def _names(self, data: DetailData) -> dict[str, str]:
        return data.users | {project.id: project.key or project.name for project in data.projects}

    def _fields_text(self, data: DetailData) -> Text:
        """Every field but those the heading and the body show, four to a line."""
        assert data.detail is not None
        issue = data.detail.issue
        names = self._names(data)
        now = self._services.clock()
        pairs = [(f.label, self._value(f, issue, names, now)) for f in LISTED]
        text = Text()
        for index, (name, value) in enumerate(pairs):
            text.append(f"{name} ", style="dim")
            text.append(value, style="bold")
            text.append("\n" if index % 4 == 3 else "    ")
        return text

    @staticmethod
    def _value(field: Field, issue: IssueRow, names: dict[str, str], now: datetime) -> str:
        if field.kind is Kind.LABELS:
            return ", ".join(issue.labels) or "—"
        value = issue.cells.get(field.member)
        if field.kind is Kind.TIME:
            return relative_time(parse_time(None if value is None else str(value)), now)
        return value_text(field.member, value, names)

    def _comments_text(self, data: DetailData) -> Text:
        assert data.detail is not None
        comments = data.detail.comments
        if not comments:
            hint = "" if self._services.read_only else " (c to write one)"
            return Text(f"No comments yet{hint}.", style="dim")
        now = self._services.clock()
        text = Text()
        for comment in comments:
            author = data.users.get(comment.author or "", comment.author or "you")
            when = relative_time(parse_time(comment.created_at), now)
            pending = "" if comment.sync_state == "synced" else f" · {comment.sync_state.value}"
            text.append(f"{author}", style="bold")
            text.append(f" · {when}{pending}\n", style="dim")
            text.append(comment.body.rstrip() + "\n\n")
        return text

    def _pending_text(self, data: DetailData) -> Text:
        assert data.detail is not None
        detail = data.detail
        entries = (*detail.entries, *data.comment_entries)
        if not entries and not detail.conflicts:
            return Text("None: this is the server's copy.", style="dim")
        names = self._names(data)
        text = Text()
        for entry in entries:
            text.append(f"{entry.state.value:<9}", style="bold")
            text.append(entry_summary(entry, names))
            if entry.last_error:
                text.append(f" — {entry.last_error}", style="red")
            text.append("\n")
        for conflict in detail.conflicts:
            mine = value_text(conflict.field, conflict.mine, names)
            theirs = value_text(conflict.field, conflict.theirs, names)
            text.append("conflict ", style="bold red")
            text.append(f"{conflict.field}: mine {mine}, theirs {theirs} (y: sync panel)\n")
        return text

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """With `--read-only` the write keys are not there at all (not merely refused)."""
        return not (self._services.read_only and action in self.WRITE_ACTIONS)

    def _open_comment_box(self, draft: JsonObject | None) -> None:
        """The issue is known: the comment box works (unless read-only), with the draft left
        in it last time."""
        if self._services.read_only:
            return
        box = self.query_one("#comment", Input)
        body = draft.get("body") if draft else None
        self.draft = DraftKeeper(self, self._services.cache, comment_key(self.issue_id), kept=draft)
        if isinstance(body, str) and body:
            with box.prevent(Input.Changed):
                box.value = body
            self.notify("Your unsent comment is back in the comment box.", timeout=4)
        box.disabled = False

    @on(Input.Changed, "#comment")
    def draft_as_typed(self, event: Input.Changed) -> None:
        """Keep the comment as it is typed, so closing or losing the app does not lose it."""
        if self.draft is not None:
            self.draft.changed({"body": event.value} if event.value.strip() else None)

    def keep_draft(self) -> None:
        """The app is exiting: keep the comment box as it stands."""
        if self.draft is not None:
            body = self.query_one("#comment", Input).value
            self.draft.keep({"body": body} if body.strip() else None)

    def on_unmount(self) -> None:
        """Write the draft's last keystrokes now: the app may be closing."""
        if self.draft is not None:
            self.draft.flush()

    def action_back(self) -> None:
        """Back to where the issue was opened from (esc in the comment field leaves it); with
        a comment typed and not sent, ask first."""
        box = self.query_one("#comment", Input)
        if self.focused is box:
            self.set_focus(None)
            return
        if not box.value.strip():
            self.dismiss(None)
            return

        def answered(discard: bool | None) -> None:
            if not discard:
                box.focus()
                return
            if self.draft is not None:
                self.draft.discard()
            self.dismiss(None)

        self.app.push_screen(
            ConfirmDialog(
                "Discard the comment you have not sent?", yes="Discard", no="Keep writing"
            ),
            answered,
        )

    def action_pick_status(self) -> None:
        """Offer only the moves the workflow allows from the current status."""
        self._pick(STATUS)

    def action_pick_priority(self) -> None:
        self._pick(PRIORITY)

    def action_pick_assignee(self) -> None:
        self._pick(ASSIGNEE)

    def action_pick_project(self) -> None:
        self._pick(PROJECT)

    def _pick(self, field: Field) -> None:
        """A picker of the field's values: known choices (a status's allowed moves only), the
        users by name, the projects not archived (and the issue's own)."""
        if (issue := self._writable_issue()) is None or self.data is None:
            return
        value = issue.cells.get(field.member)
        current = None if value is None else str(value)
        hint = ""
        choices: list[tuple[str, str]]
        if field.kind is Kind.CHOICE:
            values = field.values
            if field is STATUS:
                current = current or STATUS.default or ""
                values, hint = status_choices(current), "allowed moves only"
            choices = [(choice, field.label_of(choice)) for choice in values]
        elif field.kind is Kind.USER:
            current = current or NO_VALUE
            users = sorted(self.data.users.items(), key=lambda pair: pair[1])
            choices = [(NO_VALUE, field.empty), *users]
        else:
            current = current or NO_VALUE
            choices = [(NO_VALUE, field.empty)] + [
                (project.id, f"{project.key or ''} {project.name}".strip())
                for project in self.data.projects
                if project.state != "archived" or project.id == value
            ]
        dialog = ChoiceDialog(field.label, choices, current=current, hint=hint)
        self.app.push_screen(dialog, lambda picked: self._picked(field.member, picked))

    def action_edit_labels(self) -> None:
        if (issue := self._writable_issue()) is None or self.data is None:
            return
        dialog = LabelsDialog(issue.labels, self.data.labels)
        self.app.push_screen(dialog, lambda labels: self._set_labels(labels))

    def action_edit(self) -> None:
        """Title and description are edited in the full form."""
        if self._writable_issue() is not None:
            self.post_message(EditIssueRequested(self.issue_id))

    def action_comment(self) -> None:
        if self._writable_issue() is not None:
            self.query_one("#comment", Input).focus()

    @on(Input.Submitted, "#comment")
    def send_comment(self, event: Input.Submitted) -> None:
        """Queue the comment in the outbox; it shows at once, marked pending."""
        body = event.value.strip()
        if not body:
            self.notify("A comment needs some text.", severity="warning")
            return
        if len(body) > (most := COMMENT_BODY.check.max_chars or len(body)):
            self.notify(f"A comment has at most {most:,} characters.", severity="error")
            return
        if self._writable_issue() is None:
            return
        cache, issue_id = self._services.cache, self.issue_id

        def queue() -> object:
            return cache.outbox.create(Resource.COMMENTS, {"issue_id": issue_id, "body": body})

        write = queue if self.draft is None else self.draft.then_discard(queue)
        write_in_thread(self, "queue the comment", write, done="Comment queued.")
        with event.input.prevent(Input.Changed):
            event.input.value = ""
        self.set_focus(None)

    def _picked(self, field: str, value: str | None) -> None:
        """A picker's answer: None is a cancel, `NO_VALUE` a null."""
        if value is not None:
            self._set(field, None if value == NO_VALUE else value)

    def _set(self, field: str, value: JsonValue) -> None:
        """Queue one field's new value, unless nothing changes."""
        if self.data is None or self.data.detail is None:
            return
        if self.data.detail.record.get(field) == value:
            return
        cache, issue_id = self._services.cache, self.issue_id
        write_in_thread(
            self,
            f"change the {field}",
            lambda: cache.outbox.update(Resource.ISSUES, issue_id, {field: value}),
        )

    def _set_labels(self, labels: list[str] | None) -> None:
        if labels is not None:
            self._set(LABELS.member, list(labels))

    def _writable_issue(self) -> IssueRow | None:
        """The loaded issue, unless writes are off (then say so) or it is not loaded yet."""
        if self._services.read_only:
            self.notify("Read-only mode: changes are off.", severity="warning")
            return None
        if self.data is None or self.data.detail is None:
            return None
        return self.data.detail.issue
