"""The chip bar above the list: the active view, each active filter and search qualifier, the
sort, and the counts.

It only displays; the screen sets its reactives. Assignee and project filters hold ids, so the
screen also hands over the labels it loaded for them (an id shows as itself until then).
"""

from __future__ import annotations

from typing import ClassVar

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from cache import search_syntax
from issuefields import FILTERS, Field, Kind
from tracker_tui.data.source import FilterValue, IssueQuery
from tracker_tui.formatting import count_label

CHIP_STYLE = "$text-primary on $primary-muted"
SEARCH_STYLE = "$text-accent on $accent-muted"
PROBLEM_STYLE = "bold $text-error on $error-muted"
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

    labels: reactive[dict[tuple[str, FilterValue], str]] = reactive(dict)
    """Display labels of filter values by (field's word, value), from the source's distinct
    values."""

    view_name: reactive[str | None] = reactive(None)
    """The saved view the query came from, while it is unchanged."""

    count: reactive[int | None] = reactive(None)
    """Rows matching the query, None while counting."""

    count_failed: reactive[bool] = reactive(False)
    """Reading the list failed before `count` was known: it is not being counted any more."""

    marked: reactive[int] = reactive(0)
    """Rows marked for a bulk edit."""

    def render(self) -> Content:
        """View, chips, search text, then counts and the sort."""
        query = self.issue_query
        parts: list[str | tuple[str, str]] = []
        if self.view_name:
            parts += [(f" {self.view_name} ", VIEW_STYLE), " "]
        for field in FILTERS:
            if values := query.values(field):
                shown = ", ".join(sorted(self._label(field, value) for value in values))
                parts += [(f" {field.word}: {shown} ", CHIP_STYLE), " "]
        if query.mine:
            parts += [(" mine ", CHIP_STYLE), " "]
        if query.filter.text:
            parts += self._search_chips(query.filter.text)
        if not query.is_filtered:
            parts += ["all issues "]
        if self.count is not None:
            counted = count_label(self.count, "issue")
        else:
            counted = "count unknown" if self.count_failed else "counting…"
        parts += [" ", (counted, "$text")]
        if self.marked:
            parts += [" · ", (f"{self.marked:,} marked", "bold $text-accent")]
        arrow = "▼" if query.sort.descending else "▲"
        parts += [" · ", f"sort: {query.sort.key} {arrow}"]
        return Content.assemble(*parts)

    def _search_chips(self, text: str) -> list[str | tuple[str, str]]:
        """The search taken apart: each qualifier a chip like the filter's, the words, phrases
        and exclusions as the search chip, a warning when part of it was not understood."""
        search = search_syntax.parse(text)
        parts: list[str | tuple[str, str]] = []
        for word, values in search.qualifiers:
            if values:
                parts += [(f" {word}: {', '.join(values)} ", CHIP_STYLE), " "]
        typed: list[str] = [f"#{search.number}"] if search.exact_number else []
        typed += [f"“{' '.join(search.words)}”"] if search.words else []
        typed += [f"“{phrase}”" for phrase in search.phrases]
        typed += [f"-{word}" for word in search.excluded]
        if typed:
            parts += [(f" {' '.join(typed)} ", SEARCH_STYLE), " "]
        if search.problems:
            count = len(search.problems)
            parts += [(f" ⚠ {count} not understood ", PROBLEM_STYLE), " "]
        return parts

    def _label(self, field: Field, value: FilterValue) -> str:
        """How one filter value reads in its chip: a choice by its label, an id by the name
        loaded for it (itself until then)."""
        if value is None:
            return field.empty
        if field.kind is Kind.CHOICE:
            return field.label_of(value)
        return self.labels.get((field.word, value), value)
