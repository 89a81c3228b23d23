"""The row markers (`● ↑ ≠ ✗ ↓`) explained (issue 17): the help over the list lists every one, and a
legend line under the list names those that can show, only while there are any. `↓` marks an
issue the server's search brought in ahead of the backfill (issue 19), until a pull reaches it."""

from __future__ import annotations

from tui_support import AppFactory, screen_lines, settle

from cache import Cache, IssueFilter, IssueSort, Resource
from tracker_tui.data.outbox_counts import OutboxCounts
from tracker_tui.messages import ServerHitsArrived, SyncStatusChanged
from tracker_tui.screens.help import HelpScreen
from tracker_tui.widgets.issue_list import IssueList

SIZE = (100, 30)


def legend(app: object) -> str:
    """The line above the status bar and footer."""
    return screen_lines(app)[-3]


async def test_the_legend_shows_only_while_markers_can_show(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rows_before = app.screen.query_one(IssueList).size.height
        assert "marked" not in legend(app)
        await pilot.press("space")
        await settle(pilot)
        assert legend(app).strip() == "● marked"
        assert app.screen.query_one(IssueList).size.height == rows_before - 1
        app.post_message(
            SyncStatusChanged(profile="p", outbox=OutboxCounts(pending=2, failed=1, conflicts=0))
        )
        await settle(pilot)
        shown = legend(app)
        assert "● marked" in shown and "↑ not sent yet" in shown
        assert "✗ refused by the server" in shown and "≠" not in shown
        assert shown.index("●") < shown.index("↑") < shown.index("✗")
        await pilot.press("x")  # clear the marks
        app.post_message(SyncStatusChanged(profile="p", outbox=OutboxCounts(conflicts=1)))
        await settle(pilot)
        assert legend(app).strip() == "≠ conflict to settle (sync panel)"
        app.post_message(SyncStatusChanged(profile="p", outbox=OutboxCounts()))
        await settle(pilot)
        assert app.screen.query_one(IssueList).size.height == rows_before


async def test_help_over_the_list_explains_every_marker(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        markers = next(group for group in app.screen.groups if group.title == "Row markers")
        assert [entry.keys[0] for entry in markers.entries] == ["●", "↑", "≠", "✗", "↓"]
        assert "Row markers" in "\n".join(screen_lines(app))
        await pilot.press("escape", "enter")
        await settle(pilot)
        await pilot.press("question_mark")
        assert "Row markers" not in [group.title for group in app.screen.groups]


def row_of(app: object, number: int) -> str:
    return next(line for line in screen_lines(app) if f"#{number} " in line)


async def test_an_issue_from_the_servers_search_is_marked_until_a_pull_reaches_it(
    app_factory: AppFactory, cache: Cache
) -> None:
    newest = cache.reads.window(IssueFilter(), IssueSort(), 0, 1)[0]
    record = dict(cache.server.server_record(Resource.ISSUES, newest.id) or {})
    title = "Old crash"
    record.update(id="iss_from_search", number=9_001, title=title)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "↓" not in legend(app)
        cache.server.apply_page(Resource.ISSUES, [record], from_search=True)
        app.post_message(ServerHitsArrived("crash", found=1, new=1))
        app.post_message(SyncStatusChanged(profile="p", searched=1))
        await settle(pilot)
        assert row_of(app, 9_001).startswith(" ↓ ")
        assert row_of(app, newest.number or 0).startswith("   ")  # the cache's own: no marker
        assert legend(app).strip() == "↓ from the server's search, not yet cached"
        cache.server.apply_page(Resource.ISSUES, [record])  # the backfill's page holds it
        app.cache_revision += 1
        app.post_message(SyncStatusChanged(profile="p", searched=0))
        await settle(pilot)
        assert row_of(app, 9_001).startswith("   ")
        assert "↓" not in legend(app)
