"""The virtual issue list, driven through the app: loading, the cursor, marks, failures."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from textual.message import Message
from tui_support import AppFactory, FakeIssueSource, Notices, issue_list, settle, unique

from cache import Cache, FieldConflict, IssueFilter, IssueSort, Resource
from tracker_tui.data.marks import Marks
from tracker_tui.data.pages import MAX_PAGES
from tracker_tui.data.source import IssueQuery
from tracker_tui.messages import CacheChanged, SourceFailed
from tracker_tui.widgets.issue_list import IssueList

SIZE = (120, 36)


async def test_first_screen_reads_only_what_it_shows(app_factory: AppFactory) -> None:
    source = FakeIssueSource(100_000)
    app = app_factory(source)
    started = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        opened = time.perf_counter() - started
        issues = issue_list(app)
        assert issues.count == 100_000
        assert issues.virtual_size.height == 100_001
        assert issues.highlighted_row is not None
        assert issues.highlighted_row.id == "iss_000000"
        assert source.counts == 1
        assert source.rows_read <= 3 * 64
        assert opened < 5


async def test_jumping_to_the_end_of_100000_reads_one_window(app_factory: AppFactory) -> None:
    source = FakeIssueSource(100_000)
    app = app_factory(source)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = source.rows_read
        await pilot.press("G")
        await settle(pilot)
        issues = issue_list(app)
        assert issues.cursor == 99_999
        assert issues.highlighted_row is not None
        assert issues.highlighted_row.number == 1
        assert issues.scroll_offset.y == 99_999 - issues.visible_rows + 1
        assert source.rows_read - before <= 3 * 64
        for jump in range(0, 100_000, 3_300):
            issues.cursor = jump
            await settle(pilot)
            assert issues.highlighted_row is not None
        assert issues.page_cache_size <= MAX_PAGES
        assert source.counts == 1


async def test_cursor_keys_move_and_keep_the_cursor_in_view(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        page = issues.visible_rows
        await pilot.press("j", "j", "down", "k")
        assert issues.cursor == 2
        await pilot.press("up", "up", "up")
        assert issues.cursor == 0
        await pilot.press("pagedown")
        assert issues.cursor == page
        await pilot.press("ctrl+u")
        assert issues.cursor == page - page // 2
        await pilot.press("ctrl+d", "ctrl+d", "ctrl+d")
        await settle(pilot)
        top = issues.scroll_offset.y
        assert top <= issues.cursor < top + page
        await pilot.press("end")
        assert issues.cursor == 499
        await pilot.press("j")
        assert issues.cursor == 499
        await pilot.press("g")
        assert issues.cursor == 0
        assert issues.scroll_offset.y == 0


async def test_highlight_and_open_are_announced(app_factory: AppFactory) -> None:
    seen: list[Message] = []
    app = app_factory()
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await settle(pilot)
        await pilot.press("j", "enter")
        await pilot.pause()
    highlighted = [m.issue_id for m in unique(seen) if isinstance(m, IssueList.Highlighted)]
    opened = [m.issue_id for m in unique(seen) if isinstance(m, IssueList.Opened)]
    assert highlighted[:2] == ["iss_000000", "iss_000001"]
    assert opened == ["iss_000001"]


async def test_marks_toggle_extend_all_and_invert(app_factory: AppFactory) -> None:
    seen: list[Message] = []
    app = app_factory()
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        await pilot.press("space")
        assert issues.marks == Marks(ids=frozenset({"iss_000000"}))
        await pilot.press("j", "shift+down", "shift+down")
        assert issues.cursor == 3
        assert issues.marks.ids == {"iss_000000", "iss_000001", "iss_000002", "iss_000003"}
        await pilot.press("shift+up")
        assert issues.cursor == 2
        await pilot.press("space")
        assert issues.marks.count(500) == 3
        await pilot.press("exclamation_mark")
        assert issues.marks.count(500) == 497
        assert issues.marks.is_marked("iss_000002")
        await pilot.press("asterisk")
        assert issues.marks == Marks.everything()
        assert issues.selection.count == 500
        await pilot.pause()
    counts = [m.count for m in unique(seen) if isinstance(m, IssueList.MarksChanged)]
    assert counts[-1] == 500
    assert 497 in counts


async def test_read_only_refuses_marks_with_a_notice(
    app_factory: AppFactory, notices: Notices
) -> None:
    app = app_factory(read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("space", "asterisk", "x")
        assert issue_list(app).marks == Marks()
    assert notices.texts().count("Read-only mode: changes are off.") == 3


async def test_an_answer_to_an_older_query_is_dropped(app_factory: AppFactory) -> None:
    """The first query's count is held back until the second query has been answered."""

    class Gated(FakeIssueSource):
        def __init__(self) -> None:
            super().__init__(500)
            self.held = threading.Event()
            self.holding = IssueQuery(IssueFilter(status=frozenset({"todo"})))

        def count(self, query: IssueQuery, stop: Callable[[], bool] | None = None) -> int:
            if query.filter_key == self.holding:
                self.held.wait(timeout=5)
            return super().count(query, stop)

    source = Gated()
    app = app_factory(source)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        issues.issue_query = source.holding
        await pilot.pause()
        done = IssueQuery(IssueFilter(status=frozenset({"done"})))
        issues.issue_query = done
        await settle(pilot)
        expected = source.count(done)
        assert issues.count == expected
        source.held.set()
        await pilot.pause(0.2)
        await settle(pilot)
        assert issues.count == expected
        assert issues.highlighted_row is not None
        assert issues.highlighted_row.status == "done"


