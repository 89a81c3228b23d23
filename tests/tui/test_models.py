"""The pure models behind the list: queries, marks, the page cache, saved views."""

from __future__ import annotations

from cache import IssueFilter, IssueRow, IssueSort, SyncState
from issuefields import ASSIGNEE, LABELS, SORT_KEYS
from tracker_tui.data.marks import Marks
from tracker_tui.data.pages import PageCache
from tracker_tui.data.source import IssueQuery
from tracker_tui.data.views import (
    MAX_VIEWS,
    SavedView,
    query_from_dict,
    query_to_dict,
    view_from_dict,
    view_to_dict,
    with_view,
)


def rows(first: int, count: int) -> list[IssueRow]:
    return [
        IssueRow(f"iss_{index}", {"number": index, "title": f"issue {index}"}, (), SyncState.SYNCED)
        for index in range(first, first + count)
    ]


class TestIssueQuery:
    def test_is_hashable_and_equal_by_value(self) -> None:
        todo = IssueFilter(status=frozenset({"todo"}))
        first = IssueQuery(todo)
        assert first == IssueQuery(IssueFilter(status=frozenset({"todo"})))
        assert len({first, IssueQuery(IssueFilter(status=frozenset({"todo"})))}) == 1

    def test_next_sort_cycles_every_column_in_its_natural_direction(self) -> None:
        query = IssueQuery()
        seen = []
        for _ in SORT_KEYS:
            seen.append((query.sort.key, query.sort.descending))
            query = query.next_sort()
        assert [sort for sort, _ in seen] == list(SORT_KEYS)
        assert query.sort.key == "updated"
        assert dict(seen)["title"] is False
        assert dict(seen)["priority"] is True

    def test_flipped_and_with_sort(self) -> None:
        assert IssueQuery().flipped().sort.descending is False
        assert IssueQuery().with_sort("title").sort.descending is False
        assert IssueQuery().with_sort("title", descending=True).sort.descending is True

    def test_toggled_adds_then_removes(self) -> None:
        query = IssueQuery().toggled(LABELS, "bug")
        assert query.filter.label == {"bug"}
        assert query.toggled(LABELS, "bug").filter.label == frozenset()
        assert query.with_values(ASSIGNEE, frozenset({"usr_a"})).values(ASSIGNEE) == {"usr_a"}

    def test_filter_key_ignores_the_sort(self) -> None:
        query = IssueQuery(IssueFilter(text="x"), mine=True)
        assert query.with_sort("title").filter_key == query.filter_key
        assert query.is_filtered
        assert not IssueQuery().with_sort("title").is_filtered
        assert query.unfiltered() == IssueQuery()


class TestMarks:
    def test_explicit_marks_count_their_ids(self) -> None:
        marks = Marks().toggled("a").toggled("b").toggled("a")
        assert marks.ids == {"b"}
        assert marks.count(total=100) == 1
        assert marks.is_marked("b")
        assert not marks.is_marked("a")

    def test_all_in_query_costs_nothing_and_keeps_exceptions(self) -> None:
        marks = Marks.everything().toggled("a")
        assert marks.count(total=100_000) == 99_999
        assert not marks.is_marked("a")
        assert marks.is_marked("z")
        assert len(marks.ids) == 1

    def test_invert_swaps_the_meaning_of_ids(self) -> None:
        marks = Marks().marked(["a", "b"]).inverted()
        assert marks.count(total=10) == 8
        assert not marks.is_marked("a")
        assert marks.inverted() == Marks().marked(["a", "b"])
        assert Marks().inverted() == Marks.everything()

    def test_marking_a_range_never_unmarks(self) -> None:
        assert Marks().marked(["a"]).marked(["a", "b"]).ids == {"a", "b"}
        assert Marks.everything().toggled("a").marked(["a"]) == Marks.everything()


