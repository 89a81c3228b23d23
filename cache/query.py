"""Windows and counts of the effective issue list, each served by one index.

A window is read in two steps. First the sort index alone yields `(sort key, rid)` for the
requested positions: every sort index also carries the filter columns, so skipping rows is a
walk over index pages that never touches the wide table rows. Then only the rows shown are
fetched by rid. A window past the middle of the list is read from the other end (same
index, walked backwards), so no window walks more than half the index.

Local edits are merged in without slowing that walk down. Let S be the server rows matching
the filter in index order, X the rows of S that the outbox shadows, and V the effective rows
(edited, created, ...) that match. The screen shows (S - X) + V in sort order. X and V are
small and known in Python with their exact sort keys (cache.ordering mirrors SQLite's
order), so fetching S at positions `[offset - |V|, offset + limit + |X|)` is enough to place
every row of the window exactly: a row's position is its rank in S, minus the X rows before
it, plus the V rows before it. Counts are `|S| - |X| + |V|`.

A search's matches sit in `temp.fts_hits`, which the walk probes. A shallow window of a
search alone needs only the matches among the first few hundred issues in its order, plus
the exact total; storing all of them (most of 100,000 for a common word) is what made such a
search slow, so cache.hits stores every match only when a filter or a deep walk needs them.
"""

from __future__ import annotations

import bisect
import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from cache import (
    anchors,
    fts,
    hits,
    labels,
    outbox,
    overlay,
    search_filter,
    search_syntax,
    search_text,
)
from cache.db import ThreadState
from cache.filtering import CompiledFilter, compile_filter
from cache.fts import TextQuery
from cache.models import Cell, IssueFilter, IssueRow, IssueSort, Resource, SyncState
from cache.ordering import ORDERINGS, Key, Ordering, before_ranges
from cache.overlay import ROW_FIELDS, Effective, Overlay, effective_row
from cache.resources import SPECS, json_list, labels_of
from issuefields import DEFAULT_SORT
from issuefields.frozen import Frozen

"""The columns a row of the list carries (long texts are read for the detail only)."""
ROW_COLUMNS = f"rid, id, {', '.join(ROW_FIELDS)}, extra -> 'labels'"
"""What a window reads per row: its rid and id, `ROW_FIELDS` by name, then the labels."""


class Query(Frozen):
    """One filter, ready to run against this thread's snapshot of the database.
    `text_matches` are the ids of overlaid issues whose effective text matches the search."""

    _fields = ("conn", "memo", "kept", "overlay", "compiled", "text_matches")
    __slots__ = _fields
    conn: sqlite3.Connection
    memo: dict[object, object]
    kept: dict[object, object]
    overlay: Overlay
    compiled: CompiledFilter
    text_matches: frozenset[str]

    def __init__(
        self,
        conn: sqlite3.Connection,
        memo: dict[object, object],
        kept: dict[object, object],
        overlay: Overlay,
        compiled: CompiledFilter,
        text_matches: frozenset[str],
    ) -> None:
        self._init(conn, memo, kept, overlay, compiled, text_matches)


def prepare(state: ThreadState, f: IssueFilter) -> Query:
    """Call inside a read transaction. Parsing the search text happens once per snapshot
    and text (memoised), evaluating it once per snapshot and need (see cache.hits)."""
    conn, memo = state.conn, state.memo()
    view = overlay.current(state)
    search = search_syntax.parse(f.text)
    text = _parsed(conn, memo, f.text, search)
    if search.qualifiers:
        f = search_filter.apply(conn, view, f, search)
    matches: frozenset[str] = frozenset()
    if text is not None:
        matches = _overlay_matches(conn, memo, view, text)
    bits = memo.get("label_bits")
    if not isinstance(bits, dict):
        bits = memo["label_bits"] = labels.load_bits(conn)
    return Query(conn, memo, state.kept, view, compile_filter(f, text, bits), matches)


