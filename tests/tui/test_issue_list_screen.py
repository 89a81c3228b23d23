"""The issue list screen: search, sort, filters, saved views, write actions, reloads."""

from __future__ import annotations

from typing import Any

from textual.message import Message
from textual.widgets import Checkbox, Input, OptionList, SelectionList
from tui_support import NOW, AppFactory, FakeIssueSource, Notices, settle, unique

from cache import Cache, IssueFilter, Resource
from demo.data import generate
from tracker_tui.data.cache_source import ME_STATE_KEY, CacheIssueSource
from tracker_tui.data.source import IssueQuery
from tracker_tui.data.views import SavedView
from tracker_tui.messages import (
    BulkEditRequested,
    CacheChanged,
    CreateIssueRequested,
    EditIssueRequested,
)
from tracker_tui.screens.filter_dialog import FilterDialog
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.screens.save_view_dialog import SaveViewDialog
from tracker_tui.screens.sort_dialog import SortDialog
from tracker_tui.sync_link import OfflineLink
from tracker_tui.widgets.filter_chips import FilterChips
from tracker_tui.widgets.issue_list import IssueList

SIZE = (120, 36)


def screen(app: Any) -> IssueListScreen:
    assert isinstance(app.screen, IssueListScreen)
    return app.screen


def chips_text(app: Any) -> str:
    return screen(app).query_one(FilterChips).render().plain


