"""The label picker: keys arriving in one burst (issue 14, defect 1), enter taking the best
match rather than creating a typo label (defect 15), and creating one only from its own row."""

from __future__ import annotations

from typing import Any

from test_bulk_edit import choose
from textual import events
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Static
from tui_support import AppFactory, settle

from cache import Cache
from tracker_tui.screens.bulk_edit import BulkEditScreen
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.screens.labels_dialog import LabelsDialog
from tracker_tui.widgets.label_picker import LabelInput, LabelList, LabelPicker, Row

SIZE = (120, 36)
TOP = "iss_000000"
"""The most recently updated demo issue: the list's first row."""


def burst_keys(app: App[Any], *keys: str) -> None:
    """Queue every key before any of them is handled, as a terminal delivers keys typed fast
    or sent at once: Pilot's `press` waits for each key to be processed before the next."""
    for key in keys:
        app.post_message(events.Key(key, key if len(key) == 1 else None))


async def open_labels(pilot: Pilot[Any]) -> LabelPicker:
    """The first issue's labels dialog, from the list."""
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(pilot.app.screen, IssueDetailScreen)
    await pilot.press("l")
    await pilot.pause()
    assert isinstance(pilot.app.screen, LabelsDialog)
    return pilot.app.screen.query_one(LabelPicker)


async def test_a_burst_that_empties_the_list_then_enter_keeps_the_app_up(
    app_factory: AppFactory, cache: Cache
) -> None:
    """`c` matches labels, `cr` none: the list shrinks to nothing under a queued highlight."""
    before = cache.reads.issue(TOP)
    assert before is not None
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_labels(pilot)
        burst_keys(app, "c", "r", "enter")
        await settle(pilot)
        assert isinstance(app.screen, LabelsDialog)
        assert app.screen.query_one(LabelPicker) is picker
        assert picker.query(LabelList)
        assert picker.labels == [*before.issue.labels, "cr"]
        burst_keys(app, *"sec", "enter")
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)
    assert app.return_code in (None, 0)
    after = cache.reads.issue(TOP)
    assert after is not None
    assert set(after.issue.labels) == {*before.issue.labels, "cr"} ^ {"security"}


async def test_a_burst_in_bulk_add_labels_keeps_the_app_up(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("space", "b")
        await settle(pilot)
        await choose(pilot, "Add labels")
        assert isinstance(app.screen, BulkEditScreen)
        picker = app.screen.query_one(LabelPicker)
        burst_keys(app, "c", "r", "enter")
        await settle(pilot)
        burst_keys(app, "d", "o", "enter")
        await settle(pilot)
        assert isinstance(app.screen, BulkEditScreen)
        assert picker.labels == ["cr", "docs"]
    assert app.return_code in (None, 0)


async def test_enter_ticks_the_only_match_instead_of_creating_what_was_typed(
    app_factory: AppFactory, cache: Cache
) -> None:
    """`secu` + enter with "security" the only match ticks "security"; no label "secu"."""
    before = cache.reads.issue(TOP)
    assert before is not None and "security" not in before.issue.labels
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_labels(pilot)
        await pilot.press(*"secu")
        assert picker.rows == [Row("security"), Row("secu", new=True)]
        await pilot.press("enter")
        assert picker.labels == [*before.issue.labels, "security"]
        await pilot.press("ctrl+s")
        await settle(pilot)
    after = cache.reads.issue(TOP)
    assert after is not None
    assert after.issue.labels == (*before.issue.labels, "security")


class PickerApp(App[None]):
    """The picker alone, over labels a test chooses."""

    def __init__(self, labels: list[str], known: list[str]) -> None:
        super().__init__()
        self.picker = LabelPicker(labels, known)

    def compose(self) -> ComposeResult:
        yield self.picker

    def on_mount(self) -> None:
        self.picker.focus()


async def test_a_new_label_needs_its_own_row() -> None:
    """`reg` ticks "regression"; the "new label" row (down, down, enter) creates "reg"; a
    text matching nothing offers only that row, so enter creates it."""
    app = PickerApp([], ["regression", "bug", "Docs"])
    async with app.run_test() as pilot:
        picker = app.picker
        await pilot.press(*"reg", "enter")
        assert picker.labels == ["regression"]
        await pilot.press(*"reg")
        assert picker.rows == [Row("regression"), Row("reg", new=True)]
        await pilot.press("down", "down", "enter")
        assert picker.labels == ["regression", "reg"]
        assert isinstance(app.focused, LabelInput)
        await pilot.press(*"docs", "enter")  # an existing label is never duplicated by case
        await pilot.press(*"bgu")
        assert picker.rows == [Row("bgu", new=True)]
        await pilot.press("enter")
        assert picker.labels == ["regression", "reg", "Docs", "bgu"]
        await pilot.press(*"bug, flaky, regression", "enter")  # several: tick only, never untick
        assert picker.labels == ["regression", "reg", "Docs", "bgu", "bug", "flaky"]
        await pilot.press(*"reg", "enter")  # typed alone, a ticked label's row unticks it
        assert picker.labels == ["regression", "Docs", "bgu", "bug", "flaky"]
        assert "Ticked: regression, Docs, bgu, bug, flaky" in str(
            picker.query_one(".label-picker--chosen", Static).render()
        )


async def test_keys_in_the_list_tick_and_up_from_the_top_returns_to_the_field() -> None:
    app = PickerApp(["bug"], ["bug", "docs", "ux"])
    async with app.run_test() as pilot:
        picker = app.picker
        await pilot.press("down")
        assert isinstance(app.focused, LabelList)
        await pilot.press("space", "down", "enter", "down", "space")
        assert picker.labels == ["docs", "ux"]
        await pilot.press("up", "up", "up")
        assert isinstance(app.focused, LabelInput)
        await pilot.press(*"u", "enter")
        assert picker.labels == ["docs"]


async def test_no_burst_of_keys_breaks_the_picker() -> None:
    """Every key the picker knows, in bursts that grow and empty the list under each other."""
    app = PickerApp(["bug"], ["bug", "docs", "ux", "security", "perf"])
    keys = ["c", "r", "enter", "down", "space", "up", "backspace", "s", "enter", "down", "down"]
    async with app.run_test() as pilot:
        for start in range(len(keys)):
            burst_keys(app, *keys[start:], *keys[:start], "x", "enter", "up", "up")
            await pilot.pause()
        await pilot.pause()
        assert app.picker.query(LabelList)
        assert app.picker.query(LabelInput)
        assert app.return_code is None
