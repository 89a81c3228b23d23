"""What the issue's screen shows, from one read (`DetailData`): the fields line, the comments
as the thread draws them, the local changes not yet on the server. Pure functions of the read
and the time, so the screen only places them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from rich.text import Text

from cache import IssueDetail, IssueRow, JsonObject, OutboxEntry, ProjectRow
from issuefields import LISTED, Field, Kind
from tracker_tui.data.cache_source import parse_time
from tracker_tui.data.changes import entry_summary, value_text
from tracker_tui.formatting import relative_time
from tracker_tui.widgets.comment_thread import ShownComment


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


def names_of(data: DetailData) -> dict[str, str]:
    return data.users | {project.id: project.key or project.name for project in data.projects}


def fields_text(data: DetailData, now: datetime) -> Text:
    """Every field but those the heading and the body show, four to a line."""
    assert data.detail is not None
    issue = data.detail.issue
    names = names_of(data)
    pairs = [(f.label, _value(f, issue, names, now)) for f in LISTED]
    text = Text()
    for index, (name, value) in enumerate(pairs):
        text.append(f"{name} ", style="dim")
        text.append(value, style="bold")
        text.append("\n" if index % 4 == 3 else "    ")
    return text


def _value(field: Field, issue: IssueRow, names: dict[str, str], now: datetime) -> str:
    if field.kind is Kind.LABELS:
        return ", ".join(issue.labels) or "—"
    value = issue.cells.get(field.member)
    if field.kind is Kind.TIME:
        return relative_time(parse_time(None if value is None else str(value)), now)
    return value_text(field.member, value, names)


def comments(data: DetailData, now: datetime) -> list[ShownComment]:
    """Each comment's author, when (and whether it is on the server yet), and body."""
    assert data.detail is not None
    shown: list[ShownComment] = []
    for comment in data.detail.comments:
        author = data.users.get(comment.author or "", comment.author or "you")
        when = relative_time(parse_time(comment.created_at), now)
        pending = "" if comment.sync_state == "synced" else f" · {comment.sync_state.value}"
        shown.append((author, when + pending, comment.body.rstrip()))
    return shown


def no_comments(*, read_only: bool, comment_key: str) -> str:
    """The thread's empty state; `comment_key` names the key that opens the comment box."""
    hint = "" if read_only else f" ({comment_key} to write one)"
    return f"No comments yet{hint}."


def pending_text(data: DetailData, sync_panel_key: str) -> Text:
    """The issue's and its comments' writes not settled yet, and its conflicts (resolved in
    the sync panel, opened by `sync_panel_key`)."""
    assert data.detail is not None
    detail = data.detail
    entries = (*detail.entries, *data.comment_entries)
    if not entries and not detail.conflicts:
        return Text("None: this is the server's copy.", style="dim")
    names = names_of(data)
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
        text.append(
            f"{conflict.field}: mine {mine}, theirs {theirs} ({sync_panel_key}: sync panel)\n"
        )
    return text
