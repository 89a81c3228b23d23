"""The chip bar above the list: the active view, each active filter, the sort, and the counts.

It only displays; the screen sets its reactives. Assignee and project filters hold ids, so the
screen also hands over the labels it loaded for them (an id shows as itself until then).
"""

from __future__ import annotations

from typing import ClassVar

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from tracker_tui.data.source import FILTER_FIELDS, FilterField, IssueQuery
from tracker_tui.formatting import count_label, priority_label, status_label

CHIP_STYLE = "$text-primary on $primary-muted"
SEARCH_STYLE = "$text-accent on $accent-muted"
VIEW_STYLE = "bold $text-secondary on $secondary-muted"


class FilterChips(Widget):
    """One line saying what the list shows and how it is ordered."""

    DEFAULT_CSS: ClassVar[str] = """
    FilterChips {
        height: 1;
        padding: 0 1;
        background: $surface;
        color: $text-muted;
    }
    """

    issue_query: reactive[IssueQuery] = reactive(IssueQuery)
    """The query whose filters are shown as chips."""

    labels: reactive[dict[tuple[FilterField, str], str]] = reactive(dict)
    """Display labels of filter values by (field, value), from the source's distinct values."""

    view_name: reactive[str | None] = reactive(None)
    """The saved view the query came from, while it is unchanged."""

    count: reactive[int | None] = reactive(None)
    """Rows matching the query, None while counting."""

    marked: reactive[int] = reactive(0)
    """Rows marked for a bulk edit."""

    def render(self) -> Content:
        """View, chips, search text, then counts and the sort."""
        query = self.issue_query
        parts: list[str | tuple[str, str]] = []
        if self.view_name:
            parts += [(f" {self.view_name} ", VIEW_STYLE), " "]
        for field in FILTER_FIELDS:
            if values := query.values(field):
                shown = ", ".join(sorted(self._label(field, value) for value in values))
                parts += [(f" {field}: {shown} ", CHIP_STYLE), " "]
        if query.mine:
            parts += [(" mine ", CHIP_STYLE), " "]
        if query.text:
            parts += [(f" “{query.text}” ", SEARCH_STYLE), " "]
        if not query.is_filtered:
            parts += ["all issues "]
        counted = "counting…" if self.count is None else count_label(self.count, "issue")
        parts += [" ", (counted, "$text")]
        if self.marked:
            parts += [" · ", (f"{self.marked:,} marked", "bold $text-accent")]
        arrow = "▼" if query.descending else "▲"
        parts += [" · ", f"sort: {query.sort} {arrow}"]
        return Content.assemble(*parts)

    def _label(self, field: FilterField, value: str) -> str:
        """How one filter value reads in its chip."""
        if field == "status":
            return status_label(value)
        if field == "priority":
            return priority_label(value, none="no priority")
        return self.labels.get((field, value), value)
