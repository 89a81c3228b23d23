"""`B`: bulk edit in `$EDITOR` (issue 17, Writing). The marked issues open as a table; the cells
changed become the bulk preview (workflow checked, refused issues named) and one batch that `u`
undoes. Run with a stub editor script (`tests/harness/stub_editor.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from stub_editor import StubEditor
from textual.pilot import Pilot
from textual.widgets import Static
from tui_support import AppFactory, Notices, settle

from cache import Cache, EntryState, IssueRow
from issuefields import STATUS, can_move
from tracker_tui.data.cache_source import CacheIssueSource
from tracker_tui.data.draft_keys import BULK_EDITOR_KEY
from tracker_tui.data.source import IssueQuery
from tracker_tui.screens.bulk_preview import BulkPreviewScreen
from tracker_tui.screens.confirm import ConfirmDialog

SIZE = (120, 36)


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StubEditor:
    return StubEditor(tmp_path / "editor").install(monkeypatch)


def first_rows(cache: Cache, count: int) -> list[IssueRow]:
    """The list's first rows, as the app shows them (newest update first)."""
    return CacheIssueSource(cache).window(IssueQuery(), 0, count)


async def until(pilot: Pilot[object], kind: type) -> None:
    """Wait for a screen the editor's worker waits on (`settle` would wait for the worker)."""
    for _ in range(200):
        if isinstance(pilot.app.screen, kind):
            return
        await pilot.pause(0.05)
    raise AssertionError(f"no {kind.__name__}; on {pilot.app.screen!r}")


def cell(number: int, index: int) -> str:
    """A pattern for the table's row `number` up to its cell `index` (0 is the status)."""
    return rf"^({number}\s*\|" + r"[^|]*\|" * index + r"\s*)"


async def test_the_cells_changed_become_the_preview_and_one_undoable_batch(
    app_factory: AppFactory, cache: Cache, editor: StubEditor, notices: Notices
) -> None:
    first, second, third = first_rows(cache, 3)
    assert first.number and second.number and third.number
    priority = "urgent" if first.priority != "urgent" else "low"
    stuck = next(s for s in STATUS.values if not can_move(second.status or "", s))
    editor.steps(
        [
            {
                "sub": [
                    [cell(first.number, 1) + r"\w+", rf"\g<1>{priority}"],
                    [cell(second.number, 0) + r"\w+", rf"\g<1>{stuck}"],
                    [cell(third.number, 4) + r".*$", r"\g<1>Renamed in the table"],
                ]
            }
        ]
    )
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("space", "j", "space", "j", "space", "B")
        await until(pilot, BulkPreviewScreen)
        [given] = editor.seen
        heading = "# number | status | priority | assignee | labels | title"
        assert given.splitlines()[0].split() == heading.split()
        summary = str(app.screen.query_one("#bulk-summary", Static).render())
        lines = summary.splitlines()
        assert lines[0] == "2 issues change"
        assert any(line.startswith("1 issue: priority") for line in lines)
        assert "1 issue: title " in summary and "→ Renamed in the table" in summary
        refused = f"not changed: #{second.number}: {STATUS.label_of(second.status or '')} → "
        assert any(line.startswith(refused) for line in lines)
        await pilot.press("enter")
        await settle(pilot)
        batch = app.last_batch
        assert batch is not None
        entries = cache.outbox.entries([EntryState.PENDING])
        assert {e.target_id: dict(e.changes) for e in entries} == {
            first.id: {"priority": priority},
            third.id: {"title": "Renamed in the table"},
        }
        assert {e.batch_id for e in entries} == {batch}
        assert cache.drafts.get(BULK_EDITOR_KEY) is None
        await pilot.press("escape", "u")
        await settle(pilot)
    assert cache.outbox.entries([EntryState.PENDING]) == []


async def test_with_nothing_marked_it_asks_for_the_whole_list(
    app_factory: AppFactory, cache: Cache, editor: StubEditor, notices: Notices
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("B")
        await until(pilot, ConfirmDialog)
        assert "Nothing is marked: open all 500 issues of this list" in str(
            app.screen.query_one("Label", Static).render()
        )
        await pilot.press("y")
        await settle(pilot)
    [given] = editor.seen
    assert sum(1 for line in given.splitlines() if line[:1].isdigit()) == 500
    assert "Cancelled: nothing was changed." in notices.texts()
    assert cache.outbox.entries() == []


async def test_a_bad_cell_names_its_line_and_the_table_is_kept_for_the_next_B(
    app_factory: AppFactory, cache: Cache, editor: StubEditor, notices: Notices
) -> None:
    [first] = first_rows(cache, 1)
    assert first.number is not None
    editor.steps([{"sub": [[cell(first.number, 1) + r"\w+", r"\g<1>hihg"]]}, {}])
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("space", "B")
        await until(pilot, ConfirmDialog)
        question = str(app.screen.query_one("Label", Static).render())
        assert "Not saved: line 2: priority: 'hihg' is not one of: urgent" in question
        await pilot.press("n")  # keep as draft
        await settle(pilot)
        assert "Kept as a draft (B opens it again)." in notices.texts()
        kept = cache.drafts.get(BULK_EDITOR_KEY)
        assert kept is not None and "hihg" in str(kept["text"])
        await pilot.press("B")
        await until(pilot, ConfirmDialog)
    assert "hihg" in editor.seen[1]
    assert cache.outbox.entries() == []
