"""The issue list screen: the list, the chips saying what it shows, search, sort, filters and
saved views.

The screen owns the query (`issue_query`) and pushes it down to the list and the chip bar; it
hears back from the list through the list's messages. The write actions (edit, create, bulk
edit) are posted as app-wide requests; in read-only mode their keys, and the list's marking
keys, are hidden (`ReadOnlyScreen`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, Static

from cache import IssueRow, search_syntax
from issuefields import FILTERS, SORT_KEYS
from tracker_tui.data.columns import ColumnSetup, default_setup
from tracker_tui.data.source import FilterValue, IssueQuery, IssueSource
from tracker_tui.data.views import MAX_VIEWS, SavedView, with_view
from tracker_tui.key_names import hint_keys
from tracker_tui.messages import (
    BulkEditorRequested,
    BulkEditRequested,
    CreateIssueRequested,
    EditIssueRequested,
    EditorEditRequested,
    SearchTyped,
    SourceFailed,
    ViewsChanged,
)
from tracker_tui.screens.issue_list_commands import IssueListCommands
from tracker_tui.screens.read_only import ReadOnlyScreen
from tracker_tui.widgets.filter_chips import FilterChips
from tracker_tui.widgets.issue_list import IssueList
from tracker_tui.widgets.marker_legend import MarkerLegend
from tracker_tui.widgets.search_field import SearchField
from tracker_tui.widgets.status_bar import StatusBar
from tracker_tui.widgets.steady_footer import SteadyFooter

if TYPE_CHECKING:
    from tracker_tui.screens.filter_dialog import Choices, FilterDialog

SEARCH_HINT = 'Search titles… "a phrase" -word status:todo priority:high assignee:me label:bug #12'
"""The search field's placeholder: the syntax at a glance (cache.search_syntax)."""


