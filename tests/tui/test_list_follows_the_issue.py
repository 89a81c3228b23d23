"""The highlight belongs to an issue: it follows it when pulls, colleagues' edits and the user's
own edits re-sort the list, without moving what is on screen; marks follow their issues too."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

from textual.message import Message
from textual.widgets import Input
from tui_support import NOW, AppFactory, FakeIssueSource, Notices, issue_list, settle, unique

from cache import Cache, IssueFilter, IssueRow, JsonObject, Resource, SyncState
from tracker_tui.data.marks import Marks
from tracker_tui.data.source import IssueQuery
from tracker_tui.messages import CacheChanged
from tracker_tui.screens.issue_form import IssueFormScreen
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.widgets.filter_chips import FilterChips
from tracker_tui.widgets.issue_list import IssueList

SIZE = (120, 36)


def highlighted(issues: IssueList) -> str:
    row = issues.highlighted_row
    assert row is not None
    return row.id


def line_of_cursor(issues: IssueList) -> int:
    return issues.cursor - issues.scroll_offset.y


def on_screen(issues: IssueList) -> list[str | None]:
    """The ids on the lines of the viewport, top to bottom."""
    top = issues.scroll_offset.y
    return [
        row.id if (row := issues.row(top + line)) is not None else None
        for line in range(issues.visible_rows)
    ]


def pull(cache: Cache, changes: dict[str, JsonObject], seconds_later: int = 60) -> None:
    """A pull landing: the server's newer copies of these issues (so they sort to the top of
    the default order), as the sync engine stores them."""
    records = []
    for n, (issue_id, fields) in enumerate(changes.items()):
        record = cache.server.server_record(Resource.ISSUES, issue_id)
        assert record is not None
        when = NOW + timedelta(seconds=seconds_later + n)
        records.append({**record, **fields, "updated_at": when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")})
    cache.server.apply_page(Resource.ISSUES, records)


async def test_a_pull_re_sorting_the_list_keeps_the_highlight_and_the_viewport(
    app_factory: AppFactory, cache: Cache
) -> None:
    """Issues below the screen are edited by a colleague and jump to the top: the highlighted
    issue, its line, and every line on screen stay as they were; enter and space act on it."""
    seen: list[Message] = []
    app = app_factory()
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        await pilot.press("pagedown", "pagedown", *["k"] * 10)
        await settle(pilot)
        chosen, line, shown = highlighted(issues), line_of_cursor(issues), on_screen(issues)
        assert issues.scroll_offset.y > 0 and line > 0
        bottom = issues.scroll_offset.y + issues.visible_rows
        below = [row.id for n in (2, 7, 20) if (row := issues.row(bottom + n)) is not None]
        assert len(below) == 3
        pull(
            cache,
            {issue_id: {"title": f"Edited by a colleague {n}"} for n, issue_id in enumerate(below)},
        )
        app.post_message(CacheChanged())
        await settle(pilot)
        assert highlighted(issues) == chosen
        assert line_of_cursor(issues) == line
        assert on_screen(issues) == shown
        await pilot.press("space", "enter")
        await settle(pilot)
        assert issues.marks == Marks(ids=frozenset({chosen}))
    opened = [m.issue_id for m in unique(seen) if isinstance(m, IssueList.Opened)]
    assert opened == [chosen]


async def test_the_highlighted_issue_moving_to_the_top_takes_the_cursor_along(
    app_factory: AppFactory, cache: Cache
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        await pilot.press(*["j"] * 12)
        chosen = highlighted(issues)
        pull(cache, {chosen: {"priority": "urgent"}})
        app.post_message(CacheChanged())
        await settle(pilot)
        assert highlighted(issues) == chosen
        assert issues.cursor == 0
        assert issues.scroll_offset.y == 0


async def test_an_issue_leaving_the_query_hands_the_cursor_to_the_row_taking_its_place(
    app_factory: AppFactory, cache: Cache
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, IssueListScreen)
        screen.issue_query = IssueQuery(IssueFilter(status=frozenset({"todo"})))
        await settle(pilot)
        issues = issue_list(app)
        await pilot.press(*["j"] * 5)
        gone = highlighted(issues)
        following = issues.row(6)
        assert following is not None
        pull(cache, {gone: {"status": "done"}})
        app.post_message(CacheChanged())
        await settle(pilot)
        assert (issues.cursor, highlighted(issues)) == (5, following.id)
        await pilot.press("G")
        await settle(pilot)
        last = issues.cursor
        before_last = issues.row(last - 1)
        assert before_last is not None
        pull(cache, {highlighted(issues): {"status": "done"}}, seconds_later=120)
        app.post_message(CacheChanged())
        await settle(pilot)
        assert (issues.cursor, highlighted(issues)) == (last - 1, before_last.id)


async def test_editing_an_issue_and_returning_keeps_it_highlighted(
    app_factory: AppFactory,
) -> None:
    """The edit makes the issue the most recently updated, so it sorts to the top."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        await pilot.press(*["j"] * 6, "e")
        await settle(pilot)
        assert isinstance(app.screen, IssueFormScreen)
        chosen = app.screen.query_one("#title", Input)
        chosen.value = "Renamed while the list waited"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
        row = issues.highlighted_row
        assert row is not None
        assert row.title == "Renamed while the list waited"
        assert issues.cursor == 0


