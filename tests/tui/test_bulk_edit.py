"""Bulk edits over a real cache: mark, pick, preview, queue as one batch, undo."""

from __future__ import annotations

from textual.widgets import Static
from tui_support import ME, AppFactory, Notices, settle

from cache import Cache, EntryState, IssueFilter, IssueSort
from tracker_tui.data.source import IssueQuery
from tracker_tui.data.workflow import can_move
from tracker_tui.messages import CacheChanged
from tracker_tui.screens.bulk_edit import BulkEditScreen
from tracker_tui.screens.bulk_preview import BulkPreviewScreen
from tracker_tui.screens.choice_dialog import ChoiceDialog
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.widgets.label_picker import LabelPicker

SIZE = (120, 36)


async def choose(pilot: object, label: str) -> None:
    """Pick the option whose text starts with `label` in the dialog in front."""
    from textual.widgets import OptionList

    app = pilot.app  # type: ignore[attr-defined]
    options = app.screen.query_one(OptionList)
    for index in range(options.option_count):
        if str(options.get_option_at_index(index).prompt).startswith(label):
            options.highlighted = index
            break
    else:
        raise AssertionError(f"no option {label!r}")
    await pilot.press("enter")  # type: ignore[attr-defined]
    await settle(pilot)


async def test_marked_rows_get_a_preview_then_one_batch_then_undo(
    app_factory: AppFactory, cache: Cache
) -> None:
    top = cache.window(IssueFilter(), IssueSort(), 0, 6)
    movable = [row for row in top if can_move(row.status or "", "in_progress")]
    already = [row for row in top if row.status == "in_progress"]
    blocked = [row for row in top if not can_move(row.status or "", "in_progress")]
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(*["space", "j"] * 6)
        await pilot.press("b")
        await settle(pilot)
        assert isinstance(app.screen, BulkEditScreen)
        await choose(pilot, "Set status")
        assert isinstance(app.screen, ChoiceDialog)
        await choose(pilot, "In progress")
        assert isinstance(app.screen, BulkPreviewScreen)
        plan = app.screen.plan
        assert {issue_id for issue_id, _ in plan.updates} == {
            row.id for row in movable if row not in already
        }
        assert plan.unchanged == len(already)
        assert len(plan.blocked) == len(blocked)
        summary = str(app.screen.query_one("#bulk-summary", Static).render())
        assert "→ In progress" in summary
        if blocked:
            assert "cannot move" in summary and "not allowed" in summary
        await pilot.press("enter")
        await settle(pilot)
        batch = app.screen.batch_id
        assert batch is not None and app.last_batch == batch
        entries = [entry for entry in cache.outbox() if entry.batch_id == batch]
        assert len(entries) == len(plan.updates)
        assert {entry.state for entry in entries} == {EntryState.PENDING}
        results = str(app.screen.query_one("#bulk-results", Static).render())
        assert f"{len(plan.updates)} pending" in results
        await pilot.press("escape")
        assert isinstance(app.screen, IssueListScreen)
        await pilot.press("u")
        await settle(pilot)
    assert cache.outbox() == [], "an unsent bulk change is simply dropped"
    for row in top:
        detail = cache.issue(row.id)
        assert detail is not None and detail.issue.status == row.status


async def test_all_in_query_with_labels_picked_and_typed(
    app_factory: AppFactory, cache: Cache
) -> None:
    """ "Mark all" in a filtered query: resolved against the cache, one batch for all of it."""
    mine_todo = IssueQuery(statuses=frozenset({"todo"}), mine=True)
    wanted = IssueFilter(status=frozenset({"todo"}), mine=ME)
    total = cache.count(wanted)
    assert total > 5
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
        app.screen.issue_query = mine_todo
        await settle(pilot)
        await pilot.press("asterisk", "b")
        await settle(pilot)
        await choose(pilot, "Add labels")
        picker = app.screen.query_one(LabelPicker)
        await pilot.press(*"triage", "enter", "down", "space")
        assert picker.labels == ["triage", "bug"]
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, BulkPreviewScreen)
        assert len(app.screen.plan.updates) == total
        assert app.screen.plan.summary({})[0] == f"{total} issues: add labels triage, bug"
        await pilot.press("enter")
        await settle(pilot)
    tagged = IssueFilter(label=frozenset({"triage"}))
    assert cache.count(tagged) == total
    assert cache.count(IssueFilter(label=frozenset({"triage"}), mine=ME)) == total
    assert (
        cache.count(IssueFilter(label=frozenset({"bug"}), mine=ME, status=frozenset({"todo"})))
        == total
    )
    assert len({entry.batch_id for entry in cache.outbox()}) == 1


async def test_undo_with_nothing_to_undo_says_so(app_factory: AppFactory, notices: Notices) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("u")
        await pilot.pause()
    assert "No bulk change to undo." in notices.texts()


async def test_results_follow_the_batch_as_it_is_sent(
    app_factory: AppFactory, cache: Cache
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("space", "j", "space", "b")
        await settle(pilot)
        await choose(pilot, "Set priority")
        await choose(pilot, "Low")
        screen = app.screen
        assert isinstance(screen, BulkPreviewScreen)
        assert len(screen.plan.updates) == 2, "the two newest demo issues are not low"
        await pilot.press("enter")
        await settle(pilot)
        sent, refused = [e for e in cache.outbox() if e.batch_id == screen.batch_id]
        cache.mark_sending(sent.id)
        cache.mark_done(sent.id)
        cache.mark_sending(refused.id)
        cache.mark_failed(refused.id, "forbidden: issues:write")
        app.post_message(CacheChanged())
        await settle(pilot)
        results = str(screen.query_one("#bulk-results", Static).render())
        assert "1 done, 1 failed" in results
        assert f"{refused.target_id}: failed — forbidden: issues:write" in results
