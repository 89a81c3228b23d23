"""`E`: an issue edited in `$EDITOR` as a template (`tracker_tui.data.issue_text`), its changed
fields queued once the editor is closed; from the issue list (the highlighted issue) and the
issue's screen. And ctrl+e in the comment box: the comment in the editor, back in the box.

The text being edited is kept as the draft `editor:issue:<id>` (the same one the command line's
`issues edit --editor` keeps), so an editor that failed, or a text kept with an error in it, is
what the next `E` on that issue opens.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual.screen import Screen

from cache import Cache, IssueDetail, JsonObject, Resource
from issuefields import COMMENT_BODY, problem
from tracker_tui.data import issue_text
from tracker_tui.data.draft_keys import comment_key, editor_key
from tracker_tui.data.people import Directory
from tracker_tui.editor import TemplateError, with_help, without_help
from tracker_tui.formatting import issue_reference
from tracker_tui.key_names import hint_keys
from tracker_tui.screens.editor_flow import EditorFlow
from tracker_tui.services import Services
from tracker_tui.workers import describe, write_in_thread


def again_hint(screen: Screen[Any]) -> str:
    """What opens the issue in the editor again, from the screen it was opened on (the list
    or the issue's: both have `E`, unless the keymap moved it)."""
    for binding_id in ("detail.edit_in_editor", "list.edit_in_editor"):
        try:
            return f"{hint_keys(screen, binding_id)} on the issue opens it again"
        except LookupError:
            continue
    return "the issue's screen opens it again"


@dataclass(frozen=True)
class EditorStart:
    """What the template is written from, read in a thread."""

    detail: IssueDetail | None
    directory: Directory
    draft: JsonObject | None


def read_start(services: Services, issue_id: str | None) -> EditorStart:
    cache = services.cache
    detail = cache.reads.issue(issue_id) if issue_id else None
    directory = Directory(cache.reads.users(), cache.reads.projects(), services.me)
    key = editor_key(detail.issue.id if detail else issue_id)
    return EditorStart(detail, directory, cache.drafts.get(key))


async def edit_issue(screen: Screen[Any], services: Services, issue_id: str) -> None:
    """Open the issue's template in the editor and queue what changed (in a worker of
    `screen`: it waits on the editor and may ask a question)."""
    try:
        start = await asyncio.to_thread(read_start, services, issue_id)
    except Exception as error:
        screen.notify(f"Could not read the issue: {describe(error)}", severity="error")
        return
    if start.detail is None:
        screen.notify("This issue is no longer in the cache.", severity="error")
        return
    detail, directory = start.detail, start.directory
    record = {**detail.record, "description": detail.description}
    baseline = issue_text.render(record, directory, new=False)
    text = baseline
    kept = start.draft.get("text") if start.draft else None
    reference = issue_reference(detail.issue.number, detail.issue.id)
    if isinstance(kept, str) and kept.strip():
        text = kept
        screen.notify(f"Your unsaved text for {reference} is back in the editor.", timeout=4)
    flow = EditorFlow[JsonObject](
        screen,
        services.cache,
        editor_key(detail.issue.id),
        lambda edited: issue_text.parse(edited, directory, record),
        help=issue_text.help_lines(record, directory, new=False),
        again_hint=again_hint(screen),
    )
    fields = await flow.run(text, baseline)
    if fields is None:
        return
    changes = issue_text.changes(fields, record)
    cache, target = services.cache, detail.issue.id
    if not changes:
        cache.drafts.discard(flow.key)
        screen.notify("Cancelled: no field changed.", title="Editor", timeout=4)
        return
    write_in_thread(
        screen,
        "queue the changes",
        flow.discard_after(lambda: cache.outbox.update(Resource.ISSUES, target, changes)),
        done=f"Changes to {reference} queued.",
    )


def comment_help(send_key: str) -> tuple[str, ...]:
    """The comment template's help; `send_key` sends the comment box (the keymap's key)."""
    return (
        f"Your comment, as Markdown. Once saved it goes back in the comment box: {send_key} "
        "sends it.",
        "An empty file, or one saved unchanged, cancels.",
    )


async def edit_comment(
    screen: Screen[Any], cache: Cache, issue_id: str, text: str, fill: Callable[[str], None]
) -> None:
    """The comment box's text in the editor; what comes back (or what was kept when the
    editor failed) goes back in the box with `fill`. The draft is the box's own
    (`comment:<issue id>`), so the box and the draft never disagree."""
    help_lines = comment_help(hint_keys(screen, "comment.send"))

    def body(edited: str) -> str:
        found = without_help(edited, help_lines)
        if (wrong := problem(COMMENT_BODY, found)) is not None:
            raise TemplateError(None, wrong)
        return found

    def draft(edited: str) -> JsonObject | None:
        found = without_help(edited, help_lines)
        return {"body": found} if found.strip() else None

    flow = EditorFlow[str](
        screen,
        cache,
        comment_key(issue_id),
        body,
        help=help_lines,
        draft_of=draft,
        again_hint="it is in the comment box",
        drop_on_cancel=False,
    )
    start = with_help(text, help_lines)
    found = await flow.run(start, start)
    if found is not None:
        fill(found)
    elif flow.kept is not None and (kept := without_help(flow.kept, help_lines)).strip():
        fill(kept)
