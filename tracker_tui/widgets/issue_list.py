"""The issue list: as fast with 100,000 issues as with 10.

A Line API widget (`IssueWindow` loads the rows near the viewport); this adds what the user sees
and does: a fixed header showing the sort, one line per issue, a cursor that stays in view, and
marks for bulk edits that cost the same for 3 rows or for every row of the query.

Once the user has picked an issue (moved the cursor, clicked, marked or opened a row), the
cursor belongs to that issue, not to a line: when the cache changes (a pull, a colleague's edit,
the user's own) or the sort does, the rows are read again around wherever that issue now
stands, and it stays highlighted on the same line of the screen, so `enter`, `e` and `space`
act on the issue the user chose. An issue the query no longer shows hands the cursor to the row
that took its place. Until then (a list just opened, searched or filtered) the cursor follows
its issue only while the issue stays in view, and the screen holds still: a colleague's edit
that lifts another issue to the top moves the highlight down with the issue the user was
looking at (`enter` a moment later opens that one, not the newcomer), while a first sync's
pages, arriving at the top by the hundred, push it out of view and leave the cursor on its
line, showing what arrives. Marks are issue ids too, so they follow their issues the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import ClassVar, NamedTuple

from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region
from textual.message import Message
from textual.reactive import reactive
from textual.scrollbar import ScrollBar
from textual.strip import Strip

from cache import IssueRow, search_syntax
from tracker_tui.data.columns import ColumnSetup
from tracker_tui.data.marks import MarkedSelection, Marks
from tracker_tui.data.source import IssueQuery, IssueSource
from tracker_tui.widgets.issue_columns import (
    DEFAULT_SETUP,
    Column,
    RowStyles,
    layout_columns,
    render_header,
    render_message,
    render_placeholder,
    render_row,
    sort_at,
    time_texts,
)
from tracker_tui.widgets.issue_window import HEADER_LINES, MARGIN, Anchor, IssueWindow
from tracker_tui.widgets.plain_lines import PlainLines
from tracker_tui.widgets.steady_scrollbar import steady_vertical_scrollbar
from tracker_tui.widgets.strip_cycles import install as keep_strips_acyclic

ROW_STRIPS = 512
"""Rows drawn kept as they were drawn, by what they show: a backspace, a filter toggled back or
a re-read brings back rows drawn a moment before, and a new query's screen of them cost a
key 20-35 ms to draw afresh at 100,000 issues (issue 18). About 14 screens of 37 rows, 3.9 MiB
when full (7.8 KiB a row: the strip, its filtered copy and their caches, measured with
`tracemalloc`)."""

NUMBER_LOOKAHEAD = 100
"""How many of a number search's first rows are looked through for the issue of that number
(the rest are issues that mention it)."""


class _RenderPass(NamedTuple):
    """The width, columns, styles and time shared by the lines of one drawing pass."""

    width: int
    columns: list[Column]
    styles: RowStyles
    now: datetime
    full: int
    """The width of a drawn line: `width` plus the cell under the scrollbar, if it shows
    (Textual pads a shorter line to it, copying it)."""
    top: int
    """The row at the top of the viewport (the scroll offset, read once per pass)."""


class _Line(NamedTuple):
    """What one line of the list shows, in plain values: two equal ones draw the same line, so
    a re-read can tell the lines it changed from those it brought back as they were."""

    kind: str
    """"header", "message", "row", "placeholder" or "blank"."""
    width: int
    styles: RowStyles
    text: str = ""
    """A message's words; the header's sort and its direction."""
    row: IssueRow | None = None
    names: Mapping[str, str] | None = None
    times: tuple[str, ...] = ()
    marked: bool = False
    cursor: bool = False


class IssueList(IssueWindow, can_focus=True, inherit_bindings=False):
    """The issues matching `issue_query`, one per line, with a cursor and marks for bulk edits."""

    HELP_GROUP: ClassVar[str] = "Issue list"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "move(1)", "Next issue", show=False, id="list.next"),
        Binding("k,up", "move(-1)", "Previous issue", show=False, id="list.previous"),
        Binding("g,home", "move_to_first", "First issue", show=False, id="list.first"),
        Binding("G,end", "move_to_last", "Last issue", show=False, id="list.last"),
        Binding("pagedown", "move_pages(1)", "Page down", show=False, id="list.page_down"),
        Binding("pageup", "move_pages(-1)", "Page up", show=False, id="list.page_up"),
        Binding(
            "ctrl+d", "move_pages(0.5)", "Half page down", show=False, id="list.half_page_down"
        ),
        Binding("ctrl+u", "move_pages(-0.5)", "Half page up", show=False, id="list.half_page_up"),
        Binding("enter", "open", "Open", id="list.open"),
        Binding("space", "toggle_mark", "Mark", id="list.mark"),
        Binding("shift+down", "extend_marks(1)", "Mark downwards", show=False, id="list.mark_down"),
        Binding("shift+up", "extend_marks(-1)", "Mark upwards", show=False, id="list.mark_up"),
        Binding("asterisk", "mark_all", "Mark all", show=False, id="list.mark_all"),
        Binding(
            "exclamation_mark", "invert_marks", "Invert marks", show=False, id="list.invert_marks"
        ),
        Binding("x", "clear_marks", "Clear marks", show=False, id="list.clear_marks"),
    ]

    MARK_ACTIONS: ClassVar[frozenset[str]] = frozenset(
        {"toggle_mark", "extend_marks", "mark_all", "invert_marks", "clear_marks"}
    )
    """Marks are the first step of a bulk edit: read-only mode hides their keys."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "issue-list--header",
        "issue-list--cursor",
        "issue-list--marked",
        "issue-list--muted",
        "issue-list--closed",
        "issue-list--urgent",
        "issue-list--high",
        "issue-list--pending",
        "issue-list--conflict",
        "issue-list--failed",
    }

    DEFAULT_CSS = """
    IssueList {
        width: 1fr;
        height: 1fr;
        overflow-x: hidden;
        overflow-y: scroll;
        scrollbar-size-vertical: 1;
        background: $surface;
        & > .issue-list--header { background: $panel; color: $text-muted; text-style: bold; }
        & > .issue-list--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
        }
        &:focus > .issue-list--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
        & > .issue-list--marked { color: $text-accent; background: $accent-muted; }
        & > .issue-list--muted { color: $text-muted; }
        & > .issue-list--closed { color: $text-disabled; }
        & > .issue-list--urgent { color: $text-error; text-style: bold; }
        & > .issue-list--high { color: $text-warning; }
        & > .issue-list--pending { color: $text-warning; }
        & > .issue-list--conflict { color: $text-error; text-style: bold; }
        & > .issue-list--failed { color: $text-error; text-style: reverse; }
    }
    """

    cursor: reactive[int] = reactive(0, init=False)
    """Index of the highlighted row in the query's order (moved with its issue on reloads)."""

    marks: reactive[Marks] = reactive(Marks, init=False)
    """The issues marked for a bulk edit, by id: kept across reloads, sorts, searches and
    filters, except "all" (and its inversion), which belongs to the filter it was made in."""

    class Highlighted(Message):
        """The cursor came to rest on another (loaded) issue."""

        __slots__ = ("issue_id", "issue_list")

        def __init__(self, issue_list: IssueList, issue_id: str) -> None:
            self.issue_list = issue_list
            self.issue_id = issue_id
            super().__init__()

        @property
        def control(self) -> IssueList:
            """The list the cursor moved in (for `@on(..., selector)`)."""
            return self.issue_list

    class Opened(Message):
        """The user pressed enter on (or double-clicked) an issue."""

        __slots__ = ("issue_id", "issue_list")

        def __init__(self, issue_list: IssueList, issue_id: str) -> None:
            self.issue_list = issue_list
            self.issue_id = issue_id
            super().__init__()

        @property
        def control(self) -> IssueList:
            """The list the issue was opened from."""
            return self.issue_list

    class MarksChanged(Message):
        """The marks changed; `count` is how many rows they cover."""

        __slots__ = ("count", "issue_list")

        def __init__(self, issue_list: IssueList, count: int) -> None:
            self.issue_list = issue_list
            self.count = count
            super().__init__()

        @property
        def control(self) -> IssueList:
            """The list whose marks changed."""
            return self.issue_list

    class SortClicked(Message):
        """The user clicked the heading of the column that sorts by `key`."""

        __slots__ = ("issue_list", "key")

        def __init__(self, issue_list: IssueList, key: str) -> None:
            self.issue_list = issue_list
            self.key = key
            super().__init__()

        @property
        def control(self) -> IssueList:
            """The list whose heading was clicked."""
            return self.issue_list

    def __init__(
        self,
        source: IssueSource,
        *,
        clock: Callable[[], datetime],
        query: IssueQuery | None = None,
        read_only: bool = False,
        columns: ColumnSetup = DEFAULT_SETUP,
        id: str | None = None,
    ) -> None:
        super().__init__(source, query=query, id=id)
        keep_strips_acyclic()
        self._clock = clock
        self._columns = columns
        self._read_only = read_only
        self._highlighted: str | None = None
        self.chosen = False
        """Whether the user picked the highlighted issue since the query began: from then on
        reloads and new sorts keep it highlighted (before, the cursor stays on the first row)."""
        self._pass: _RenderPass | None = None
        self._wanted_number: int | None = None
        """The issue number a `#123` search asked for, until the query's first rows came."""
        self._styles: RowStyles | None = None
        self._drawn: dict[int, _Line] = {}
        """What each line of the viewport showed when it was last drawn."""
        self._styles_cache = PlainLines()
        self._row_strips: LRUCache[tuple[object, ...], Strip] = LRUCache(ROW_STRIPS)
        self._row_strips_for: tuple[object, ...] = ()
        """What every kept row strip was drawn with (widths, styles, names; the columns are
        the list's for good): when any of it changes, they are drawn afresh."""

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """A scrollbar that the count's changing on every key does not repaint."""
        return steady_vertical_scrollbar(self)

    @property
    def highlighted_row(self) -> IssueRow | None:
        """The row under the cursor, None while its page is loading or the list is empty."""
        return self.row(self.cursor)

    @property
    def selection(self) -> MarkedSelection:
        """The marks with the query they belong to, for a bulk edit."""
        return MarkedSelection(self.issue_query, self.marks, self.marks.count(self.count or 0))

    def watch_issue_query(self, old: IssueQuery, new: IssueQuery) -> None:
        """Marks made one by one survive any change of query; "all" goes with its filter,
        and says so. The cursor stays on its issue through a new sort, else starts at the
        top."""
        if old.filter_key != new.filter_key and self.marks.all_in_query:
            self.marks = Marks()
            self.notify("Marks cleared: they were “all issues” of the previous filter.")
        if old.filter_key != new.filter_key:
            self._wanted_number = search_syntax.parse(new.filter.text).number
        super().watch_issue_query(old, new)

    def keeps_anchor(self, old: IssueQuery, new: IssueQuery) -> bool:
        """A new sort of the same rows keeps the highlighted issue; other changes do not."""
        return old.filter_key == new.filter_key

    def cursor_anchor(self) -> Anchor | None:
        """The highlighted issue, where it is and on which line of the screen (soft until the
        user picked it); None while its row is not loaded (then reloads keep the cursor's
        index)."""
        row = self.highlighted_row
        if row is None:
            return None
        line = self.cursor - self.scroll_offset.y
        return Anchor(row.id, self.cursor, line, soft=not self.chosen)

    def start_at_top(self) -> None:
        """A new query starts with the cursor on its first row."""
        super().start_at_top()
        self.set_reactive(IssueList.cursor, 0)
        self._highlighted = None
        self.chosen = False

    def validate_cursor(self, cursor: int) -> int:
        """Keep the cursor on a row."""
        return max(0, min(cursor, (self.rows_known or 1) - 1))

    def watch_cursor(self, old: int, new: int) -> None:
        """Redraw the two rows involved, keep the cursor in view, say where it is."""
        self.refresh_line(old + HEADER_LINES)
        self.refresh_line(new + HEADER_LINES)
        top = self.scroll_offset.y
        if new < top:
            self.scroll_to(y=new, animate=False)
        elif new >= top + self.visible_rows:
            self.scroll_to(y=new - self.visible_rows + 1, animate=False)
        self.fetch_visible()
        self._announce_highlight()

    def watch_marks(self, marks: Marks) -> None:
        """Redraw the visible marks and tell the screen how many there are."""
        self.refresh()
        self.post_message(self.MarksChanged(self, marks.count(self.count or 0)))

    def wanted_rows(self) -> tuple[int, int]:
        """The viewport and the cursor (which may have jumped ahead of a scroll), plus margins."""
        first, last = super().wanted_rows()
        return max(min(first, self.cursor - MARGIN), 0), max(last, self.cursor + MARGIN)

    def rows_arrived(
        self, *, counted: bool, anchor: Anchor | None = None, position: int | None = None
    ) -> None:
        """Keep the cursor on its issue (or on a row), refresh the mark count of "all",
        announce the cursor row."""
        if counted:
            if anchor is not None:
                self._follow(anchor, position)
            self.cursor = self.cursor
            self._find_wanted_number()
            if self.marks.all_in_query:
                self.post_message(self.MarksChanged(self, self.marks.count(self.count or 0)))
        self._refresh_changed_lines()
        self._announce_highlight()

    def _refresh_changed_lines(self) -> None:
        """Redraw only the lines that would now read differently from what they show, each
        run of them in one refresh (a new query's rows are one run: a refresh per line was
        a region, a repaint request and a dirty mark each, 37 times per key).

        A re-read (the cache changed) mostly brings back the rows on screen as they were: a
        pull's page changes rows far from the viewport. Drawing all of them again cost the
        event loop most of a re-read at 100,000 issues.
        """
        render_pass = self._render_pass()
        height = self.scrollable_content_region.height
        start: int | None = None
        for y in range(height + 1):
            changed = y < height and self._drawn.get(y) != self._line(y, render_pass)
            if changed and start is None:
                start = y
            elif not changed and start is not None:
                self.refresh_lines(render_pass.top + start, y - start)
                start = None

    def _find_wanted_number(self) -> None:
        """A search for `#123` or `123` puts the issue with that number on the top line,
        highlighted, when it is among the first rows read (enter then opens it)."""
        wanted, self._wanted_number = self._wanted_number, None
        if wanted is None:
            return
        for index in range(min(self.rows_known, NUMBER_LOOKAHEAD)):
            row = self.row(index)
            if row is not None and row.cells.get("number") == wanted:
                self.scroll_to(y=index, animate=False, immediate=True)
                self.cursor = index
                return

    def _follow(self, anchor: Anchor, position: int | None) -> None:
        """Put the cursor on the anchor's issue at `position`, on the line it was on; when the
        issue is gone, on the row now at its old place (the one before, at the end)."""
        count = self.count or 0
        if anchor.soft:
            top = max(0, min(anchor.index - anchor.line, count - self.visible_rows))
            self.scroll_to(y=top, animate=False, immediate=True)
            if position is None or not top <= position < top + self.visible_rows:
                position = anchor.index
            self.cursor = max(0, min(position, count - 1))
            return
        index = anchor.index if position is None else position
        top = max(0, min(index - anchor.line, count - self.visible_rows))
        self.scroll_to(y=top, animate=False, immediate=True)
        self.cursor = max(0, min(index, count - 1))

    def render_lines(self, crop: Region) -> list[Strip]:
        """Draw the lines in `crop`, resolving styles, columns and the time once for all of
        them: per line, those cost more than drawing the row itself."""
        self._pass = self._render_pass()
        try:
            return super().render_lines(crop)
        finally:
            self._pass = None

    def render_line(self, y: int) -> Strip:
        """Line `y` of the viewport: the header, a row, a placeholder or a message."""
        render_pass = self._pass or self._render_pass()
        line = self._drawn[y] = self._line(y, render_pass)
        width, styles = line.width, line.styles
        full = render_pass.full
        if line.kind == "header":
            sort = self.issue_query.sort
            strip = render_header(
                render_pass.columns, sort.key, sort.descending, styles, fill=full - width
            )
        elif line.kind == "message":
            strip = render_message(line.text, width, styles.base + styles.muted)
        elif line.row is not None:
            return self._row_strip(line, render_pass)
        elif line.kind == "placeholder":
            strip = render_placeholder(full, cursor=line.cursor, styles=styles)
        else:
            strip = Strip.blank(full, styles.base)
        return strip.adjust_cell_length(full, styles.base)

    def _row_strip(self, line: _Line, render_pass: _RenderPass) -> Strip:
        """A row's line, drawn again only when it would read differently from when it was
        last drawn: Textual also keeps what it derives from a strip (its filtered copy, its
        cuts) in the strip, so a row kept costs neither."""
        row = line.row
        assert row is not None
        width, full, styles = line.width, render_pass.full, line.styles
        drawn_with = (width, full, styles, self.names)
        kept = self._row_strips_for
        if kept[:2] != drawn_with[:2] or not _same(kept[2:], drawn_with[2:]):
            self._row_strips.clear()
            self._row_strips_for = drawn_with
        key = (
            row.id,
            tuple(row.cells.items()),
            row.labels,
            row.sync_state,
            row.searched,
            line.times,
            line.marked,
            line.cursor,
        )
        strip = self._row_strips.get(key)
        if strip is None:
            strip = render_row(
                row,
                render_pass.columns,
                now=render_pass.now,
                names=self.names,
                marked=line.marked,
                cursor=line.cursor,
                styles=styles,
                fill=full - width,
            ).adjust_cell_length(full, styles.base)
            self._row_strips.set(key, strip)
        return strip

    def _line(self, y: int, render_pass: _RenderPass) -> _Line:
        """What line `y` of the viewport shows now."""
        width, columns, styles, now, _full, top = render_pass
        index = top + y - HEADER_LINES
        if y < HEADER_LINES:
            sort = self.issue_query.sort
            return _Line("header", width, styles, f"{sort.key} {sort.descending}")
        if y == HEADER_LINES and not self.rows_known:
            return _Line("message", width, styles, self._empty_text())
        if (row := self.row(index)) is not None:
            return _Line(
                "row",
                width,
                styles,
                row=row,
                names=self.names,
                times=time_texts(row, columns, now),
                marked=self.marks.is_marked(row.id),
                cursor=index == self.cursor,
            )
        if index < self.rows_known:
            return _Line("placeholder", width, styles, cursor=index == self.cursor)
        return _Line("blank", width, styles)

    def notify_style_update(self) -> None:
        """The CSS changed (focus, theme): resolve the row styles again on the next draw."""
        super().notify_style_update()
        self._styles = None

    def _render_pass(self) -> _RenderPass:
        """What every line of one drawing pass shares.

        The row styles are kept from one pass to the next (every `refresh` empties Textual's
        own cache of them, and resolving ten component styles cost more than a row): they are
        resolved again when the CSS changes, or the background they lie on.
        """
        width = self.scrollable_content_region.width
        base = self.rich_style
        styles = self._styles
        if styles is None or styles.base != base:
            styles = self._styles = RowStyles.resolve(
                base, lambda name: self.get_component_rich_style(f"issue-list--{name}")
            )
        return _RenderPass(
            width,
            layout_columns(width, self._columns),
            styles,
            self._clock(),
            self.content_region.width,
            self.scroll_offset.y,
        )

    def on_click(self, event: events.Click) -> None:
        """Put the cursor on the clicked row; a double click opens it. A click on a column's
        heading asks the screen to sort by it."""
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y < HEADER_LINES:
            width = self.scrollable_content_region.width
            if (key := sort_at(layout_columns(width), offset.x)) is not None:
                self.post_message(self.SortClicked(self, key))
            return
        self.chosen = True
        self.cursor = self.scroll_offset.y + offset.y - HEADER_LINES
        if event.chain == 2:
            self.action_open()

    def action_move(self, rows: int) -> None:
        """Move the cursor down (positive) or up (negative) by `rows`."""
        self.chosen = True
        self.cursor += rows

    def action_move_pages(self, pages: float) -> None:
        """Move the cursor by screenfuls (a half for ctrl+d and ctrl+u)."""
        self.chosen = True
        self.cursor += int(pages * self.visible_rows) or (1 if pages > 0 else -1)

    def action_move_to_first(self) -> None:
        """Jump to the first issue."""
        self.chosen = True
        self.cursor = 0

    def action_move_to_last(self) -> None:
        """Jump to the last issue (its page is fetched on arrival); while the list is still
        counted, to the last one read."""
        self.chosen = True
        self.cursor = (self.rows_known or 1) - 1

    def action_open(self) -> None:
        """Open the highlighted issue."""
        if (row := self.highlighted_row) is not None:
            self.chosen = True
            self.post_message(self.Opened(self, row.id))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Read-only mode hides the marking keys (marks only serve bulk edits)."""
        return not (self._read_only and action in self.MARK_ACTIONS)

    def go_read_only(self) -> None:
        """Changes turned off while the list is shown (the key may not write): marks go."""
        self._read_only = True
        self.marks = Marks()
        self.refresh_bindings()

    def action_toggle_mark(self) -> None:
        """Mark or unmark the highlighted issue."""
        if (row := self.highlighted_row) is not None:
            self.chosen = True
            self.marks = self.marks.toggled(row.id)

    def action_extend_marks(self, direction: int) -> None:
        """Mark the highlighted issue and the next one up or down, moving onto it."""
        if (row := self.highlighted_row) is None:
            return
        self.chosen = True
        self.cursor += direction
        following = self.highlighted_row
        self.marks = self.marks.marked([row.id] + ([following.id] if following else []))

    def action_mark_all(self) -> None:
        """Mark every issue the query matches, however many."""
        self.marks = Marks.everything()

    def action_invert_marks(self) -> None:
        """Unmark what is marked and mark the rest of the query."""
        self.marks = self.marks.inverted()

    def action_clear_marks(self) -> None:
        """Unmark everything, the issues other searches showed included."""
        self.marks = Marks()

    def _announce_highlight(self) -> None:
        """Post `Highlighted` once per issue the cursor comes to rest on, once it is loaded."""
        row = self.highlighted_row
        if row is not None and row.id != self._highlighted:
            self._highlighted = row.id
            self.post_message(self.Highlighted(self, row.id))

    def _empty_text(self) -> str:
        """What the list says when it has no row to show."""
        if self._error is not None:
            return f"Could not read issues: {self._error}"
        if self.count is None:
            return "Loading…"
        return "No issues match." if self.issue_query.is_filtered else "No issues yet."


def _same(these: tuple[object, ...], those: tuple[object, ...]) -> bool:
    """Whether two tuples hold the very same objects (styles and names are replaced, never
    changed in place, so identity says they are unchanged, without comparing them)."""
    return len(these) == len(those) and all(a is b for a, b in zip(these, those, strict=True))
