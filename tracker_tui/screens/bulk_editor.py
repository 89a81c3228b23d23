"""`B`: the marked issues as a table in `$EDITOR` (`tracker_tui.data.bulk_table`), the cells
changed becoming the bulk preview (workflow checked, refused issues named), queued there as one
batch that `u` undoes.

With nothing marked it offers the whole list as it is filtered, after asking; at most `LIMIT`
issues go in one table (the question says so when the list is longer). The table being edited
is kept as the draft `editor:bulk` until its preview queues it, so an editor that failed, a
table kept with an error in it, or a preview closed without queuing is what the next `B` opens.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from textual.screen import Screen

from cache import IssueRow, JsonObject
from tracker_tui.data import bulk_table
from tracker_tui.data.bulk import plan_cells
from tracker_tui.data.draft_keys import BULK_EDITOR_KEY
from tracker_tui.data.marks import MarkedSelection, Marks
from tracker_tui.data.people import Directory
from tracker_tui.editor import editor_name
from tracker_tui.formatting import count_label, issue_reference
from tracker_tui.key_names import hint_keys
from tracker_tui.screens.bulk_preview import BulkPreviewScreen
from tracker_tui.screens.confirm import ConfirmDialog
from tracker_tui.screens.editor_flow import EditorFlow
from tracker_tui.services import Services
from tracker_tui.workers import describe

LIMIT = 500
"""Issues in one table at most: a table longer than a few screens is not read any more."""


@dataclass(frozen=True)
class TableStart:
    rows: list[IssueRow]
    """The issues of the table, and those a kept draft names."""
    opened: list[IssueRow]
    """The issues asked for (the table written when there is no draft)."""
    directory: Directory
    draft: str | None


def read_start(services: Services, selection: MarkedSelection) -> TableStart:
    cache, source = services.cache, services.source
    if selection.marks.all_in_query and not selection.marks.ids:
        opened = source.window(selection.query, 0, LIMIT)
    else:
        opened = source.marked_rows(selection)[:LIMIT]
    kept = cache.drafts.get(BULK_EDITOR_KEY)
    draft = kept.get("text") if kept else None
    rows = {row.id: row for row in opened}
    for number in bulk_table.numbers_in(draft) if isinstance(draft, str) else []:
        found = cache.reads.resolve_issue(f"#{number}")
        detail = cache.reads.issue(found) if found else None
        if detail is not None:
            rows.setdefault(detail.issue.id, detail.issue)
    directory = Directory(cache.reads.users(), cache.reads.projects(), services.me)
    return TableStart(
        list(rows.values()), opened, directory, draft if isinstance(draft, str) else None
    )


async def edit_in_bulk(screen: Screen[Any], services: Services, selection: MarkedSelection) -> None:
    """Ask for the issues when none is marked, open the table, preview what changed (in a
    worker of `screen`: it waits on dialogs and the editor)."""
    app = screen.app
    count = selection.count
    if count == 0:
        try:
            count = await asyncio.to_thread(services.source.count, selection.query)
        except Exception as error:
            screen.notify(f"Could not count the issues: {describe(error)}", severity="error")
            return
        if count == 0:
            screen.notify("No issue in this list to edit.", severity="warning")
            return
        selection = MarkedSelection(selection.query, Marks.everything(), count)
        which = f"all {count_label(count, 'issue')}" if count <= LIMIT else f"the first {LIMIT:,}"
        question = f"Nothing is marked: open {which} of this list in {editor_name()}?"
        if count > LIMIT:
            question += f"\n(The list has {count:,}; mark some, or filter it, for others.)"
        dialog = ConfirmDialog(question, yes="Open", no="Cancel")
        if not await app.push_screen(dialog, wait_for_dismiss=True):
            return
    elif count > LIMIT:
        question = f"{count:,} issues are marked: open the first {LIMIT:,} in {editor_name()}?"
        if not await app.push_screen(ConfirmDialog(question), wait_for_dismiss=True):
            return
    try:
        start = await asyncio.to_thread(read_start, services, selection)
    except Exception as error:
        screen.notify(f"Could not read the issues: {describe(error)}", severity="error")
        return
    by_number = {row.number: row for row in start.rows if row.number is not None}
    help_lines = bulk_table.help_lines(hint_keys(screen, "app.undo_bulk"))
    again = f"{hint_keys(screen, 'list.bulk_in_editor')} opens it again"
    baseline = bulk_table.render(start.opened, start.directory, help_lines)
    text = baseline
    if start.draft is not None:
        text = start.draft
        screen.notify("Your unsaved bulk table is back in the editor.", timeout=4)
    flow = EditorFlow[dict[str, JsonObject]](
        screen,
        services.cache,
        BULK_EDITOR_KEY,
        lambda edited: bulk_table.parse(edited, by_number, start.directory, help_lines),
        help=help_lines,
        suffix=".txt",
        again_hint=again,
    )
    edits = await flow.run(text, baseline)
    if edits is None:
        return
    cache = services.cache
    if not edits:
        await asyncio.to_thread(cache.drafts.discard, BULK_EDITOR_KEY)
        screen.notify("Cancelled: no cell changed.", title="Editor", timeout=4)
        return
    refs = {row.id: issue_reference(row.number, row.id) for row in start.rows}
    plan = plan_cells(start.rows, edits, refs)
    preview = BulkPreviewScreen(
        services, plan, start.directory.names, then=lambda: cache.drafts.discard(BULK_EDITOR_KEY)
    )

    def closed(_result: None) -> None:
        """Not queued: the table stays a draft for the next `B`."""
        if not preview.queued:
            app.notify(f"Not queued: the table is kept as a draft ({again}).", timeout=6)

    await app.push_screen(preview, closed)
