"""The issue detail screen over a real cache: open, edit fields in place, comment."""

from __future__ import annotations

from textual.widgets import Markdown, OptionList, Static
from textual.widgets._footer import FooterKey
from tui_support import AppFactory, Notices, settle

from cache import Cache, EntryState, Resource
from issuefields import status_choices
from tracker_tui.screens.binding_commands import BindingCommands
from tracker_tui.screens.choice_dialog import ChoiceDialog
from tracker_tui.screens.help import help_groups
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.sync_link import OfflineLink
from tracker_tui.widgets.comment_box import CommentBox
from tracker_tui.widgets.comment_thread import CommentThread
from tracker_tui.widgets.label_picker import LabelPicker

SIZE = (120, 36)
TOP = "iss_000000"
"""The most recently updated demo issue: the list's first row."""


async def test_enter_opens_the_issue_and_escape_goes_back(
    app_factory: AppFactory, cache: Cache
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, IssueDetailScreen)
        assert screen.data is not None and screen.data.detail is not None
        detail = cache.reads.issue(TOP)
        assert detail is not None
        assert screen.data.detail.issue.title == detail.issue.title
        assert "Steps to reproduce" in screen.query_one(Markdown).source
        comments = screen.query_one(CommentThread).text
        for comment in detail.comments:
            assert comment.body in comments
        await pilot.press("escape")
        assert isinstance(app.screen, IssueListScreen)


async def test_opening_an_issue_asks_the_engine_for_what_the_cache_may_lack(
    app_factory: AppFactory, link: OfflineLink
) -> None:
    """During a backfill the engine fetches the opened issue's comments at once
    (docs/sync.md#head-first): the detail tells it which issue, once."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)
        assert link.opened == [TOP]


async def test_status_picker_offers_only_allowed_moves_and_queues_the_pick(
    app_factory: AppFactory, cache: Cache, link: OfflineLink
) -> None:
    before = cache.reads.issue(TOP)
    assert before is not None and before.issue.status is not None
    allowed = status_choices(before.issue.status)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog)
        options = app.screen.query_one(OptionList)
        offered = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert tuple(offered) == allowed
        await pilot.press("down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)
        assert app.screen.data is not None and app.screen.data.detail is not None
        assert app.screen.data.detail.issue.status == allowed[1]
    after = cache.reads.issue(TOP)
    assert after is not None
    assert after.issue.status == allowed[1]
    assert after.issue.sync_state == "pending"
    [entry] = cache.outbox.entries([EntryState.PENDING])
    assert entry.changes == {"status": allowed[1]}
    assert link.pokes == 1


async def test_priority_assignee_and_labels_are_edited_in_place(
    app_factory: AppFactory, cache: Cache
) -> None:
    before = cache.reads.issue(TOP)
    assert before is not None
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("home", "enter")  # "Unassigned"
        await settle(pilot)
        await pilot.press("l")
        await pilot.pause()
        picker = app.screen.query_one(LabelPicker)
        assert picker.labels == list(before.issue.labels)
        for label in before.issue.labels:  # typed alone, a ticked label is unticked
            await pilot.press(*label, "enter")
        await pilot.press(*"bug, triage", "enter", "ctrl+s")
        await settle(pilot)
    detail = cache.reads.issue(TOP)
    assert detail is not None
    assert detail.issue.assignee is None
    assert detail.issue.labels == ("bug", "triage")


async def test_a_comment_is_queued_and_shown_pending(app_factory: AppFactory, cache: Cache) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("c", *"Looks good to me", "ctrl+s")
        await settle(pilot)
        shown = app.screen.query_one(CommentThread).text
        assert "Looks good to me" in shown
        pending = str(app.screen.query_one("#detail-pending", Static).render())
        assert "new comment" in pending
    shown_detail = cache.reads.issue(TOP)
    assert shown_detail is not None
    bodies = {comment.body: comment for comment in shown_detail.comments}
    assert bodies["Looks good to me"].sync_state == "pending"
    [entry] = cache.outbox.entries()
    assert entry.resource is Resource.COMMENTS
    assert entry.changes["issue_id"] == TOP


async def test_read_only_shows_no_write_key_and_no_comment_box(
    app_factory: AppFactory, cache: Cache, notices: Notices
) -> None:
    """`--read-only`: the footer, the help and the palette list no key that writes, the
    comment box is not shown, and the keys do nothing."""
    app = app_factory(read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, IssueDetailScreen)
        shown = {key.description for key in screen.query(FooterKey)}
        assert "Back" in shown
        writes = {"Status", "Priority", "Assignee", "Project", "Labels", "Edit", "Comment"}
        writes.add("Undo bulk change")
        assert not shown & writes
        described = {
            entry.description
            for group in help_groups(screen.active_bindings, app.get_key_display)
            for entry in group.entries
        }
        assert "Back" in described and not described & writes
        offered = {str(hit.text) async for hit in BindingCommands(screen).discover()}
        assert "Back" in offered and not offered & writes
        assert not screen.query_one(CommentBox).display
        for key in ("s", "p", "a", "o", "l", "c", "e", "u"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is screen
        assert not isinstance(screen.focused, CommentBox)
    assert cache.outbox.entries() == []
