"""The loading half of the issue list: a `ScrollView` that holds only the rows near its viewport.

Its virtual height is the row count plus a header line, so the scrollbar is right for 100,000
rows while no more than a few pages of them are in memory (`PageCache`). Counting and fetching
run in thread workers, because the source hits SQLite (a query's on the list's own reader
thread, where the cache keeps what a search worked out); answers come back as messages and are
dropped when their generation is stale (the query or the data changed meanwhile). A failed read
becomes a `SourceFailed` for the app to show, and a line in the list, never a traceback.

A new query shows its first rows before it is counted: counting every match of a common word
among 1,000,000 issues costs several times what its first rows do (issue 18). The same worker,
in the same snapshot, counts after posting the rows; until the count arrives the list holds the
rows read so far (`rows_known`), `count` stays None and `Counted` says so (the chip bar shows
"counting…"). A count is dropped when its generation is stale, and the next query's worker
stops the count of the one before in SQLite (`stop`), so typing never waits for it.

A reload (the cache changed) or a new sort can be *anchored* on an issue (`Anchor`): the worker
asks the source where that issue stands now, in the same snapshot as the count and the rows, and
reads the rows around that place, so the list can keep the issue on the same line of the screen
however the rows around it moved.

`IssueList` builds the cursor, marks and drawing on top of this.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from concurrent.futures import CancelledError, ThreadPoolExecutor

from textual import events, on, work
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.timer import Timer
from textual.widget import Widget
from textual.worker import Worker, get_current_worker

from cache import IssueRow
from issuefields.frozen import Frozen
from tracker_tui.data.pages import PageCache
from tracker_tui.data.source import IssueQuery, IssueSource
from tracker_tui.messages import SourceFailed
from tracker_tui.probes import first_draw_file, record_first_draw
from tracker_tui.widgets.frame_hold import FrameHold

MARGIN = 32
"""Rows fetched beyond each edge of the viewport, so small scrolls never show placeholders."""

HEADER_LINES = 1
"""Lines at the top that stay put while the rows scroll under them."""

PLACEHOLDER_DELAY = 0.15
"""Seconds a new query's first rows may take before the old ones give way to placeholders.
An answer within that time replaces the old rows in one frame rather than two (placeholders,
then rows): half the drawing per keystroke while typing a search, and no flicker."""


COUNT_WAIT_STEP = 0.05
"""Seconds between two looks at whether a count waiting for its rows' frame is still wanted."""


class Anchor(Frozen):
    """The issue a load should find again, and where it was: its index in the list (which
    end to look from, and the place to fall back to when it is gone) and its line on the
    screen, counted from the first row shown."""

    _fields = ("issue_id", "index", "line", "soft")
    __slots__ = _fields
    issue_id: str
    index: int
    line: int
    soft: bool
    """Followed only while it stays in view, the screen holding still: an issue the user has
    not picked yet (a list just opened or searched), so that new issues arriving at the top, as
    during a first sync, stay in view; when it is pushed out, the cursor keeps its line."""

    def __init__(self, issue_id: str, index: int, line: int, soft: bool = False) -> None:
        self._init(issue_id, index, line, soft)