class IssueListScreen(ReadOnlyScreen[None]):
    """Browse, search, sort and filter issues; mark them for bulk edits."""

    HELP_GROUP: ClassVar[str] = "Issues screen"
    AUTO_FOCUS = "IssueList"
    CSS_PATH = "issue_list.tcss"
    COMMANDS = {IssueListCommands}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "search", "Search", id="list.search"),
        Binding("escape", "clear_search", "Clear search", show=False, id="list.clear_search"),
        Binding("f", "filter", "Filter", id="list.filter"),
        Binding("F", "clear_filters", "Clear filters", show=False, id="list.clear_filters"),
        Binding("m", "toggle_mine", "Only mine", show=False, id="list.toggle_mine"),
        Binding("s", "next_sort", "Sort", id="list.next_sort"),
        Binding("S", "flip_sort", "Reverse sort", show=False, id="list.flip_sort"),
        Binding("o", "pick_sort", "Sort by…", show=False, id="list.pick_sort"),
        Binding("e", "edit", "Edit", id="list.edit"),
        Binding("E", "edit_in_editor", "Edit in $EDITOR", show=False, id="list.edit_in_editor"),
        Binding("c", "create", "New", id="list.create"),
        Binding("b", "bulk_edit", "Bulk edit", id="list.bulk_edit"),
        Binding(
            "B", "bulk_in_editor", "Bulk edit in $EDITOR", show=False, id="list.bulk_in_editor"
        ),
        Binding("ctrl+s", "save_view", "Save view", show=False, id="list.save_view"),
        Binding("v", "manage_views", "Saved views…", show=False, id="list.manage_views"),
        *(
            Binding(
                str(slot),
                f"apply_view({slot - 1})",
                "Saved view",
                show=False,
                id=f"list.view_{slot}",
            )
            for slot in range(1, MAX_VIEWS + 1)
        ),
    ]

    WRITE_ACTIONS: ClassVar[frozenset[str]] = frozenset(
        {
            "edit",
            "edit_in_editor",
            "create",
            "bulk_edit",
            "bulk_in_editor",
            "undo_bulk",
            *IssueList.MARK_ACTIONS,
        }
    )
    """The screen's, the list's and the app's actions that change issues."""

    issue_query: reactive[IssueQuery] = reactive(IssueQuery, init=False, repaint=False)
    """The filter and sort shown; the list and the chip bar follow it (and repaint what they
    change: repainting the screen itself would redraw every widget on every keystroke)."""

    view_name: reactive[str | None] = reactive(None, init=False, repaint=False)
    """The saved view last applied, until the query is changed by hand."""

    class _ChoicesLoaded(Message):
        """The filter values the source offers arrived from the worker."""

        __slots__ = ("choices",)

        def __init__(self, choices: Choices) -> None:
            self.choices = choices
            super().__init__()

    def __init__(
        self,
        source: IssueSource,
        *,
        views: list[SavedView],
        profile: str,
        read_only: bool,
        clock: Callable[[], datetime],
        columns: ColumnSetup | None = None,
    ) -> None:
        super().__init__()
        self._source = source
        self._columns = columns or default_setup()
        self.views = list(views)
        self._profile = profile
        self.read_only = read_only
        self._clock = clock
        self.choices: Choices = {}
        self._filter_dialog: FilterDialog | None = None

    @property
    def shown_issue(self) -> IssueRow | None:
        """The highlighted issue (`Y` copies it, `O` opens it in a browser)."""
        return self.query_one(IssueList).highlighted_row

    def compose(self) -> ComposeResult:
        """Chips, the search field (hidden until /), the list, status bar and footer."""
        yield FilterChips(id="chips")
        yield SearchField(placeholder=SEARCH_HINT, id="search", classes="-hidden")
        yield Static("", id="search-problems", classes="-hidden")
        yield IssueList(
            self._source,
            clock=self._clock,
            read_only=self.read_only,
            columns=self._columns,
            id="issues",
        )
        yield MarkerLegend(id="legend")
        yield StatusBar(self._profile, read_only=self.read_only, id="status")
        yield SteadyFooter(held=True)

    def on_mount(self) -> None:
        """Load the filter values, and reload everything whenever the cache changes."""
        self.watch(self.app, "cache_revision", self._reload, init=False)
        self.watch(self.app, "key_permissions", self._permissions_learned, init=False)
        self._load_choices()

    def _permissions_learned(self, _permissions: object) -> None:
        """The key turned out not to write issues: its write keys go from here on."""
        read_only = bool(getattr(self.app, "read_only", self.read_only))
        if read_only and not self.read_only:
            self.read_only = True
            self._write_keys = None
            self.query_one(IssueList).go_read_only()
            self.query_one(StatusBar).read_only = True
            self.refresh_bindings()

    def watch_issue_query(self, query: IssueQuery) -> None:
        """Hand the new query to the list, the chips and the search field.

        A change made by hand (not by applying a view) leaves the view. The chips say
        "counting…" from the moment the filter changes: the count shown is the query's own.
        """
        issues, chips = self.query_one(IssueList), self.query_one(FilterChips)
        if issues.issue_query.filter_key != query.filter_key:
            chips.count = None
            chips.count_failed = False
        issues.issue_query = query
        chips.issue_query = query
        search = self.query_one("#search", Input)
        if search.value.strip() != query.filter.text:
            with search.prevent(Input.Changed):
                search.value = query.filter.text
        problems = search_syntax.parse(query.filter.text).problems
        line = self.query_one("#search-problems", Static)
        text = " ".join(problems)
        if text != line.content:  # an update lays out the whole screen again
            line.update(text)
        line.set_class(not problems, "-hidden")
        if self.view_name and all(
            view.name != self.view_name or view.query != query for view in self.views
        ):
            self.view_name = None

    def watch_view_name(self, name: str | None) -> None:
        """Name the applied view in the chip bar."""
        self.query_one(FilterChips).view_name = name

    @on(IssueList.Counted)
    def show_count(self, message: IssueList.Counted) -> None:
        """Show how many issues match; the footer's keys once the rows are drawn (in the next
        frame: the first one waited on building them, docs/architecture.md#start-up)."""
        chips = self.query_one(FilterChips)
        chips.count = message.count
        chips.count_failed = False
        self.call_after_refresh(self.query_one(SteadyFooter).show_keys)

    @on(IssueList.CountFailed)
    def show_count_failed(self) -> None:
        """Say the count is unknown rather than still coming (the status shown is the truth)."""
        self.query_one(FilterChips).count_failed = True

    @on(IssueList.MarksChanged)
    def show_marked(self, message: IssueList.MarksChanged) -> None:
        """Show how many issues are marked."""
        self.query_one(FilterChips).marked = message.count
        self.query_one(MarkerLegend).marked = message.count

    @on(IssueList.SortClicked)
    def sort_by_clicked_column(self, message: IssueList.SortClicked) -> None:
        """A click on a column's heading sorts by it; a second click reverses the order."""
        query = self.issue_query
        if query.sort.key == message.key:
            self.issue_query = query.flipped()
        else:
            self.issue_query = query.with_sort(message.key)

    @on(Input.Changed, "#search")
    def search_as_typed(self, event: Input.Changed) -> None:
        """Filter on every keystroke: stale counts are dropped, so typing never waits.

        A change the field has already moved past (keys typed in a burst) is skipped: its
        query would be stale at once, and writing its text back into the field (as a change
        of query does) would undo the keys typed since.
        """
        if event.value != event.input.value:
            return
        self.issue_query = self.issue_query.with_filter(text=event.value.strip())
        self.post_message(SearchTyped(event.value.strip()))

    @on(Input.Submitted, "#search")
    def keep_search(self) -> None:
        """Enter keeps the search and goes back to the list."""
        self.query_one(IssueList).focus()

    def action_search(self) -> None:
        """Show the search field and type into it."""
        search = self.query_one("#search", Input)
        search.remove_class("-hidden")
        search.focus()

    def action_clear_search(self) -> None:
        """Drop the search text, hide the field, and go back to the list."""
        self.query_one("#search", Input).add_class("-hidden")
        self.issue_query = self.issue_query.with_filter(text="")
        self.query_one(IssueList).focus()

    def action_filter(self) -> None:
        """Open the filter picker over the current query (each dialog is imported when first
        opened: docs/architecture.md#start-up). The picker is built once and kept (installed,
        so that closing it does not remove it): see `FilterDialog.reopen`."""
        from tracker_tui.screens.filter_dialog import FilterDialog

        dialog = self._filter_dialog
        if dialog is None:
            dialog = FilterDialog(self.issue_query, self.choices, on_apply=self._apply_query)
            self.app.install_screen(dialog, f"issue-list-filter-{id(self)}")
            self._filter_dialog = dialog
        else:
            dialog.reopen(self.issue_query, self.choices)
        self.app.push_screen(dialog, self._apply_query)

    def action_clear_filters(self) -> None:
        """Show every issue again, keeping the sort."""
        self.issue_query = self.issue_query.unfiltered()

    def action_toggle_mine(self) -> None:
        """Show only my issues, or everyone's again."""
        self.issue_query = self.issue_query.replace(mine=not self.issue_query.mine)

    def action_filter_value(self, word: str, value: FilterValue) -> None:
        """Add or remove one filter value (the command palette offers these)."""
        for field in FILTERS:
            if field.word == word:
                self.issue_query = self.issue_query.toggled(field, value)

    def action_next_sort(self) -> None:
        """Sort by the next column, in its natural direction."""
        self.issue_query = self.issue_query.next_sort()

    def action_flip_sort(self) -> None:
        """Reverse the sort direction."""
        self.issue_query = self.issue_query.flipped()

    def action_sort_by(self, key: str) -> None:
        """Sort by `key` in its natural direction (the command palette offers these)."""
        if key in SORT_KEYS:
            self.issue_query = self.issue_query.with_sort(key)

    def action_pick_sort(self) -> None:
        """Open the sort picker."""
        from tracker_tui.screens.sort_dialog import SortDialog

        self.app.push_screen(SortDialog(self.issue_query), self._apply_query)

    def action_apply_view(self, index: int) -> None:
        """Show saved view number `index + 1`."""
        if index >= len(self.views):
            save = hint_keys(self, "list.save_view")
            self.notify(f"No view saved on {index + 1} ({save} saves one).", severity="warning")
            return
        view = self.views[index]
        self.issue_query = view.query
        self.view_name = view.name

    def action_save_view(self) -> None:
        """Ask for a name and save the current filter and sort under it."""
        from tracker_tui.screens.save_view_dialog import SaveViewDialog

        hint = f"({len(self.views)}/{MAX_VIEWS} used)"
        dialog = SaveViewDialog(self.view_name or "", slots_hint=hint)
        self.app.push_screen(dialog, self._save_view)

    def action_manage_views(self) -> None:
        """Show, rename, reorder and delete the saved views."""
        from tracker_tui.screens.views_dialog import ViewsDialog

        dialog = ViewsDialog(
            self.views,
            self._views_changed,
            current=self.view_name,
            save_key=hint_keys(self, "list.save_view"),
        )
        self.app.push_screen(dialog, self._view_picked)

    def _views_changed(self, views: list[SavedView]) -> None:
        """A view was renamed, moved or deleted: keep the views, and tell the app (which
        persists them); the chip names the applied view by its new name, or none."""
        old_names = {view.name for view in self.views}
        self.views = list(views)
        if self.view_name is not None and all(view.name != self.view_name for view in views):
            fresh = [
                view.name
                for view in views
                if view.name not in old_names and view.query == self.issue_query
            ]
            self.view_name = fresh[0] if fresh else None
        self.post_message(ViewsChanged(list(views)))

    def _view_picked(self, index: int | None) -> None:
        if index is not None:
            self.action_apply_view(index)

    def action_edit(self) -> None:
        """Ask the app to edit the highlighted issue (which the list then keeps highlighted)."""
        issues = self.query_one(IssueList)
        if (row := issues.highlighted_row) is not None:
            issues.chosen = True
            self.post_message(EditIssueRequested(row.id))

    def action_edit_in_editor(self) -> None:
        """Ask the app to edit the highlighted issue as a template in `$EDITOR`."""
        issues = self.query_one(IssueList)
        if (row := issues.highlighted_row) is not None:
            issues.chosen = True
            self.post_message(EditorEditRequested(row.id))

    def action_bulk_in_editor(self) -> None:
        """Ask the app to open the marked issues (none marked: the whole query, after asking)
        as a table in `$EDITOR`."""
        self.post_message(BulkEditorRequested(self.query_one(IssueList).selection))

    def action_create(self) -> None:
        """Ask the app to create an issue."""
        self.post_message(CreateIssueRequested())

    def action_bulk_edit(self) -> None:
        """Ask the app to change every marked issue."""
        selection = self.query_one(IssueList).selection
        if selection.count == 0:
            mark, every = hint_keys(self, "list.mark"), hint_keys(self, "list.mark_all")
            self.notify(f"Nothing is marked ({mark} marks, {every} marks all).", severity="warning")
            return
        self.post_message(BulkEditRequested(selection))

    @on(_ChoicesLoaded)
    def keep_choices(self, message: _ChoicesLoaded) -> None:
        """Offer the values in the filter picker and label the chips with them."""
        self.choices = message.choices
        self.query_one(FilterChips).labels = {
            (field.word, value): label
            for field, pairs in message.choices.items()
            for value, label in pairs
        }

    @work(thread=True, exclusive=True, exit_on_error=False, group="filter-choices")
    def _load_choices(self) -> None:
        """Read every field's values off the event loop."""
        try:
            choices: Choices = {field: self._source.distinct_values(field) for field in FILTERS}
        except Exception as error:
            self.post_message(
                SourceFailed("read the filter values", str(error) or type(error).__name__)
            )
            return
        self.post_message(self._ChoicesLoaded(choices))

    def _reload(self) -> None:
        """The cache changed: re-read the rows and the filter values."""
        self.query_one(IssueList).reload()
        self._load_choices()

    def _apply_query(self, query: IssueQuery | None) -> None:
        """Take a dialog's query, unless it was cancelled."""
        if query is not None:
            self.issue_query = query

    def _save_view(self, name: str | None) -> None:
        """Store the view the dialog named, and tell the app (which persists views)."""
        if name is None:
            return
        views = with_view(self.views, SavedView(name, self.issue_query))
        if views is None:
            self.notify(
                f"All {MAX_VIEWS} view slots are used; save under an existing name to replace it.",
                severity="warning",
            )
            return
        self.views = views
        self.view_name = name
        self.post_message(ViewsChanged(list(views)))
        slot = next(index for index, view in enumerate(views) if view.name == name) + 1
        self.notify(f"Saved view “{name}” on {slot}.")