async def test_a_new_sort_keeps_the_highlighted_issue_on_its_line_and_the_marks(
    app_factory: AppFactory,
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        await pilot.press("j", "j", "j", "space")
        chosen, line = highlighted(issues), line_of_cursor(issues)
        for key in ("s", "S", "s"):
            await pilot.press(key)
            await settle(pilot)
            assert highlighted(issues) == chosen
            if issues.cursor >= line:
                assert line_of_cursor(issues) == line
            assert issues.marks == Marks(ids=frozenset({chosen}))
        assert issues.issue_query.sort.key == "priority"


STAMP = NOW.isoformat().replace("+00:00", "Z")


class Growing(FakeIssueSource):
    """Issues arriving on top of the default order (`new` of them so far), and a gate that
    holds the next `position` call until the test opens it."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.new = 0
        self.positions = 0
        self.hold: threading.Event | None = None

    def count(self, query: IssueQuery, stop: Callable[[], bool] | None = None) -> int:
        return super().count(query, stop) + self.new

    def window(self, query: IssueQuery, offset: int, limit: int) -> list[IssueRow]:
        fresh = [self.fresh(n) for n in range(offset, min(offset + limit, self.new))]
        start = max(offset - self.new, 0)
        return fresh + super().window(query, start, limit - len(fresh))

    def position(self, query: IssueQuery, issue_id: str, near: int | None) -> int | None:
        self.positions += 1
        if self.hold is not None:
            self.hold.wait(timeout=5)
            self.hold = None
        if issue_id.startswith("new_"):
            return self.new - int(issue_id.removeprefix("new_"))
        found = super().position(query, issue_id, near)
        return None if found is None else found + self.new

    def fresh(self, n: int) -> IssueRow:
        cells = {"title": f"Arrived {self.new - n}", "status": "todo", "updated_at": STAMP}
        return IssueRow(f"new_{self.new - n}", cells, (), SyncState.SYNCED)


async def test_following_the_highlight_in_100000_issues_reads_one_window(
    app_factory: AppFactory,
) -> None:
    source = Growing(100_000)
    app = app_factory(source)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        issues.cursor = 50_000
        await pilot.press("j")
        await settle(pilot)
        chosen, line, read = highlighted(issues), line_of_cursor(issues), source.rows_read
        source.new = 5
        app.post_message(CacheChanged())
        await settle(pilot)
        assert (highlighted(issues), issues.cursor) == (chosen, 50_006)
        assert line_of_cursor(issues) == line
        assert source.positions == 1
        assert source.rows_read - read <= 3 * 64


async def test_until_an_issue_is_picked_the_highlight_follows_it_while_in_view(
    app_factory: AppFactory,
) -> None:
    """A list just opened (or searched) holds still. An issue lifted to the top (a colleague's
    edit) moves the highlight down with the issue the user was looking at, so `enter` a moment
    later opens that one (issue 14's defect 4: #13 became #74 under a user who did nothing);
    a first sync's pages, arriving at the top by the hundred, push it out of view and the
    cursor keeps its line, showing what arrives. Once the user moved onto an issue, it keeps
    the highlight wherever it goes."""
    source = Growing(500)
    app = app_factory(source)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        first = highlighted(issues)
        source.new = 2
        app.post_message(CacheChanged())
        await settle(pilot)
        assert (issues.cursor, issues.scroll_offset.y, highlighted(issues)) == (2, 0, first)
        source.new = 200
        app.post_message(CacheChanged())
        await settle(pilot)
        assert (issues.cursor, issues.scroll_offset.y, highlighted(issues)) == (2, 0, "new_198")
        await pilot.press("j", "k")
        source.new = 203
        app.post_message(CacheChanged())
        await settle(pilot)
        assert (issues.cursor, highlighted(issues)) == (5, "new_198")
        await pilot.press("m")
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        assert (issues.cursor, highlighted(issues)) == (0, "new_203")
        source.new = 204
        app.post_message(CacheChanged())
        await settle(pilot)
        assert (issues.cursor, issues.scroll_offset.y, highlighted(issues)) == (1, 0, "new_203")


async def test_a_move_while_a_reload_is_read_is_kept(app_factory: AppFactory) -> None:
    """The user moves onto another issue while the re-sorted rows are being read: the answer
    found for the issue they left is dropped, and the rows are read again for the one they
    are on."""
    source = Growing(500)
    app = app_factory(source)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        await pilot.press(*["j"] * 10)
        source.hold = threading.Event()
        source.new = 3
        app.post_message(CacheChanged())
        await pilot.pause()
        await pilot.press("j")
        wanted = highlighted(issues)
        source.hold.set()
        await settle(pilot)
        assert highlighted(issues) == wanted
        assert issues.cursor == 14
        assert source.positions == 2


async def test_marks_survive_a_search_and_a_filter_and_x_clears_them(
    app_factory: AppFactory,
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        await pilot.press("space", "j", "space")
        marked = issues.marks
        assert marked.count(500) == 2
        await pilot.press("slash", *"login", "enter")
        await settle(pilot)
        assert issues.issue_query.filter.text == "login"
        assert issues.marks == marked
        await pilot.press("m")
        await settle(pilot)
        assert issues.marks == marked
        assert "2 marked" in app.screen.query_one(FilterChips).render().plain
        await pilot.press("m", "escape")
        await settle(pilot)
        assert [issues.render_line(y).text[0] for y in (1, 2, 3)] == ["●", "●", " "]
        await pilot.press("x")
        await pilot.pause()
        assert issues.marks == Marks()
        assert "marked" not in app.screen.query_one(FilterChips).render().plain


async def test_marking_all_goes_with_its_filter_and_says_so(
    app_factory: AppFactory, notices: Notices
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        await pilot.press("asterisk", "s")
        await settle(pilot)
        assert issues.marks == Marks.everything()
        await pilot.press("m")
        await settle(pilot)
        assert issues.marks == Marks()
    assert "Marks cleared: they were “all issues” of the previous filter." in notices.texts()


async def test_clear_marks_has_a_key_in_the_help_and_the_palette(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        assert app.screen.active_bindings["x"].binding.description == "Clear marks"
        await pilot.press("space", "ctrl+p")
        await settle(pilot)
        await pilot.press(*"clear marks")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
        assert issues.marks == Marks()