def _parsed(
    conn: sqlite3.Connection, memo: dict[object, object], typed: str, search: search_syntax.Search
) -> TextQuery | None:
    """The search's text part: plain words as they always were, the rest (cache.search_text)
    only when typed."""
    if not typed:
        return None
    key = ("parsed", typed)
    if key not in memo:
        if search.is_plain:
            found = fts.parse(conn, typed)
            if found is not None:
                terms = search_text.label_terms(conn, found.words, found.prefix)
                found = found.replace(label_terms=terms) if terms else found
        else:
            found = search_text.text_query(conn, search)
        memo[key] = found
    kept = memo[key]
    return kept if isinstance(kept, TextQuery) else None


def _overlay_matches(
    conn: sqlite3.Connection, memo: dict[object, object], view: Overlay, text: TextQuery
) -> frozenset[str]:
    """Effective text of overlaid issues (title, description; each comment its own document)
    indexed once per snapshot, then matched by FTS5 like the server rows."""
    found = memo.get("overlay_docs")
    owners: dict[int, str] = found if isinstance(found, dict) else {}
    if not isinstance(found, dict):
        docs: list[tuple[int, str]] = []
        for effective in view.of(Resource.ISSUES).values():
            if effective.record is None:
                continue
            values = effective.values
            texts = [f"{values['title']}\n{values['description']}"]
            texts += comment_bodies(conn, view, effective.id)
            for body in texts:
                owners[len(docs) + 1] = effective.id
                docs.append((len(docs) + 1, body))
        fts.load_overlay_docs(conn, docs)
        memo["overlay_docs"] = owners
        memo["overlay_texts"] = docs
    if not text.plain:
        return _overlay_search(conn, memo, view, text, owners)
    return frozenset(owners[doc] for doc in fts.overlay_matches(conn, text) if doc in owners)


def _overlay_search(
    conn: sqlite3.Connection,
    memo: dict[object, object],
    view: Overlay,
    text: TextQuery,
    owners: dict[int, str],
) -> frozenset[str]:
    """Overlaid issues matching a search that is more than plain words (cache.search_text)."""
    docs = memo.get("overlay_texts")
    texts: dict[str, list[str]] = {}
    for doc, body in docs if isinstance(docs, list) else []:
        texts.setdefault(owners[doc], []).append(body)
    issues = {
        effective.id: (_number(effective.values.get("number")), labels_of(effective.record))
        for effective in view.of(Resource.ISSUES).values()
        if effective.record is not None
    }
    return search_text.overlay_matches(conn, text, owners, texts, issues)


