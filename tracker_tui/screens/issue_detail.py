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
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Footer, Label, Markdown, Static, TextArea

from cache import (
    ACTIVE_STATES,
    IssueRow,
    JsonObject,
    JsonValue,
    Resource,
)
from issuefields import (
    ASSIGNEE,
    COMMENT_BODY,
    LABELS,
    PRIORITY,
    PROJECT,
    STATUS,
    Field,
    Kind,
    status_choices,
)
from tracker_tui import key_order
from tracker_tui.data.cache_source import NO_VALUE
from tracker_tui.data.draft_keys import comment_key
from tracker_tui.data.neighbours import Step, step_from
from tracker_tui.data.source import IssueQuery
from tracker_tui.drafts import DraftKeeper
from tracker_tui.formatting import issue_reference
from tracker_tui.key_names import hint_keys
from tracker_tui.messages import EditIssueRequested
from tracker_tui.screens.binding_commands import BindingCommands
from tracker_tui.screens.choice_dialog import ChoiceDialog
from tracker_tui.screens.confirm import ConfirmDialog
from tracker_tui.screens.declared_keys import DeclaredKeyOrder
from tracker_tui.screens.issue_detail_text import (
    DetailData,
    comments,
    fields_text,
    no_comments,
    pending_text,
)
from tracker_tui.screens.issue_editor import edit_comment, edit_issue
from tracker_tui.screens.labels_dialog import LabelsDialog
from tracker_tui.services import Services
from tracker_tui.widgets.comment_box import CommentBox
from tracker_tui.widgets.comment_thread import CommentThread
from tracker_tui.widgets.markdown_text import line_break_parser
from tracker_tui.widgets.status_bar import StatusBar
from tracker_tui.workers import describe, read_in_thread, write_in_thread