class TestPageCache:
    def test_plans_only_pages_neither_held_nor_in_flight(self) -> None:
        cache = PageCache(page_size=10, max_pages=100)
        generation = cache.restart(clear=True)
        assert cache.plan(0, 25) == (0, 3)
        assert cache.plan(0, 25) is None
        assert cache.accept(generation, 0, 3, rows(0, 30), fresh=True)
        assert cache.plan(5, 25) is None
        assert cache.plan(5, 35) == (3, 1)
        assert cache.get(17) == rows(17, 1)[0]
        assert cache.plan(10, 5) is None

    def test_drops_answers_of_an_older_generation(self) -> None:
        cache = PageCache(page_size=10)
        old = cache.restart(clear=True)
        new = cache.restart(clear=True)
        assert not cache.accept(old, 0, 1, rows(0, 10), fresh=True)
        assert cache.get(0) is None
        assert not cache.abandon(old)
        assert cache.abandon(new)

    def test_a_reload_keeps_rows_until_its_fresh_answer(self) -> None:
        cache = PageCache(page_size=10)
        cache.accept(cache.restart(clear=True), 0, 2, rows(0, 20), fresh=True)
        generation = cache.restart(clear=False)
        assert cache.get(15) is not None
        cache.accept(generation, 0, 1, rows(100, 10), fresh=True)
        assert cache.get(15) is None
        assert cache.get(0) == rows(100, 1)[0]

    def test_short_pages_are_stored_so_they_are_not_asked_for_again(self) -> None:
        cache = PageCache(page_size=10)
        generation = cache.restart(clear=True)
        cache.accept(generation, 0, 2, rows(0, 12), fresh=True)
        assert cache.get(11) is not None
        assert cache.get(12) is None
        assert cache.plan(0, 19) is None

    def test_evicts_the_least_recently_used_pages(self) -> None:
        cache = PageCache(page_size=10, max_pages=3)
        generation = cache.restart(clear=True)
        for page in range(3):
            cache.accept(generation, page, 1, rows(page * 10, 10), fresh=False)
        cache.plan(0, 9)
        cache.accept(generation, 3, 1, rows(30, 10), fresh=False)
        assert len(cache) == 3
        assert cache.get(0) is not None
        assert cache.get(10) is None


class TestSavedViews:
    def test_query_round_trips_through_plain_data(self) -> None:
        query = IssueQuery(
            IssueFilter(
                status=frozenset({"todo", "done"}),
                assignee=frozenset({"usr_a", None}),
                text="login",
            ),
            IssueSort("title", descending=False),
            mine=True,
        )
        data = query_to_dict(query)
        assert data["statuses"] == ["done", "todo"]
        assert data["assignees"] == ["-", "usr_a"]
        assert "labels" not in data
        assert query_from_dict(data) == query
        assert query_to_dict(IssueQuery()) == {}

    def test_reading_ignores_what_it_cannot_use(self) -> None:
        data = {"statuses": "todo", "sort": "nonsense", "descending": "yes", "extra": 1}
        assert query_from_dict(data) == IssueQuery()
        assert view_from_dict({"name": "  "}) is None
        assert view_from_dict({"name": "Mine", "query": "bad"}) == SavedView("Mine", IssueQuery())

    def test_view_round_trips(self) -> None:
        view = SavedView("Triage", IssueQuery(IssueFilter(priority=frozenset({"urgent"}))))
        assert view_from_dict(view_to_dict(view)) == view

    def test_saving_replaces_by_name_or_appends_up_to_nine(self) -> None:
        views = [SavedView(f"v{index}", IssueQuery()) for index in range(MAX_VIEWS)]
        replaced = with_view(views, SavedView("v3", IssueQuery(mine=True)))
        assert replaced is not None
        assert replaced[3].query.mine
        assert with_view(views, SavedView("new", IssueQuery())) is None
        assert with_view([], SavedView("new", IssueQuery())) == [SavedView("new", IssueQuery())]
