"""Keys arriving in one burst are handled in the order they were typed: a key a field does not
take itself (tab, backspace, enter, ctrl+s) no longer lands after the letters that followed it
(Textualize/textual#6605; issue 14's bursts)."""

from __future__ import annotations

import asyncio
import time
from typing import ClassVar

import pytest
from test_label_picker import burst_keys
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input, Static
from tui_support import AppFactory, settle

from cache import Cache, EntryState
from tracker_tui import key_order
from tracker_tui.key_order import KEY_WAIT, KeyOrderApp
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.screens.issue_form import IssueFormScreen
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.widgets.comment_box import CommentBox
from tracker_tui.widgets.issue_list import IssueList

SIZE = (120, 36)


@pytest.fixture
def patient(monkeypatch: pytest.MonkeyPatch) -> None:
    """The order of keys, not the wait for a stuck one: on a loaded machine (the suite on four
    workers) one key of a burst took longer than `KEY_WAIT`, and the next went ahead of it."""
    monkeypatch.setattr(key_order, "KEY_WAIT", 30.0)


@pytest.mark.usefixtures("patient")
async def test_a_burst_through_the_form_fills_each_field_and_saves_it_all(
    app_factory: AppFactory, cache: Cache
) -> None:
    """Title, a typo fixed with backspace, tab to the description, ctrl+s: all at once."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, IssueFormScreen)
        burst_keys(app, *"Exporx", "backspace", *"t fails", "tab", *"Steps", "ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
    [entry] = cache.outbox.entries([EntryState.PENDING])
    assert entry.changes["title"] == "Export fails"
    assert entry.changes["description"] == "Steps"


@pytest.mark.usefixtures("patient")
async def test_left_and_backspace_in_a_burst_edit_where_they_were_typed(
    app_factory: AppFactory,
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        burst_keys(app, *"ac", "left", "b", "end", "backspace", "backspace", *"xy")
        await settle(pilot)
        assert app.screen.query_one("#title", Input).value == "axy"


@pytest.mark.usefixtures("patient")
async def test_a_new_issue_and_its_title_typed_in_one_burst_land_in_the_form(
    app_factory: AppFactory, cache: Cache
) -> None:
    """`c` only asks the app for the form, and the form reads its fields in a worker: the
    title's letters went to the list meanwhile (`E`, `x`, `o` are bindings there)."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst_keys(app, "c", *"Export fails", "ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
    [entry] = cache.outbox.entries([EntryState.PENDING])
    assert entry.changes["title"] == "Export fails"


@pytest.mark.usefixtures("patient")
async def test_an_issue_opened_and_commented_in_one_burst_gets_the_comment(
    app_factory: AppFactory,
) -> None:
    """`enter` then `c` and the text: the comment goes to the issue opened, not `c` to the
    list (a new-issue form) and the text to its bindings."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        opened = app.screen.query_one(IssueList).highlighted_row
        assert opened is not None
        burst_keys(app, "enter", "c", *"hello there")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)
        assert app.screen.issue_id == opened.id
        assert app.screen.query_one(CommentBox).text == "hello there"


class Slow(Static, can_focus=True):
    """A widget that takes its time over `s`."""

    async def key_s(self) -> None:
        await asyncio.sleep(3)


class SlowApp(KeyOrderApp):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("x", "mark", priority=True)]

    def __init__(self) -> None:
        super().__init__()
        self.marked_at: float | None = None

    def compose(self) -> ComposeResult:
        yield Slow()

    def on_mount(self) -> None:
        self.query_one(Slow).focus()

    def action_mark(self) -> None:
        self.marked_at = time.monotonic()


async def test_a_key_that_takes_long_holds_the_next_one_only_so_long() -> None:
    app = SlowApp()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert isinstance(app.focused, Slow)
        start = time.monotonic()
        burst_keys(app, "s", "x")
        while app.marked_at is None and time.monotonic() - start < 2.5:
            await pilot.pause(0.05)
        assert app.marked_at is not None
        assert KEY_WAIT <= app.marked_at - start < 2.5  # held behind `s`, but not for 3 s


@pytest.mark.parametrize("typed_for", [0.0, 0.001, 0.003, 0.005, 0.008, 0.012])
async def test_keys_typed_on_as_the_app_closes_are_dropped(
    app_factory: AppFactory, typed_for: float
) -> None:
    """A key handled after the last screen had closed stopped the app on an error
    (`ScreenStackError`) as it quit; the delays put the end of the app among the keys."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst_keys(app, *"jk" * 30)
        await asyncio.sleep(typed_for)
    assert app.return_code is None, "the app stopped on an error"


async def test_a_key_coming_back_up_after_the_last_screen_closed_is_dropped(
    app_factory: AppFactory,
) -> None:
    """A key a widget passed on reaches the app's bindings; once no screen is left they read
    the app's screen and raised `ScreenStackError` (a CI run, in the idle collector's typing)."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
    key = events.Key("j", "j")
    key._set_forwarded()
    await app.on_event(key)
    assert not app.screen_stack
