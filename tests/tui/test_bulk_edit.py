"""Bulk edits over a real cache: mark, pick, preview, queue as one batch, undo."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from no_wait import QUICK
from textual.widgets import Label, Static
from tui_support import ME, NOW, AppFactory, Notices, fixed_clock, settle

from accounts.credentials import KeySource, ResolvedProfile
from accounts.secret import Secret
from cache import Cache, EntryState, IssueFilter, IssueSort, Resource, SyncState
from issuefields import can_move, status_path
from server.app import create_app
from server.seed import seed_workspace
from sync.push import push_outbox
from sync.session import SyncSession, open_session
from tracker_tui.app import make_app
from tracker_tui.data.source import IssueQuery
from tracker_tui.messages import CacheChanged
from tracker_tui.screens.bulk_edit import BulkEditScreen
from tracker_tui.screens.bulk_preview import BulkPreviewScreen
from tracker_tui.screens.choice_dialog import ChoiceDialog
from tracker_tui.screens.confirm import ConfirmDialog
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.sync_link import OfflineLink
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
    top = cache.reads.window(IssueFilter(), IssueSort(), 0, 6)
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
        entries = [entry for entry in cache.outbox.entries() if entry.batch_id == batch]
        assert len(entries) == len(plan.updates)
        assert {entry.state for entry in entries} == {EntryState.PENDING}
        results = str(app.screen.query_one("#bulk-results", Static).render())
        assert f"{len(plan.updates)} pending" in results
        await pilot.press("escape")
        assert isinstance(app.screen, IssueListScreen)
        await pilot.press("u")
        await settle(pilot)
    assert cache.outbox.entries() == [], "an unsent bulk change is simply dropped"
    for row in top:
        detail = cache.reads.issue(row.id)
        assert detail is not None and detail.issue.status == row.status


async def test_all_in_query_with_labels_picked_and_typed(
    app_factory: AppFactory, cache: Cache
) -> None:
    """ "Mark all" in a filtered query: resolved against the cache, one batch for all of it."""
    mine_todo = IssueQuery(IssueFilter(status=frozenset({"todo"})), mine=True)
    wanted = IssueFilter(status=frozenset({"todo"}), mine=ME)
    total = cache.reads.count(wanted)
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
    assert cache.reads.count(tagged) == total
    assert cache.reads.count(IssueFilter(label=frozenset({"triage"}), mine=ME)) == total
    assert (
        cache.reads.count(
            IssueFilter(label=frozenset({"bug"}), mine=ME, status=frozenset({"todo"}))
        )
        == total
    )
    assert len({entry.batch_id for entry in cache.outbox.entries()}) == 1


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
        sent, refused = [e for e in cache.outbox.entries() if e.batch_id == screen.batch_id]
        cache.push.mark_sending(sent.id)
        cache.push.mark_done(sent.id)
        cache.push.mark_sending(refused.id)
        cache.push.mark_failed(refused.id, "forbidden: issues:write")
        app.post_message(CacheChanged())
        await settle(pilot)
        results = str(screen.query_one("#bulk-results", Static).render())
        assert "1 done, 1 failed" in results
        assert f"{refused.target_id}: failed — forbidden: issues:write" in results


# -- undo against the reference service ------------------------------------------------------

WORKFLOW_MIX = ("todo", "backlog", "done", "in_review", "todo", "backlog")
"""The statuses of the six issues marked: In progress is allowed from all but Done, and the
way back to Backlog and Todo passes through Todo."""


@asynccontextmanager
async def service_and_cache(tmp_path: Path) -> AsyncIterator[SyncSession]:
    """The reference service in process with eight issues, six set to `WORKFLOW_MIX` by
    allowed moves and then edited (so they head the list), and a cache holding them all."""
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 8, plan="enterprise")
    transport = httpx.ASGITransport(app=create_app(db, window_seconds=1.0))
    profile = ResolvedProfile(
        name=None,
        server="http://tracker.test/v1",
        workspace=None,
        key=Secret(key),
        key_source=KeySource.ENV,
    )
    with Cache.open(tmp_path / "cache.db", clock=NOW.timestamp) as cache:
        async with open_session(
            profile, cache=cache, transport=transport, window_seconds=1.0
        ) as session:
            issues = (await session.client.list_issues(per_page=100)).value.data
            for record, wanted in zip(issues, WORKFLOW_MIX, strict=False):
                for status in status_path(record.status or "", wanted) or ():
                    await session.client.update_issue(record.id, {"status": status})
                await session.client.update_issue(record.id, {"description": "top of the list"})
            await pull(session)
            yield session


async def pull(session: SyncSession) -> None:
    """Copy the server's issues into the cache, as the engine's pull would."""
    listing = (await session.client.list_issues(per_page=100)).value.data
    session.cache.server.apply_page(Resource.ISSUES, [issue.raw for issue in listing])


async def server_statuses(session: SyncSession) -> dict[str, str | None]:
    listing = (await session.client.list_issues(per_page=100)).value.data
    return {issue.id: issue.status for issue in listing}


async def bulk_in_progress(pilot: Any, rows: int) -> BulkPreviewScreen:
    """Mark the top `rows` rows, bulk-set In progress, queue it; the preview stays open."""
    await settle(pilot)
    await pilot.press(*["space", "j"] * rows, "b")
    await settle(pilot)
    await choose(pilot, "Set status")
    await choose(pilot, "In progress")
    screen = pilot.app.screen
    assert isinstance(screen, BulkPreviewScreen)
    await pilot.press("enter")
    await settle(pilot)
    return screen


async def test_undo_of_a_sent_status_change_goes_back_by_allowed_moves(
    tmp_path: Path, notices: Notices
) -> None:
    """Issue 14, defect 5: Todo/Backlog/Done/In review issues bulk-set to In progress and
    sent; `u`; sent again: the server holds every original status, Backlog reached through
    Todo, and no write failed."""
    async with service_and_cache(tmp_path) as session:
        cache = session.cache
        top = cache.reads.window(IssueFilter(), IssueSort(), 0, 6)
        before = await server_statuses(session)
        assert sorted(before[row.id] or "" for row in top) == sorted(WORKFLOW_MIX)
        app = make_app(cache=cache, clock=fixed_clock, sync=OfflineLink(), me=None)
        async with app.run_test(size=SIZE) as pilot:
            preview = await bulk_in_progress(pilot, 6)
            assert len(preview.plan.blocked) == 1, "Done cannot move to In progress"
            report = await push_outbox(session, backoff=QUICK)
            assert (report.done, report.failed) == (5, 0)
            moved = await server_statuses(session)
            assert [moved[row.id] for row in top].count("in_progress") == 5
            await pilot.press("escape", "u")
            await settle(pilot)
            assert not isinstance(app.screen, ConfirmDialog), "everything can be restored"
            report = await push_outbox(session, backoff=QUICK)
            assert report.failed == 0 and report.conflicts == 0
            await pull(session)
            app.post_message(CacheChanged())
            await settle(pilot)
        assert await server_statuses(session) == before
        assert (
            cache.outbox.entries((EntryState.FAILED, EntryState.CONFLICT, EntryState.PENDING)) == []
        )
        assert any("5 issues restored (2 via Todo)" in text for text in notices.texts())
        for row in top:
            shown = cache.reads.issue(row.id)
            assert shown is not None and shown.issue.status == before[row.id]
            assert shown.issue.sync_state is SyncState.SYNCED


async def test_undo_names_what_it_cannot_restore_before_doing_anything(
    tmp_path: Path, notices: Notices
) -> None:
    """A colleague moved one of the issues on after the bulk change landed: `u` says so in a
    question before anything is queued; "Undo the rest" restores the others only."""
    async with service_and_cache(tmp_path) as session:
        cache = session.cache
        top = cache.reads.window(IssueFilter(), IssueSort(), 0, 6)
        before = await server_statuses(session)
        app = make_app(cache=cache, clock=fixed_clock, sync=OfflineLink(), me=None)
        async with app.run_test(size=SIZE) as pilot:
            await bulk_in_progress(pilot, 6)
            await push_outbox(session, backoff=QUICK)
            moved = [row.id for row in top if before[row.id] != "done"]
            theirs = moved[0]
            await session.client.update_issue(theirs, {"status": "in_review"})
            await pull(session)
            await pilot.press("escape", "u")
            await settle(pilot)
            dialog = app.screen
            assert isinstance(dialog, ConfirmDialog)
            question = str(dialog.query_one(Label).render())
            number = cache.server.server_record(Resource.ISSUES, theirs) or {}
            assert f"#{number['number']} status: changed since (now In review)" in question
            assert cache.outbox.entries((EntryState.PENDING,)) == [], "nothing queued while asking"
            await pilot.press("y")
            await settle(pilot)
            await push_outbox(session, backoff=QUICK)
        after = await server_statuses(session)
        assert after[theirs] == "in_review", "the colleague's move is left alone"
        assert {key: after[key] for key in moved[1:]} == {key: before[key] for key in moved[1:]}
        assert cache.outbox.entries((EntryState.FAILED, EntryState.CONFLICT)) == []
        assert any("Left as they are" in text for text in notices.texts())