class IssueWindow(ScrollView):
    """The rows of `issue_query`, loaded around the viewport as it moves."""

    issue_query: reactive[IssueQuery] = reactive(IssueQuery, init=False, repaint=False)
    """The filter and sort whose rows are shown. Setting it does not repaint: the old rows stay
    on screen until the new query's first rows replace them (or `PLACEHOLDER_DELAY` passes)."""

    count: reactive[int | None] = reactive(None, init=False, repaint=False)
    """How many rows match the query; None until its count arrives (its first rows may be
    shown before: `rows_known`)."""

    class Counted(Message):
        """The rows of a new query arrived with their count, or before it (`count` None: still
        counting; a `Counted` with the count follows), or a count arrived after its rows."""

        __slots__ = ("count", "issue_list")

        def __init__(self, issue_list: IssueWindow, count: int | None) -> None:
            self.issue_list = issue_list
            self.count = count
            super().__init__()

        @property
        def control(self) -> IssueWindow:
            """The list that was counted."""
            return self.issue_list

    class _Loaded(Message):
        """A worker's answer: rows for `pages` pages from `first_page` and the names their
        ids stand for, maybe a new count, and for an anchored load the anchor and where its
        issue stands now (None: gone). `fresh`: the generation's first rows (with its count,
        unless `count` is None: counted next), not rows scrolled into view. `drawn` is set
        once these rows are on screen (or dropped): the count waits for it."""

        __slots__ = (
            *("generation", "count", "first_page", "pages", "rows", "names"),
            *("anchor", "position", "fresh", "drawn"),
        )

        def __init__(
            self,
            generation: int,
            count: int | None,
            first_page: int,
            pages: int,
            rows: list[IssueRow],
            names: Mapping[str, str],
            anchor: Anchor | None = None,
            position: int | None = None,
            fresh: bool = False,
            drawn: threading.Event | None = None,
        ) -> None:
            self.generation = generation
            self.count = count
            self.first_page = first_page
            self.pages = pages
            self.rows = rows
            self.names = names
            self.anchor = anchor
            self.position = position
            self.fresh = fresh
            self.drawn = drawn
            super().__init__()

    class CountFailed(Message):
        """Reading the list failed while its query was not counted yet: its count is unknown
        until the next read (a plain class: a dataclass costs the app's start to build)."""

        def __init__(self, issue_list: IssueWindow) -> None:
            super().__init__()
            self.issue_list = issue_list

        @property
        def control(self) -> IssueWindow:
            """The list whose count failed."""
            return self.issue_list

    class _CountArrived(Message):
        """The count of a generation whose rows were shown before it (a plain class: a
        dataclass costs the app's start to build, tests/tui/test_start_imports.py)."""

        def __init__(self, generation: int, count: int) -> None:
            super().__init__()
            self.generation = generation
            self.count = count

    class _LoadFailed(Message):
        """A worker's read failed (the app was told via `SourceFailed`)."""

        __slots__ = ("error", "generation")

        def __init__(self, generation: int, error: str) -> None:
            self.generation = generation
            self.error = error
            super().__init__()

    def __init__(
        self, source: IssueSource, *, query: IssueQuery | None = None, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self._source = source
        self._pages = PageCache()
        self._error: str | None = None
        self._first_draw = first_draw_file()
        self._placeholders: Timer | None = None
        self._frame_hold = FrameHold(self)
        self._rows_read = 0
        """Rows known to exist from the top while the count is not (the first rows read)."""
        self.names: Mapping[str, str] = {}
        """What the ids of users and projects show as, read with the latest rows."""
        self._count_waits: threading.Event | None = None
        """Set when the rows of the last query read are drawn: its count waits for that on
        the reader. A newer query sets it too, so that the reader is free for it at once,
        not a frame later."""
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="issue-list-reader")
        """The one thread that reads every query of this list. The cache keeps what a search
        has worked out (the index of the first issues' text it matches each key against,
        the hits) per connection, and so per thread, for as long as the data stands still:
        on Textual's pool, whichever of its threads took a key built it again, 27-68 ms at
        100,000 issues, for a key each of the first few searched on each thread (issue 18)."""
        self.set_reactive(IssueWindow.issue_query, query or IssueQuery())

    @property
    def page_cache_size(self) -> int:
        """Pages held in memory (bounded, whatever the number of issues)."""
        return len(self._pages)

    @property
    def frames_held(self) -> bool:
        """Whether a query change is holding back the app's frames (until its rows arrive)."""
        return self._frame_hold.held

    @property
    def visible_rows(self) -> int:
        """Rows that fit under the header."""
        return max(self.size.height - HEADER_LINES, 1)

    @property
    def rows_known(self) -> int:
        """The rows the list can show: the count, or while counting the rows read so far."""
        return self._rows_read if self.count is None else self.count

    def row(self, index: int) -> IssueRow | None:
        """Row `index` of the query, None while its page is on its way (or out of range)."""
        return self._pages.get(index) if index < self.rows_known else None

    def reload(self) -> None:
        """Re-read count and rows for the same query, anchored on `cursor_anchor()`.

        The rows on screen stay until the new ones arrive, so a reload does not flicker.
        """
        self._start_load(clear=False, anchor=self.cursor_anchor())

    def cursor_anchor(self) -> Anchor | None:
        """What a reload keeps in place (`IssueList`: the highlighted issue); None: nothing,
        the same rows by index."""
        return None

    def start_at_top(self) -> None:
        """A new query is shown from its first row."""
        self.scroll_to(y=0, animate=False)

    def keeps_anchor(self, old: IssueQuery, new: IssueQuery) -> bool:
        """Whether changing the query from `old` to `new` keeps the anchor rather than
        starting at the top (`IssueList`: a new sort of the same rows does)."""
        return False

    def on_mount(self) -> None:
        """Load the first screenful."""
        self._start_load(clear=True)

    def on_unmount(self) -> None:
        """Never leave the app's frames held, nor the reader's thread (and its connection) on."""
        self._frame_hold.release()
        if self._count_waits is not None:
            self._count_waits.set()
        self._reader.shutdown(wait=False, cancel_futures=True)

    def watch_issue_query(self, old: IssueQuery, new: IssueQuery) -> None:
        """Start over at the top for a new query, or at the anchor for a new sort of the same
        rows, drawn in one frame with its first rows."""
        anchor = self.cursor_anchor() if self.keeps_anchor(old, new) else None
        if anchor is None:
            self.start_at_top()
        if self.is_mounted:
            self._frame_hold.hold()
        self._start_load(clear=True, anchor=anchor)

    def watch_count(self, count: int | None) -> None:
        """Size the scroll area to the rows, plus the header. The lines are redrawn by
        `rows_arrived`, which follows every new count: a count that comes after its rows
        changes none of them (`IssueList` redraws only the lines that changed), and redrawing
        them all doubled the drawing of a new query (issue 18)."""
        self._size_scroll_area()

    def watch_scroll_y(self, old: float, new: float) -> None:
        """Fetch whatever rows scrolling brought into view."""
        super().watch_scroll_y(old, new)
        self.fetch_visible()

    def on_resize(self, _event: events.Resize) -> None:
        """A taller list may need more rows."""
        self._size_scroll_area()
        self.refresh()
        self.fetch_visible()

    def wanted_rows(self) -> tuple[int, int]:
        """The first and last row worth holding: the viewport plus margins."""
        top = self.scroll_offset.y
        return max(top - MARGIN, 0), top + self.visible_rows + MARGIN

    def rows_arrived(
        self, *, counted: bool, anchor: Anchor | None = None, position: int | None = None
    ) -> None:
        """Rows of the current query arrived (with a new count if `counted`, and where the
        issue of `anchor` stands now, if one was asked for): redraw."""
        self.refresh()

    def fetch_visible(self) -> None:
        """Fetch the pages near the viewport that are neither held nor on their way."""
        if self.count is None:
            return
        first, last = self.wanted_rows()
        if plan := self._pages.plan(first, min(last, self.count - 1)):
            self._load_rows(self._pages.generation, self.issue_query, *plan)

    def _size_scroll_area(self) -> None:
        """Make the virtual height the row count plus the header.

        Setting `virtual_size` lays out the whole screen again (every widget's place, then a
        full redraw): needed when the scrollbar appears or goes, since the rows' width changes,
        but a waste when only the count changed (most keystrokes of a search). Then only the
        scrollbar's proportions and the scroll limits follow, and the list redraws itself.

        While a new query is being counted the area only grows: the last count's proportions
        stay until the new count comes, a few milliseconds after the first rows. Sized to the
        rows read so far, the bar got a thumb over a hundred-odd rows for one frame and lost it
        the next, two repaints of its 37 lines in every key typed (3-5 ms at 100,000 issues)
        and a flicker, where a thumb over 100,000 rows or 3,000 looks the same.
        """
        height = self.rows_known + HEADER_LINES
        if self.count is None:
            height = max(height, self.virtual_size.height)
        size = Size(self.scrollable_content_region.width, height)
        if size == self.virtual_size:
            return
        viewport = self.container_size.height
        needs_bar = self.styles.overflow_y == "scroll" or (
            self.styles.overflow_y == "auto" and size.height > viewport
        )
        if not viewport or needs_bar != self.show_vertical_scrollbar:
            self.virtual_size = size
            return
        self.set_reactive(Widget.virtual_size, size)
        self.vertical_scrollbar.window_virtual_size = size.height
        self.scroll_y = self.validate_scroll_y(self.scroll_y)

    def _start_load(self, *, clear: bool, anchor: Anchor | None = None) -> None:
        """Count and fetch the first rows for the current query in one worker (around where
        the anchor's issue stands now, if one is given)."""
        generation = self._pages.restart(clear=clear)
        waiting, self._count_waits = self._count_waits, None
        if clear:
            self._show_placeholders_later()
        first_page, pages = self._pages.span(*self.wanted_rows())
        self._load_query(
            generation,
            self.issue_query,
            first_page,
            pages,
            anchor,
            self.visible_rows,
            rows_first=clear and anchor is None,
        )
        if waiting is not None:
            waiting.set()  # the count it waits for is cancelled: free the reader at once

    def _show_placeholders_later(self) -> None:
        """Redraw (as placeholders) the rows just dropped, unless their successors come first."""
        if self._placeholders is not None:
            self._placeholders.stop()
        self._placeholders = self.set_timer(PLACEHOLDER_DELAY, self.refresh)

    @on(_Loaded)
    def _store_rows(self, message: _Loaded) -> None:
        """Keep rows that belong to the query on screen; drop answers to an older one, and
        an anchored answer whose anchor the user moved away from while it was read (it is
        read again, anchored where the user is now)."""
        message.stop()
        if message.drawn is not None:
            self.call_after_refresh(message.drawn.set)
        fresh = message.fresh
        if fresh and message.generation == self._pages.generation and message.anchor:
            now = self.cursor_anchor()
            if now is not None and now.issue_id != message.anchor.issue_id:
                self._start_load(clear=False, anchor=now)
                return
        if not self._pages.accept(
            message.generation, message.first_page, message.pages, message.rows, fresh=fresh
        ):
            return
        if message.names != self.names:
            self.names = message.names
        if fresh:
            if self._placeholders is not None:
                self._placeholders.stop()
                self._placeholders = None
            self._error = None
            self._rows_read = message.first_page * self._pages.page_size + len(message.rows)
            if message.count is None and self.count is None:
                self._size_scroll_area()
            self.count = message.count
            self.post_message(self.Counted(self, message.count))
            if self._first_draw is not None:
                self.call_after_refresh(record_first_draw, self._first_draw)
                self._first_draw = None
        elif self.count is None and message.first_page * self._pages.page_size == self._rows_read:
            self._rows_read += len(message.rows)  # the margin pages, read before the count
            self._size_scroll_area()
        self.rows_arrived(counted=fresh, anchor=message.anchor, position=message.position)
        if fresh:
            self._frame_hold.release()
        self.fetch_visible()

    @on(_CountArrived)
    def _store_count(self, message: _CountArrived) -> None:
        """The count of the rows on screen; one of an older query or of older data is dropped
        (the status shown is the truth)."""
        message.stop()
        if message.generation != self._pages.generation or self.count is not None:
            return
        self.count = message.count
        self.post_message(self.Counted(self, message.count))
        self.rows_arrived(counted=True)
        self.fetch_visible()

    @on(_LoadFailed)
    def _show_failure(self, message: _LoadFailed) -> None:
        """Say in the list itself that reading failed; a later scroll or reload retries."""
        message.stop()
        if self._pages.abandon(message.generation):
            self._error = message.error
            self._frame_hold.release()
            self.refresh()
            if self.count is None:
                self.post_message(self.CountFailed(self))

    @work(thread=True, exclusive=True, exit_on_error=False, group="issue-list-query")
    def _load_query(
        self,
        generation: int,
        query: IssueQuery,
        first_page: int,
        pages: int,
        anchor: Anchor | None,
        visible: int,
        rows_first: bool = False,
    ) -> None:
        """Read the query on the list's own reader thread (`_reader`), this worker waiting
        for it (and cancelled as a worker is, which the read watches)."""
        worker = get_current_worker()
        try:
            self._reader.submit(
                self._read_query,
                worker,
                generation,
                query,
                first_page,
                pages,
                anchor,
                visible,
                rows_first,
            ).result()
        except (RuntimeError, CancelledError):  # the list is gone, and its reader with it
            return

    def _read_query(
        self,
        worker: Worker[None],
        generation: int,
        query: IssueQuery,
        first_page: int,
        pages: int,
        anchor: Anchor | None,
        visible: int,
        rows_first: bool,
    ) -> None:
        """Count the query, find the anchor, read the rows to show (`visible` rows from the
        anchor's line up, plus margins), off the event loop and in one snapshot of the data,
        so the three agree. With `rows_first` (a new query, at the top) the pages the
        viewport shows are posted first; once they are drawn, the margin pages, then the
        count, unless the rows were all there is. Read with the first rows, the margins
        doubled what each key read and built at the top of a 40-line list."""
        size = self._pages.page_size
        if worker.is_cancelled:
            return
        try:
            with self._source.snapshot():
                if rows_first:
                    shown = min(pages, self._pages.span(0, max(visible, 1) - 1)[1])
                    rows = self._source.window(query, first_page * size, shown * size)
                    short = first_page == 0 and len(rows) < shown * size
                    count = len(rows) if short else None
                    drawn = self._count_waits = threading.Event()
                    names = self._source.names()
                    self.post_message(
                        self._Loaded(
                            generation,
                            count,
                            first_page,
                            shown,
                            rows,
                            names,
                            fresh=True,
                            drawn=drawn,
                        )
                    )
                    if count is None and self._after(drawn, worker):
                        if pages > shown:
                            first_margin = first_page + shown
                            margin = self._source.window(
                                query, first_margin * size, (pages - shown) * size
                            )
                            self.post_message(
                                self._Loaded(
                                    generation, None, first_margin, pages - shown, margin, names
                                )
                            )
                        count = self._source.count(query, stop=lambda: worker.is_cancelled)
                        self.post_message(self._CountArrived(generation, count))
                    return
                count = self._source.count(query)
                position = None
                if anchor is not None:
                    position = self._source.position(query, anchor.issue_id, anchor.index)
                    moved = anchor.index if position is None or anchor.soft else position
                    top = moved - anchor.line
                    top = max(0, min(top, count - visible))
                    first_page, pages = self._pages.span(
                        max(top - MARGIN, 0), top + visible + MARGIN
                    )
                rows = self._source.window(query, first_page * size, pages * size)
                names = self._source.names()
        except Exception as error:
            if not worker.is_cancelled:
                self._report_failure(generation, error)
            return
        self.post_message(
            self._Loaded(
                generation, count, first_page, pages, rows, names, anchor, position, fresh=True
            )
        )

    @staticmethod
    def _after(drawn: threading.Event, worker: Worker[None]) -> bool:
        """Wait for the rows to be drawn, so the count does not take the core from drawing
        them; False when the worker was cancelled meanwhile (a newer query)."""
        while not drawn.wait(COUNT_WAIT_STEP):
            if worker.is_cancelled:
                return False
        return not worker.is_cancelled

    @work(thread=True, exclusive=True, exit_on_error=False, group="issue-list-rows")
    def _load_rows(self, generation: int, query: IssueQuery, first_page: int, pages: int) -> None:
        """Read rows scrolled into view off the event loop; a newer scroll supersedes it."""
        size = self._pages.page_size
        try:
            rows = self._source.window(query, first_page * size, pages * size)
            names = self._source.names()
        except Exception as error:
            self._report_failure(generation, error)
            return
        self.post_message(self._Loaded(generation, None, first_page, pages, rows, names))

    def _report_failure(self, generation: int, error: Exception) -> None:
        """Tell the app (a notice) and the list (a line in it) that a read failed."""
        reason = str(error) or type(error).__name__
        self.post_message(SourceFailed("read the issue list", reason))
        self.post_message(self._LoadFailed(generation, reason))
