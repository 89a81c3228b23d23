"""The choice dialog (status, priority, assignee, project): typing narrows the choices (issue
14, defect 20: the assignee picker could not be filtered), the list's keys still work from the
field, and keys arriving in one burst pick what was typed."""

from __future__ import annotations

from test_label_picker import burst_keys
from textual.widgets import OptionList
from tui_support import AppFactory, box_text, dialog_box, screen_lines, settle

from cache import Cache
from tracker_tui.data.cache_source import NO_VALUE
from tracker_tui.screens.choice_dialog import ChoiceDialog
from tracker_tui.screens.issue_detail import IssueDetailScreen

SIZE = (120, 36)
TOP = "iss_000000"
PEOPLE = ["usr_ada", "usr_alan", "usr_barbara", "usr_edsger", "usr_grace"]
"""The demo's users, as the assignee picker sorts them (by name)."""


async def open_assignee(pilot: object, app: object) -> ChoiceDialog:
    await settle(pilot)
    await pilot.press("enter")  # type: ignore[attr-defined]
    await settle(pilot)
    await pilot.press("a")  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]
    dialog = app.screen  # type: ignore[attr-defined]
    assert isinstance(dialog, ChoiceDialog)
    return dialog


async def test_typing_narrows_the_assignees_and_enter_picks_the_first(
    app_factory: AppFactory, cache: Cache
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await open_assignee(pilot, app)
        assert dialog.shown == [NO_VALUE, *PEOPLE]
        await pilot.press("g", "r")
        assert dialog.shown == ["usr_grace"]
        await pilot.press("backspace", "backspace", *"LI")  # letter case aside
        assert dialog.shown == ["usr_barbara"]
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)
    detail = cache.reads.issue(TOP)
    assert detail is not None and detail.issue.assignee == "usr_barbara"


async def test_the_list_keys_work_from_the_field_and_no_match_picks_nothing(
    app_factory: AppFactory, cache: Cache
) -> None:
    before = cache.reads.issue(TOP)
    assert before is not None
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await open_assignee(pilot, app)
        choices = dialog.query_one(OptionList)
        await pilot.press("home")
        assert choices.highlighted == 0
        await pilot.press("down", "down", "up")
        assert choices.highlighted == 1
        await pilot.press("end")
        assert choices.highlighted == len(PEOPLE)
        await pilot.press(*"zz", "enter")
        assert dialog.shown == []
        assert app.screen is dialog
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)
    after = cache.reads.issue(TOP)
    assert after is not None and after.issue.assignee == before.issue.assignee
    assert cache.outbox.entries() == []


async def test_a_burst_of_keys_picks_what_was_typed(app_factory: AppFactory, cache: Cache) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await open_assignee(pilot, app)
        burst_keys(app, "t", "u", "r", "enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)
    detail = cache.reads.issue(TOP)
    assert detail is not None and detail.issue.assignee == "usr_alan"


async def test_the_dialog_fits_80_by_24(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_assignee(pilot, app)
        text = box_text(dialog_box(screen_lines(app)))
        assert "Assignee" in text and "Unassigned" in text and "Grace Hopper" in text
        assert "enter picks · esc cancels" in text