class IssueDetailScreen(DeclaredKeyOrder[None]):
    """One issue: fields, description, comments, pending changes; edit and comment."""

    COMMANDS = {BindingCommands}
    HELP_GROUP: ClassVar[str] = "Issue screen"
    CSS_PATH = "issue_detail.tcss"

    BINDINGS: ClassVar[list[BindingType]] = [
        # The footer's order: at 80 columns it shows up to the assignee, at 120 the app's sync
        # panel too. The project, $EDITOR and next/previous are in the help and the palette.
        Binding("escape", "back", "Back", id="detail.back"),
        Binding("c", "comment", "Comment", id="detail.comment"),
        Binding("e", "edit", "Edit", id="detail.edit"),
        Binding("s", "pick_status", STATUS.label, id="detail.status"),
        Binding("p", "pick_priority", PRIORITY.label, id="detail.priority"),
        Binding("a", "pick_assignee", ASSIGNEE.label, id="detail.assignee"),
        Binding("l", "edit_labels", LABELS.label, id="detail.labels"),
        Binding("o", "pick_project", PROJECT.label, show=False, id="detail.project"),
        Binding("E", "edit_in_editor", "Edit in $EDITOR", show=False, id="detail.edit_in_editor"),
        Binding(
            "J,right_square_bracket", "step(1)", "Next issue", show=False, id="detail.next_issue"
        ),
        Binding(
            "K,left_square_bracket",
            "step(-1)",
            "Previous issue",
            show=False,
            id="detail.previous_issue",
        ),
    ]

    WRITE_ACTIONS: ClassVar[frozenset[str]] = frozenset(
        {
            "pick_status",
            "pick_priority",
            "pick_assignee",
            "pick_project",
            "edit_labels",
            "edit",
            "edit_in_editor",
            "comment",
        }
    )
    """Hidden with `--read-only`: from the footer, the help and the palette too."""

    @dataclass
    class Loaded(Message):
        """A fresh read of the issue arrived from the worker."""

        data: DetailData

    @dataclass
    class Stepped(Message):
        """Where next/previous leads in the list's order (tracker_tui.data.neighbours)."""

        step: Step

    def __init__(
        self,
        services: Services,
        issue_id: str,
        *,
        order: IssueQuery | None = None,
        then_step: int = 0,
    ) -> None:
        super().__init__()
        self._services = services
        self.issue_id = issue_id
        self.order = order or IssueQuery()
        """The list's query (filter, search and sort) that next and previous follow."""
        self._stepping = False
        self._queued = then_step
        """Next/previous keys pressed while the issue was being found, to take from here."""
        self.data: DetailData | None = None
        self.draft: DraftKeeper | None = None
        """The comment box's draft, once the issue is loaded (the box is disabled until then,
        so the draft is kept under the issue's resolved id)."""

    @property
    def shown_issue(self) -> IssueRow | None:
        """The issue on screen once read (`Y` copies it, `O` opens it in a browser)."""
        detail = self.data.detail if self.data is not None else None
        return detail.issue if detail is not None else None

    def compose(self) -> ComposeResult:
        """Title and fields on top, then the long parts scrolling, then the comment field."""
        yield Static("Loading…", id="detail-title")
        yield Static("", id="detail-fields")
        with VerticalScroll(id="detail-body"):
            yield Markdown("", id="detail-description", parser_factory=line_break_parser)
            yield Label("Comments", classes="detail-heading")
            yield CommentThread(id="detail-comments")
            yield Label("Local changes not yet on the server", classes="detail-heading")
            yield Static("", id="detail-pending")
        box = CommentBox(id="comment", disabled=True)
        box.display = not self._services.read_only
        yield box
        yield StatusBar(self._services.profile, read_only=self._services.read_only)
        yield Footer()

    def on_mount(self) -> None:
        """Read the issue now and whenever the cache changes; take next/previous keys pressed
        on the way here."""
        self.watch(self.app, "cache_revision", self._load, init=False)
        self.watch(self.app, "key_permissions", self._permissions_learned, init=False)
        key_order.loading(self)
        self._load()
        if queued := self._queued:
            self._queued = 0
            self.action_step(queued)

        self._services.sync.issue_opened(self.issue_id)

    def _permissions_learned(self, _permissions: object) -> None:
        """The key turned out not to write: the write keys and the comment box go (a draft
        typed in it stays kept)."""
        if not self._services.read_only:
            return
        box = self.query_one(CommentBox)
        if self.draft is not None:
            self.draft.flush()
        box.display = False
        box.disabled = True
        self.query_one(StatusBar).read_only = True
        self.refresh_bindings()

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
    async def show_issue(self, message: Loaded) -> None:
        """Draw the fresh read (an issue deleted meanwhile says so)."""
        self.data = message.data
        detail = message.data.detail
        if detail is None:
            self.query_one("#detail-title", Static).update("This issue is no longer in the cache.")
            key_order.loaded(self)
            return
        self.issue_id = detail.issue.id
        if self.draft is None:
            self._open_comment_box(message.data.draft)
        issue = detail.issue
        sync = "" if issue.sync_state == "synced" else f"  [{issue.sync_state.value}]"
        title = Text.assemble(
            (issue_reference(detail.number, issue.id), "bold"), "  ", issue.title, (sync, "italic")
        )
        self.query_one("#detail-title", Static).update(title)
        now = self._services.clock()
        self.query_one("#detail-fields", Static).update(fields_text(message.data, now))
        self.query_one("#detail-description", Markdown).update(
            detail.description or "*No description.*"
        )
        empty = no_comments(
            read_only=self._services.read_only, comment_key=hint_keys(self, "detail.comment")
        )
        await self.query_one(CommentThread).show(comments(message.data, now), empty)
        pending = pending_text(message.data, hint_keys(self, "app.sync_panel"))
        self.query_one("#detail-pending", Static).update(pending)
        key_order.loaded(self)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """With `--read-only` the write keys are not there at all (not merely refused)."""
        return not (self._services.read_only and action in self.WRITE_ACTIONS)

    def _open_comment_box(self, draft: JsonObject | None) -> None:
        """The issue is known: the comment box works (unless read-only), with the draft left
        in it last time."""
        if self._services.read_only:
            return
        box = self.query_one(CommentBox)
        body = draft.get("body") if draft else None
        self.draft = DraftKeeper(self, self._services.cache, comment_key(self.issue_id), kept=draft)
        if isinstance(body, str) and body:
            self._fill_box(body)
            self.notify("Your unsent comment is back in the comment box.", timeout=4)
        box.disabled = False

    def _fill_box(self, body: str) -> None:
        """Put `body` in the comment box, the cursor after it, without it counting as typing."""
        box = self.query_one(CommentBox)
        with box.prevent(TextArea.Changed):
            box.text = body
        box.move_cursor(box.document.end)

    @on(TextArea.Changed, "#comment")
    def draft_as_typed(self, event: TextArea.Changed) -> None:
        """Keep the comment as it is typed, so closing or losing the app does not lose it."""
        if self.draft is not None:
            text = event.text_area.text
            self.draft.changed({"body": text} if text.strip() else None)

    def keep_draft(self) -> None:
        """The app is exiting: keep the comment box as it stands."""
        if self.draft is not None:
            body = self.query_one(CommentBox).text
            self.draft.keep({"body": body} if body.strip() else None)

    def on_unmount(self) -> None:
        """Write the draft's last keystrokes now: the app may be closing."""
        if self.draft is not None:
            self.draft.flush()

    def action_back(self) -> None:
        """Back to where the issue was opened from (esc in the comment field leaves it); with
        a comment typed and not sent, ask first."""
        box = self.query_one(CommentBox)
        if self.focused is box:
            self.set_focus(None)
            return
        if not box.text.strip():
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

    def action_step(self, step: int) -> None:
        """Show the next (1) or previous (-1) issue of the list this one was opened from, in
        its order, with its filter and search. Keys pressed while one is being found add up,
        and are taken from the issue it leads to."""
        if self._stepping:
            self._queued += step
            return
        self._stepping = True
        source, order, issue_id = self._services.source, self.order, self.issue_id

        def find() -> Step:
            try:
                return step_from(source, order, issue_id, step)
            except Exception as error:
                return Step(issue_id, None, f"Could not read the list: {describe(error)}")

        read_in_thread(self, "find the next issue", find, self.Stepped)

    @on(Stepped)
    def show_stepped_issue(self, message: Stepped) -> None:
        """Replace this screen with the issue found, unless the user has moved on since (another
        issue or a dialog on top): a late answer never changes what is on screen."""
        self._stepping = False
        found = message.step
        queued, self._queued = self._queued, 0
        if found.from_id != self.issue_id or self.app.screen is not self:
            return
        if found.to_id is None:
            self.notify(found.why, severity="warning")
            return
        if self.query_one(CommentBox).text.strip():
            self.notify("Your unsent comment is kept with its issue.", timeout=4)
        following = IssueDetailScreen(
            self._services, found.to_id, order=self.order, then_step=queued
        )
        self.app.switch_screen(following)

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

    def action_edit_in_editor(self) -> None:
        """The whole issue as a template in `$EDITOR`; what changed is queued."""
        if self._writable_issue() is not None:
            self.run_worker(
                edit_issue(self, self._services, self.issue_id), group="editor", exclusive=True
            )

    def action_comment(self) -> None:
        if self._writable_issue() is not None:
            self.query_one(CommentBox).focus()

    @on(CommentBox.EditorRequested)
    def comment_in_editor(self, event: CommentBox.EditorRequested) -> None:
        """The comment in `$EDITOR`; what comes back goes in the box, to send with ctrl+s."""
        if self._writable_issue() is not None and self.draft is not None:
            self.draft.flush()
            self.run_worker(
                edit_comment(self, self._services.cache, self.issue_id, event.text, self._fill),
                group="editor",
                exclusive=True,
            )

    def _fill(self, body: str) -> None:
        """The editor's comment, in the box as if typed (so the draft keeps it)."""
        box = self.query_one(CommentBox)
        box.text = body
        box.move_cursor(box.document.end)
        box.focus()

    @on(CommentBox.Send)
    def send_comment(self, event: CommentBox.Send) -> None:
        """Queue the comment in the outbox; it shows at once, marked pending."""
        body = event.text.strip()
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
        with event.box.prevent(TextArea.Changed):
            event.box.text = ""
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