async def test_a_failing_source_becomes_a_notice_not_a_traceback(
    app_factory: AppFactory, notices: Notices
) -> None:
    source = FakeIssueSource(50)
    source.fail = RuntimeError("database is locked")
    seen: list[Message] = []
    app = app_factory(source)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        assert issues.count is None
        assert "Could not read issues: database is locked" in issues.render_line(1).text
        assert app.is_running
        source.fail = None
        issues.reload()
        await settle(pilot)
        assert issues.count == 50
    assert any(isinstance(m, SourceFailed) for m in seen)
    assert "Could not read the issue list: database is locked" in notices.texts()


async def test_empty_results_say_so(app_factory: AppFactory) -> None:
    app = app_factory(FakeIssueSource(0))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        assert issues.count == 0
        assert "No issues yet." in issues.render_line(1).text
        await pilot.press("j", "enter", "space", "G")
        assert issues.cursor == 0
        issues.issue_query = IssueQuery(IssueFilter(text="nothing like this"))
        await settle(pilot)
        assert "No issues match." in issues.render_line(1).text


async def test_rows_show_sync_state_and_marks(app_factory: AppFactory, cache: Cache) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = issue_list(app)
        header = issues.render_line(0).text
        assert "Updated ▼" in header
        assert "Title" in header
        await pilot.press("space")
        first = issues.render_line(1).text
        assert first.startswith("●")
        assert "#500" in first
        assert "ago" in first
        refused_row = issues.render_line(4).text
        refused_number = refused_row.split()[0]
        _, edited, mine, refused = cache.reads.window(IssueFilter(), IssueSort(), 0, 4)
        assert f"#{refused.number}" == refused_number
        pending = cache.outbox.update(Resource.ISSUES, edited.id, {"title": "Edited"})
        conflicting = cache.outbox.update(Resource.ISSUES, mine.id, {"title": "Mine"})
        failing = cache.outbox.update(Resource.ISSUES, refused.id, {"title": "Refused"})
        assert pending and conflicting and failing
        for entry in (conflicting, failing):
            cache.push.mark_sending(entry.id)
        cache.push.record_conflicts(conflicting.id, [FieldConflict("title", "a", "Mine", "b")])
        cache.push.mark_failed(failing.id, "invalid_request")
        app.post_message(CacheChanged())
        await settle(pilot)
        await pilot.press("g")
        await settle(pilot)
        lines = [issues.render_line(y).text for y in range(1, 12)]
        glyphs = {
            title: line[1]
            for line in lines
            for title in ("Edited", "Mine", "Refused", refused_number)
            if title in line.split()
        }
        assert glyphs == {"Edited": "↑", "Mine": "≠", refused_number: "✗"}
        [refused_now] = [line for line in lines if refused_number in line.split()]
        assert refused_now[2:] == refused_row[2:], "a refused write shows the server's copy"
