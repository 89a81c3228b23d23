"""The create / edit form over a real cache: validation as typed, saving, discarding."""

from __future__ import annotations

from textual import events
from textual.widgets import Input, Label, Static
from tui_support import AppFactory, Notices, settle

from cache import Cache, EntryState, IssueFilter, Operation
from issuefields import LABELS
from tracker_tui.screens.confirm import ConfirmDialog
from tracker_tui.screens.issue_form import IssueFormScreen
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.sync_link import OfflineLink
from tracker_tui.widgets.label_picker import LabelInput, LabelList, LabelPicker, Row

SIZE = (120, 40)


def problem(app: object, widget_id: str) -> str:
    screen = app.screen  # type: ignore[attr-defined]
    return str(screen.query_one(f"#{widget_id}", Label).render())


async def test_create_shows_a_validation_error_then_saves_once_fixed(
    app_factory: AppFactory, cache: Cache, link: OfflineLink, notices: Notices
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, IssueFormScreen)
        assert problem(app, "title-problem") == "A title is required."
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, IssueFormScreen)
        assert "Fix the fields marked in red first." in notices.texts()
        title = app.screen.query_one("#title", Input)
        title.value = "x" * 256
        await pilot.pause()
        assert problem(app, "title-problem") == "At most 255 characters (256 now)."
        await pilot.press("ctrl+u", *"Crash on save")
        assert problem(app, "title-problem") == ""
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
    [entry] = cache.outbox([EntryState.PENDING])
    assert entry.operation is Operation.CREATE
    assert entry.changes["title"] == "Crash on save"
    assert entry.changes["status"] == "todo"
    assert cache.count(IssueFilter(text="Crash on save")) == 1
    assert link.pokes == 1


async def test_labels_are_checked_as_typed(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        field = app.screen.query_one("#labels", LabelPicker).query_one(LabelInput)
        field.value = ",".join(f"l{n}" for n in range(20))
        field.focus()
        await pilot.press("enter")
        assert problem(app, "labels-problem") == ""
        await pilot.press("x", "enter")
        assert problem(app, "labels-problem") == "At most 20 labels (21 now)."


async def test_labels_are_picked_from_those_in_use_or_typed_new(
    app_factory: AppFactory, cache: Cache
) -> None:
    """Typing narrows the known labels; space ticks one; enter adds a new one (nothing else
    matches it); both are saved."""
    known = [label for label in cache.distinct_values(LABELS) if label]
    assert "security" in known and "perf" in known
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        app.screen.query_one("#title", Input).value = "Picked labels"
        picker = app.screen.query_one("#labels", LabelPicker)
        picker.focus()
        await pilot.press(*"secu")
        shown = picker.query_one(LabelList)
        assert picker.rows == [Row("security"), Row("secu", new=True)]
        await pilot.press("down", "space")
        assert picker.labels == ["security"]
        picker.focus()
        await pilot.press("ctrl+u", *"needs-repro", "enter")
        assert picker.labels == ["security", "needs-repro"]
        assert shown.option_count == len(known) + 1
        assert "Ticked: security, needs-repro" in str(
            picker.query_one(".label-picker--chosen", Static).render()
        )
        await pilot.press(*"security", "enter")
        assert picker.labels == ["needs-repro"]
        await pilot.press(*"perf", "enter", "ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
    [entry] = cache.outbox([EntryState.PENDING])
    assert entry.changes["labels"] == ["needs-repro", "perf"]


async def test_edit_queues_only_the_changed_fields(app_factory: AppFactory, cache: Cache) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, IssueFormScreen)
        await pilot.press("end", *" (again)", "ctrl+s")
        await settle(pilot)
    [entry] = cache.outbox()
    assert entry.operation is Operation.UPDATE
    assert list(entry.changes) == ["title"]
    assert str(entry.changes["title"]).endswith(" (again)")


async def test_escape_asks_before_discarding_a_dirty_form(
    app_factory: AppFactory, cache: Cache
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("escape")
        assert isinstance(app.screen, IssueListScreen), "a clean form closes at once"
        await pilot.press("c")
        await settle(pilot)
        await pilot.press(*"Half a thought", "escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, IssueFormScreen)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, IssueListScreen)
    assert cache.outbox() == []


async def test_ctrl_s_in_a_burst_saves_every_key_typed_before_it(
    app_factory: AppFactory, cache: Cache
) -> None:
    """The title's keys and ctrl+s arrive at once: ctrl+s (a priority binding) runs on the
    app's loop while the letters still wait in the field's queue."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        for key in [*"Burst title", "ctrl+s"]:
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
    [entry] = cache.outbox([EntryState.PENDING])
    assert entry.changes["title"] == "Burst title"