async def test_search_filters_as_you_type_and_escape_clears(
    app_factory: AppFactory, source: CacheIssueSource
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        search = screen(app).query_one("#search", Input)
        assert not search.display
        await pilot.press("slash", *"login")
        await settle(pilot)
        issues = screen(app).query_one(IssueList)
        assert search.has_focus
        assert issues.issue_query.filter.text == "login"
        assert issues.count == source.count(IssueQuery(IssueFilter(text="login")))
        assert 0 < (issues.count or 0) < 500
        assert "“login”" in chips_text(app)
        await pilot.press("escape")
        await settle(pilot)
        assert issues.issue_query.filter.text == ""
        assert issues.count == 500
        assert not search.display
        assert issues.has_focus


async def test_enter_keeps_the_search_and_returns_to_the_list(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"sync", "enter")
        await settle(pilot)
        issues = screen(app).query_one(IssueList)
        assert issues.has_focus
        assert issues.issue_query.filter.text == "sync"
        await pilot.press("j")
        assert issues.cursor == 1


async def test_sort_keys_cycle_flip_and_pick(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("s")
        assert screen(app).issue_query.sort.key == "created"
        await pilot.press("S")
        assert screen(app).issue_query.sort.descending is False
        assert "sort: created ▲" in chips_text(app)
        await pilot.press("o")
        assert isinstance(app.screen, SortDialog)
        await pilot.press("down", "down", "down", "enter")
        await settle(pilot)
        query = screen(app).issue_query
        assert (query.sort.key, query.sort.descending) == ("title", False)
        issues = screen(app).query_one(IssueList)
        assert "Title ▲" in issues.render_line(0).text
        first, second = issues.row(issues.cursor), issues.row(issues.cursor + 1)
        assert first is not None and second is not None
        assert first.title.lower() <= second.title.lower()
        await pilot.press("o", "enter")
        assert screen(app).issue_query.sort.descending is True
        await pilot.press("o", "escape")
        assert screen(app).issue_query.sort.key == "title"


async def test_the_filter_dialog_opens_afresh_on_the_current_query(
    app_factory: AppFactory,
) -> None:
    """The list screen keeps its filter dialog: opened again, it shows the query as it is now,
    on its first field, not what was ticked and cancelled the time before."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f", "down", "tab", "space", "escape")
        await settle(pilot)
        assert not screen(app).issue_query.is_filtered
        await pilot.press("m", "f")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, FilterDialog)
        fields = dialog.query_one("#filter-fields", OptionList)
        assert dialog.focused is fields
        assert fields.highlighted == 0
        assert dialog.query_one(SelectionList).selected == []
        assert dialog.query_one("#filter-mine", Checkbox).value is True
        await pilot.press("tab", "space", "ctrl+s")
        await settle(pilot)
        query = screen(app).issue_query
        assert query.mine
        assert query.filter.status == {"backlog"}
        assert not query.filter.priority


async def test_filter_dialog_selects_values_and_the_chips_show_labels(
    app_factory: AppFactory,
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f")
        dialog = app.screen
        assert isinstance(dialog, FilterDialog)
        await pilot.press("down", "down", "tab", "space", "down", "space")
        assert dialog.query_one(SelectionList).selected == ["usr_ada", "usr_alan"]
        await pilot.press("shift+tab", "up", "up", "tab", "space")
        await pilot.press("ctrl+s")
        await settle(pilot)
        query = screen(app).issue_query
        assert query.filter.assignee == {"usr_ada", "usr_alan"}
        assert query.filter.status == {"backlog"}
        text = chips_text(app)
        assert "assignee: Ada Lovelace, Alan Turing" in text
        assert "status: Backlog" in text
        issues = screen(app).query_one(IssueList)
        row = issues.highlighted_row
        assert row is not None
        assert row.status == "backlog"
        assert row.assignee in ("usr_ada", "usr_alan")
        assert issues.names[row.assignee] in ("Ada Lovelace", "Alan Turing")


async def test_filter_dialog_clear_and_cancel(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen(app).issue_query = IssueQuery(
            IssueFilter(label=frozenset({"bug", "gone"})), mine=True
        )
        await pilot.press("f")
        await pilot.click("#filter-clear")
        await pilot.click("#filter-apply")
        assert screen(app).issue_query == IssueQuery()
        await pilot.press("f", "escape")
        assert screen(app).issue_query == IssueQuery()


async def test_only_mine_and_clear_filters(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        assert screen(app).issue_query.mine
        assert " mine " in chips_text(app)
        row = screen(app).query_one(IssueList).highlighted_row
        assert row is not None and row.assignee == "usr_ada"
        await pilot.press("F")
        assert not screen(app).issue_query.is_filtered
        assert "all issues" in chips_text(app)


async def test_mine_works_once_the_sync_engine_learns_who_i_am(
    app_factory: AppFactory, cache: Cache
) -> None:
    """A first run starts before `GET /me` has answered: "mine" matches nobody until then,
    and the user stored by the sync engine meanwhile, without a restart."""
    app = app_factory(me=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        assert screen(app).query_one(IssueList).highlighted_row is None
        cache.state.set(ME_STATE_KEY, "usr_ada")
        app.post_message(CacheChanged())
        await settle(pilot)
        row = screen(app).query_one(IssueList).highlighted_row
        assert row is not None and row.assignee == "usr_ada"


async def test_saved_views_apply_on_number_keys_and_save_via_the_callback(
    app_factory: AppFactory, notices: Notices
) -> None:
    urgent = SavedView("Urgent", IssueQuery(IssueFilter(priority=frozenset({"urgent"}))))
    saved: list[list[SavedView]] = []
    app = app_factory(views=[urgent], on_views_changed=saved.append)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("1")
        await settle(pilot)
        assert screen(app).issue_query == urgent.query
        assert screen(app).view_name == "Urgent"
        assert "Urgent" in chips_text(app)
        await pilot.press("2")
        assert "No view saved on 2 (ctrl+s saves one)." in notices.texts()
        await pilot.press("s")
        assert screen(app).view_name is None
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, SaveViewDialog)
        await pilot.press(*"Urgent by date", "enter")
        await pilot.press("F", "ctrl+s", "enter")
        assert isinstance(app.screen, SaveViewDialog)
        await pilot.press(*"All", "enter")
        await pilot.press("2")
        assert screen(app).issue_query == urgent.query.next_sort()
    assert [view.name for view in saved[-1]] == ["Urgent", "Urgent by date", "All"]
    assert saved[-1][2].query == IssueQuery().next_sort()
    assert "Saved view “All” on 3." in notices.texts()
    assert "A view needs a name." in notices.texts()


async def test_write_actions_post_requests(app_factory: AppFactory, notices: Notices) -> None:
    """Over a source alone (no cache, so nothing opens), to see just what the list posts."""
    seen: list[Message] = []
    app = app_factory(FakeIssueSource(500))
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await settle(pilot)
        await pilot.press("j", "e", "c", "b")
        await pilot.press("space", "j", "space", "b")
        await pilot.pause()
    posted = unique(seen)
    edits = [m.issue_id for m in posted if isinstance(m, EditIssueRequested)]
    assert edits == ["iss_000001"]
    assert sum(isinstance(m, CreateIssueRequested) for m in posted) == 1
    bulk = [m.selection for m in posted if isinstance(m, BulkEditRequested)]
    assert len(bulk) == 1
    assert bulk[0].count == 2
    assert bulk[0].marks.ids == {"iss_000001", "iss_000002"}
    assert "Nothing is marked (space marks, * marks all)." in notices.texts()


async def test_read_only_refuses_every_write(app_factory: AppFactory, notices: Notices) -> None:
    seen: list[Message] = []
    app = app_factory(read_only=True)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await settle(pilot)
        await pilot.press("e", "c", "b")
        await pilot.pause()
    requests = (EditIssueRequested, CreateIssueRequested, BulkEditRequested)
    assert not [m for m in seen if isinstance(m, requests)]
    assert notices.texts().count("Read-only mode: changes are off.") == 3


async def test_cache_changes_reload_and_keep_the_highlighted_issue(
    app_factory: AppFactory, cache: Cache
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "j")
        issues = screen(app).query_one(IssueList)
        chosen = issues.highlighted_row
        assert chosen is not None
        more = generate(510, NOW).issues[500:]
        cache.server.apply_page(
            Resource.ISSUES, [dict(record, id=f"iss_new_{n}") for n, record in enumerate(more)]
        )
        app.post_message(CacheChanged())
        await settle(pilot)
        assert issues.count == 510
        assert issues.highlighted_row is not None
        assert issues.highlighted_row.id == chosen.id
        assert issues.cursor > 3
        assert "510 issues" in chips_text(app)


async def test_failing_filter_values_become_a_notice(
    app_factory: AppFactory, notices: Notices
) -> None:
    class NoValues(FakeIssueSource):
        def distinct_values(self, field: Any) -> list[tuple[str, str]]:
            raise OSError("disk I/O error")

    app = app_factory(NoValues(20))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f")
        assert isinstance(app.screen, FilterDialog)
    assert "Could not read the filter values: disk I/O error" in notices.texts()


async def test_flipping_the_sort_reverses_the_rows(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("S")
        await settle(pilot)
        issues = screen(app).query_one(IssueList)
        first, second = issues.row(0), issues.row(1)
        assert first is not None and second is not None
        assert first.number == 1
        assert first.updated_at < second.updated_at
        await pilot.press("m", "S")
        await settle(pilot)
        first, second = issues.row(0), issues.row(1)
        assert first is not None and second is not None
        assert first.updated_at > second.updated_at


async def test_the_search_text_is_handed_to_the_engine_as_typed(
    app_factory: AppFactory, link: OfflineLink
) -> None:
    """While a backfill fills the cache, the engine asks the server's search too
    (docs/sync.md#head-first): it is told the text at each keystroke and debounces."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"log")
        await settle(pilot)
    assert link.searched[-1] == "log"  # keys typed in a burst may skip a stale text
    assert all("log".startswith(text) for text in link.searched)


async def test_every_key_is_told_to_the_engine(app_factory: AppFactory, link: OfflineLink) -> None:
    """A pull waits for a pause in the user's typing (sync.foreground): the app tells the
    engine of each key, whichever screen or widget takes it."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        told = link.keys
        await pilot.press("slash", *"log", "escape", "m")
        await settle(pilot)
    assert link.keys - told == 6