def _number(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _labels(text: str | None) -> tuple[str, ...]:
    return () if text is None else labels_of({"labels": json.loads(text)})


def _server_row(row: Sequence[Any]) -> IssueRow:
    """A row read with `ROW_COLUMNS`."""
    return IssueRow(
        row[1], dict(zip(ROW_FIELDS, row[2:-1], strict=True)), _labels(row[-1]), SyncState.SYNCED
    )


def comment_bodies(conn: sqlite3.Connection, view: Overlay, issue_id: str) -> list[str]:
    """Effective comment texts of one issue, for matching a locally changed issue."""
    local = view.of(Resource.COMMENTS)
    bodies = [
        str(body)
        for key, body in conn.execute(
            f"SELECT id, body FROM {SPECS[Resource.COMMENTS].table} WHERE issue_id = ?",
            (issue_id,),
        )
        if key not in local
    ]
    for effective in local.values():
        if effective.record is not None and effective.values["issue_id"] == issue_id:
            bodies.append(str(effective.values["body"]))
    return bodies


def _visible(q: Query) -> list[Effective]:
    return [
        effective
        for effective in q.overlay.of(Resource.ISSUES).values()
        if effective.record is not None
        and q.compiled.accepts(
            effective.values, labels_of(effective.record), effective.id in q.text_matches
        )
    ]


def _shadowed_keys(q: Query, ordering: Ordering) -> list[Key]:
    """Sort keys of the server rows the overlay replaces and the filter would have shown."""
    rids = [
        e.server_rid for e in q.overlay.of(Resource.ISSUES).values() if e.server_rid is not None
    ]
    if not rids:
        return []
    condition = f"AND {q.compiled.where}" if q.compiled.where else ""
    rows = q.conn.execute(
        f"SELECT {', '.join(ordering.columns)} FROM issues "
        f"WHERE rid IN (SELECT value FROM json_each(?)) {condition}",
        (json_list(rids), *q.compiled.params),
    )
    return sorted(ordering.key(row) for row in rows)


def window_sql(
    compiled: CompiledFilter, sort: IssueSort, after: Sequence[Cell] | None = None
) -> tuple[str, tuple[object, ...]]:
    """The query of `(sort key, rid)` at `LIMIT ? OFFSET ?`, and its filter parameters;
    with `after` (the sort columns of a row), of the rows strictly after that one.

    In the default order a filter with a driving field (cache.filtering) reads the ranges of
    that field's index, merged in order by a compound SELECT, instead of walking the sort
    index and testing every entry it passes."""
    arms = _arms(compiled, sort, after)
    return (
        f"{' UNION ALL '.join(sql for sql, _ in arms)} "
        f"ORDER BY {ORDERINGS[sort.key].sql(sort.descending)} LIMIT ? OFFSET ?",
        tuple(param for _, params in arms for param in params),
    )


def after_queries(
    compiled: CompiledFilter, sort: IssueSort, after: Sequence[Cell]
) -> list[tuple[str, tuple[object, ...]]]:
    """The rows strictly after the row `after`, as queries at `LIMIT ? OFFSET ?` to run one
    after the other, in the walk's order. The rows after a row are those before it in the
    other direction (`ordering.before_ranges`): disjoint ranges of the order's index, the
    nearest last. Merged by one compound SELECT they cost 2.7 times as much a row skipped
    (37 ms against 14 for 250,000 rows); walked one by one, as the order's index has them.
    A driving filter's ranges interleave in the default order: those stay one merge."""
    if sort.key == DEFAULT_SORT.key and compiled.drive is not None:
        return [window_sql(compiled, sort, after)]
    order = ORDERINGS[sort.key].sql(sort.descending)
    return [
        (f"{sql} ORDER BY {order} LIMIT ? OFFSET ?", params)
        for sql, params in reversed(_arms(compiled, sort, after))
    ]


def _arms(
    compiled: CompiledFilter, sort: IssueSort, after: Sequence[Cell] | None
) -> list[tuple[str, tuple[object, ...]]]:
    """The SELECTs of `window_sql`'s compound, each with its parameters."""
    ordering = ORDERINGS[sort.key]
    columns = ", ".join(ordering.columns)
    drive = compiled.drive
    if sort.key == DEFAULT_SORT.key and drive is not None:
        bases = [(drive.index, where, params) for where, params in drive.arms]
    else:
        bases = [(ordering.index, compiled.scan_where, compiled.params)]
    ranges = [("", ())] if after is None else before_ranges(ordering, not sort.descending, after)
    arms: list[tuple[str, tuple[object, ...]]] = []
    for index, where, base_params in bases:
        for bound, values in ranges:
            condition = " AND ".join(part for part in (bound, where) if part)
            arms.append(
                (
                    f"SELECT {columns} FROM issues INDEXED BY {index}"
                    + (f" WHERE {condition}" if condition else ""),
                    (*values, *base_params),
                )
            )
    return arms


# Distinct masks are few (one per label combination in use), so hopping from one to the next
# along `issues_by_label_mask` and counting only the matching ones reads the matching index
# entries once instead of testing every issue's mask.
MASK_COUNT_SQL = (
    "WITH RECURSIVE masks(v) AS ("
    "SELECT min(label_mask) FROM issues INDEXED BY issues_by_label_mask "
    "UNION ALL SELECT (SELECT min(label_mask) FROM issues INDEXED BY issues_by_label_mask "
    "WHERE label_mask > masks.v) FROM masks WHERE masks.v IS NOT NULL) "
    "SELECT coalesce(sum((SELECT count(*) FROM issues INDEXED BY issues_by_label_mask "
    "WHERE label_mask = masks.v)), 0) FROM masks WHERE (masks.v & ?) != 0"
)


def _count_query(compiled: CompiledFilter) -> tuple[str, tuple[object, ...]]:
    """A search alone is counted from its hits, one label alone from the label table and
    several labels alone from the label masks; anything else lets the planner pick among
    the covering indexes."""
    if compiled.kinds == {"text"}:
        return f"SELECT count(*) FROM {fts.HITS_TABLE}", ()
    if compiled.kinds == {"label"} and len(compiled.filter.label) == 1:
        return "SELECT count(*) FROM issue_labels WHERE label = ?", tuple(compiled.filter.label)
    if compiled.kinds == {"label"} and compiled.label_mask is not None:
        return MASK_COUNT_SQL, (compiled.label_mask,)
    return f"SELECT count(*) FROM issues {compiled.sql}", compiled.params


def _search(q: Query, text: TextQuery, need: hits.Need | None) -> hits.Hits:
    return hits.evaluate(q.conn, q.memo, q.kept, q.overlay, q.compiled, text, need)


def count(q: Query, sort: IssueSort | None = None) -> int:
    """How many rows the effective list has. `sort` is that of a first window about to be
    read in the same snapshot: a search combined with other terms is then evaluated once for
    both. A search alone is counted without storing its matches (`hits.total`), after its
    first window if one was read (the list draws its rows before it counts; issue 18)."""
    key = ("count", q.compiled.filter)
    found = q.memo.get(key)
    if isinstance(found, int):
        return found
    text = q.compiled.text
    if text is not None and q.compiled.kinds == {"text"}:
        total = hits.total(q.conn, q.memo, q.kept, q.overlay, q.compiled, text)
    else:
        if text is not None:
            _search(q, text, None if sort is None else (sort, hits.FAST_REACH))
        total = int(q.conn.execute(*_count_query(q.compiled)).fetchone()[0])
    shadowed = _shadowed_keys(q, ORDERINGS[IssueSort().key])
    result = total - len(shadowed) + len(_visible(q))
    q.memo[key] = result
    return result


SHALLOW_ROWS = 1000
"""A window that ends within this many rows of the top is read forward without counting the
list first: the count only tells a window which end it is nearer, and counting 1,000,000
issues reads a whole index (8-10 ms of CPU once it no longer fits the page cache,
`db.CACHE_SIZE_KIB`), ten times what the first window itself costs (issue 18)."""


def window(q: Query, sort: IssueSort, offset: int, limit: int) -> list[IssueRow]:
    """Rows `[offset, offset + limit)` of the effective list in `sort` order."""
    offset, limit = max(0, offset), max(0, limit)
    _walk_hits(q, sort, offset + limit)
    if offset + limit <= SHALLOW_ROWS:
        return _window(q, sort, offset, limit) if limit else []
    total = _total(q)
    end = min(total, offset + limit)
    if offset >= end:
        return []
    if offset + end > total:
        flipped = IssueSort(sort.key, not sort.descending)
        return _window(q, flipped, total - end, end - offset)[::-1]
    return _window(q, sort, offset, end - offset)


def _total(q: Query) -> int:
    """`count(q)`, its server rows' part kept beside the anchors while the issues table
    stands still (cache.anchors): counting a million issues reads a whole index, 8-10 ms."""
    found = q.memo.get(("count", q.compiled.filter))
    if isinstance(found, int):
        return found
    sql, params = _count_query(q.compiled)
    server = anchors.total(
        q.conn, q.compiled, (sql, params), lambda: int(q.conn.execute(sql, params).fetchone()[0])
    )
    if server is None:
        return count(q)
    shadowed = _shadowed_keys(q, ORDERINGS[IssueSort().key])
    return server - len(shadowed) + len(_visible(q))


def _before(keys_ascending: Sequence[Key], key: Key, descending: bool) -> int:
    """How many of `keys` come before `key` in the window's direction."""
    if descending:
        return len(keys_ascending) - bisect.bisect_right(keys_ascending, key)
    return bisect.bisect_left(keys_ascending, key)


def _walk_hits(q: Query, sort: IssueSort, reach: int) -> None:
    """Search hits fit for walking `sort` to position `reach`: the walk may pass one server
    row for each overlaid issue on the way."""
    if q.compiled.text is not None:
        _search(q, q.compiled.text, (sort, reach + len(q.overlay.of(Resource.ISSUES))))


def _server_keys(q: Query, sort: IssueSort, start: int, count: int) -> list[tuple[Key, int]]:
    """`(sort key, rid)` of the server rows at `[start, start + count)` of S. A search with
    few matches is read from its matches and sorted here (ordering keys sort exactly as
    SQLite does): walking the sort index would test every issue to find them. No anchor
    shortens a walk of fewer than `anchors.SPACING` rows: those leave the anchors (and the
    file's, cache.anchor_file) unread, as a command's first page does."""
    ordering = ORDERINGS[sort.key]
    if hits.few(q.memo, q.compiled.text):
        rows = q.conn.execute(
            f"SELECT {', '.join(ordering.columns)} FROM issues "
            f"WHERE rid IN (SELECT rid FROM {fts.HITS_TABLE}) AND {q.compiled.scan_where}",
            q.compiled.params,
        )
        keyed = sorted(((ordering.key(row), int(row[-1])) for row in rows), reverse=sort.descending)
        return keyed[start : start + count]
    found = anchors.book(q.conn, sort, q.compiled) if start >= anchors.SPACING else None
    after, skip = (None, start)
    if found is not None:
        after, skip = anchors.walk(*found, start, _stepper(q, sort))
    found_rows = read_after(q.conn, q.compiled, sort, after, skip, count)
    return [(ordering.key(row), int(row[-1])) for row in found_rows]


def read_after(
    conn: sqlite3.Connection,
    compiled: CompiledFilter,
    sort: IssueSort,
    after: anchors.Cells | None,
    skip: int,
    limit: int,
) -> list[tuple[Any, ...]]:
    """Rows `[skip, skip + limit)` of S after the row `after` (of S itself for None), read
    range by range (`after_queries`): a range with too few rows to skip into is counted,
    up to what is left to skip, and passed over."""
    if after is None:
        sql, params = window_sql(compiled, sort)
        return conn.execute(sql, (*params, limit, skip)).fetchall()
    rows: list[tuple[Any, ...]] = []
    for sql, params in after_queries(compiled, sort, after):
        if len(rows) >= limit:
            break
        found = conn.execute(sql, (*params, limit - len(rows), skip)).fetchall()
        if skip and not found:
            held = conn.execute(f"SELECT count(*) FROM ({sql})", (*params, skip, 0))
            skip -= int(held.fetchone()[0])
            continue
        rows += found
        skip = 0
    return rows


def _stepper(
    q: Query, sort: IssueSort
) -> Callable[[anchors.Cells | None, int], anchors.Cells | None]:
    """How `anchors.walk` reads the next anchor: `rows - 1` rows on from the one before."""

    def step(after: anchors.Cells | None, rows: int) -> anchors.Cells | None:
        found = read_after(q.conn, q.compiled, sort, after, rows - 1, 1)
        return tuple(found[0]) if found else None

    return step


def _window(q: Query, sort: IssueSort, offset: int, limit: int) -> list[IssueRow]:
    _walk_hits(q, sort, offset + limit)
    ordering, descending = ORDERINGS[sort.key], sort.descending
    x_keys = _shadowed_keys(q, ordering)
    visible = [(ordering.key_of(e.values), e) for e in _visible(q)]
    visible.sort(key=lambda item: item[0], reverse=descending)
    v_keys = sorted(key for key, _ in visible)
    start = max(0, offset - len(visible))
    wanted = offset + limit + len(x_keys) - start
    fetched = _server_keys(q, sort, start, wanted)
    shadowed = {e.server_rid for e in q.overlay.of(Resource.ISSUES).values()}
    placed: dict[int, int | Effective] = {}
    for index, (key, rid) in enumerate(fetched):
        if rid in shadowed:
            continue
        position = (
            start + index - _before(x_keys, key, descending) + _before(v_keys, key, descending)
        )
        if offset <= position < offset + limit:
            placed[position] = rid
    s_keys = sorted(key for key, _ in fetched)
    exhausted = len(fetched) < wanted
    for rank, (key, effective) in enumerate(visible):
        ahead = _before(s_keys, key, descending)
        if (ahead == 0 and start > 0) or (ahead == len(fetched) and not exhausted):
            continue
        position = start + ahead - _before(x_keys, key, descending) + rank
        if offset <= position < offset + limit:
            placed[position] = effective
    rids = [item for item in placed.values() if isinstance(item, int)]
    rows = {
        row[0]: _server_row(row)
        for row in q.conn.execute(
            f"SELECT {ROW_COLUMNS} FROM issues WHERE rid IN (SELECT value FROM json_each(?))",
            (json_list(rids),),
        )
    }
    return [
        rows[item] if isinstance(item, int) else effective_row(item)
        for _, item in sorted(placed.items())
    ]


def plans(q: Query, sort: IssueSort) -> list[str]:
    """EXPLAIN QUERY PLAN lines of the window and count queries, then of the count behind
    `position`, for tests and diagnosis."""
    fts.ensure_temp_tables(q.conn)
    lines: list[str] = []
    walk, walk_params = window_sql(q.compiled, sort)
    ordering = ORDERINGS[sort.key]
    before, before_params = _before_sql(
        q, ordering, sort.descending, [0] * len(ordering.columns), 9
    )
    for sql, params in (
        (walk, (*walk_params, 50, 0)),
        _count_query(q.compiled),
        (before, tuple(before_params)),
    ):
        lines += [str(row[3]) for row in q.conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
    return lines


def position(q: Query, sort: IssueSort, issue_id: str, near: int | None = None) -> int | None:
    """Where `issue_id` stands in the effective list in `sort` order (what `window` would
    put at that offset), or None when the filter does not show it.

    The server rows on one side of it are counted on the sort index, one range per sort
    column (`ordering.before_ranges`), so the cost is the index entries walked, as for a
    window at that offset; the overlaid rows are then placed as `window` places them. The
    count starts from the end nearer to `near` (where the issue was last seen, if known) and
    walks at most half the list from there before counting from the other end instead."""
    ordering, descending = ORDERINGS[sort.key], sort.descending
    total = count(q)
    _walk_hits(q, sort, total)
    cells = _cells_of(q, ordering, outbox.resolve_id(q.conn, issue_id))
    if cells is None:
        return None
    key = ordering.key(cells)
    x_keys = _shadowed_keys(q, ordering)
    v_keys = sorted(ordering.key_of(e.values) for e in _visible(q))
    anchored = _anchored_before(q, sort, cells)
    if anchored is not None:
        return anchored - _before(x_keys, key, descending) + _before(v_keys, key, descending)
    server_total = total + len(x_keys) - len(v_keys)
    from_end = near is not None and 2 * near > total
    half = server_total // 2 + 1
    walked = _server_before(q, ordering, descending != from_end, cells, half)
    if walked < half:
        before = server_total - walked - _in_server(q, ordering, cells) if from_end else walked
    elif from_end:
        before = _server_before(q, ordering, descending, cells, None)
    else:
        after = _server_before(q, ordering, not descending, cells, None)
        before = server_total - after - _in_server(q, ordering, cells)
    return before - _before(x_keys, key, descending) + _before(v_keys, key, descending)


def _anchored_before(q: Query, sort: IssueSort, cells: Sequence[Cell]) -> int | None:
    """How many server rows come strictly before `cells` in `sort` order, counted on from
    the last kept anchor before them (cache.anchors) over at most `2 * SPACING` rows; None
    when none is kept that near (`position` then counts as it did before anchors)."""
    found = anchors.book(q.conn, sort, q.compiled)
    if found is None:
        return None
    book, token = found
    ordering = ORDERINGS[sort.key]
    target = ordering.key(cells)
    anchor = book.last_before(token, target)
    if anchor is None:
        return None
    rows, after = anchor
    cap = 2 * anchors.SPACING
    queries = (
        [window_sql(q.compiled, sort)] if after is None else after_queries(q.compiled, sort, after)
    )
    passed = 0
    for sql, params in queries:
        for row in q.conn.execute(sql, (*params, cap - passed, 0)):
            if not _ahead(ordering.key(row), target, sort.descending):
                return rows + passed
            passed += 1
        if passed >= cap:
            return None
    return rows + passed


def _ahead(key: Key, target: Key, descending: bool) -> bool:
    return key > target if descending else key < target


def _cells_of(q: Query, ordering: Ordering, issue_id: str) -> list[Cell] | None:
    """The sort columns of the issue as the list shows it, None when the filter hides it."""
    effective = q.overlay.of(Resource.ISSUES).get(issue_id)
    if effective is not None:
        if effective.record is None or not q.compiled.accepts(
            effective.values, labels_of(effective.record), effective.id in q.text_matches
        ):
            return None
        return [effective.values[name] for name in ordering.columns]
    condition = f"AND {q.compiled.where}" if q.compiled.where else ""
    row = q.conn.execute(
        f"SELECT {', '.join(ordering.columns)} FROM issues WHERE id = ? {condition}",
        (issue_id, *q.compiled.params),
    ).fetchone()
    return None if row is None else list(row)


def _in_server(q: Query, ordering: Ordering, cells: list[Cell]) -> int:
    """1 when a server row matching the filter has exactly these sort columns (its own,
    unless a local edit moved it), else 0. Every order ends in `rid`, so one lookup."""
    condition = f"AND {q.compiled.where}" if q.compiled.where else ""
    row = q.conn.execute(
        f"SELECT {', '.join(ordering.columns)} FROM issues WHERE rid = ? {condition}",
        (cells[-1], *q.compiled.params),
    ).fetchone()
    return int(row is not None and ordering.key(row) == ordering.key(cells))


def _server_before(
    q: Query, ordering: Ordering, descending: bool, cells: list[Cell], limit: int | None
) -> int:
    """How many server rows matching the filter come strictly before `cells` when walking
    in `descending` order (shadowed ones included, as in S), counting at most `limit`."""
    sql, params = _before_sql(q, ordering, descending, cells, limit)
    return int(q.conn.execute(sql, params).fetchone()[0])


def _before_sql(
    q: Query, ordering: Ordering, descending: bool, cells: Sequence[Cell], limit: int | None
) -> tuple[str, list[object]]:
    """The count behind `_server_before`: one walk of a range of the sort index per sort
    column, stopping at `limit`. A search with few matches is counted from its matches."""
    index = "" if hits.few(q.memo, q.compiled.text) else f"INDEXED BY {ordering.index}"
    condition = f"AND {q.compiled.scan_where}" if q.compiled.scan_where else ""
    arms: list[str] = []
    params: list[object] = []
    for where, values in before_ranges(ordering, descending, cells):
        arms.append(f"SELECT 1 FROM issues {index} WHERE {where} {condition}")
        params += [*values, *q.compiled.params]
    if not arms:
        return "SELECT 0", []
    capped = " LIMIT ?" if limit is not None else ""
    params += [limit] if limit is not None else []
    return f"SELECT count(*) FROM ({' UNION ALL '.join(arms)}{capped})", params
