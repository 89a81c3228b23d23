"""What the app closes is freed: a widget that watched a longer-lived one's reactive is not
kept alive by its watcher (tracker_tui/closed_watchers.py, textual#6666)."""

from __future__ import annotations

import gc
import weakref

from textual.pilot import Pilot
from textual.widgets._footer import FooterKey
from tui_support import AppFactory, settle

from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.widgets.steady_footer import SteadyFooter

SIZE = (120, 36)
ROUNDS = 8


def alive(refs: list[weakref.ref[object]]) -> int:
    """How many of `refs` a full collection leaves alive (the app freezes what its
    collections leave: unfrozen first, so that garbage among it is collected)."""
    gc.unfreeze()
    gc.collect()
    return sum(ref() is not None for ref in refs)


async def footer_keys(pilot: Pilot[object]) -> list[weakref.ref[object]]:
    await settle(pilot)
    footer = pilot.app.screen.query_one(SteadyFooter)
    footer.show_keys()
    await settle(pilot)
    return [weakref.ref(key) for key in footer.query(FooterKey)]


async def test_the_footer_keeps_no_key_it_took_down(app_factory: AppFactory) -> None:
    """Opening and closing the search field changes the keys shown: each time the footer
    builds new key widgets, and the ones it took down are freed."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        built = await footer_keys(pilot)
        for _ in range(ROUNDS):
            await pilot.press("slash")
            built += await footer_keys(pilot)
            await pilot.press("escape")
            built += await footer_keys(pilot)
        shown = len(app.screen.query_one(SteadyFooter).query(FooterKey))
        assert len(built) > ROUNDS * shown  # the keys were built again each time
        assert alive(built) <= 2 * shown


async def test_a_closed_issue_screen_is_freed(app_factory: AppFactory) -> None:
    """Each issue screen watches the app's `key_permissions` and `cache_revision`, which may
    not change while issues are opened and closed."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screens: list[weakref.ref[object]] = []
        for _ in range(ROUNDS):
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, IssueDetailScreen)
            screens.append(weakref.ref(app.screen))
            await pilot.press("escape")
            await settle(pilot)
            assert isinstance(app.screen, IssueListScreen)
        assert alive(screens) <= 2  # the last closed, kept until the next watch of the app
