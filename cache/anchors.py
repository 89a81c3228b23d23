"""Positions kept along the sort indexes, so that a window deep in the list skips few rows.

SQLite's b-trees cannot find the row at position n without stepping over the n before it: a
window at offset 500,000 of a million issues walked half an index (23-45 ms of CPU; issue
18). A walk towards a deep window now stops about every `SPACING` rows of the server rows S
of its filter, in its order, and keeps that row's sort columns with the number of rows of S
up to and including it (an anchor); a later window starts after the nearest anchor before
it (a keyset condition, cache.query's `after_queries`) and skips fewer than `SPACING` rows.
The number of rows of S is kept beside them: counting a million issues reads a whole index.

Anchors describe the issues table at one revision: the last row of `issue_moves`, the log
that triggers on `issues` append to in every insert, update and delete (with the row's old
sort and filter columns; migration `issue_moves`). A reader whose transaction sees a later
revision brings the shelf up to it from the log: each row that changed since, as it was and
as it is, moves the anchors after it by one (when the filter takes it), as it moves the
total. An anchor's sort columns stay a boundary between rows whether or not its own row is
still there, so only counts change. Past `MOVES_REPAIRED` changes, or when the log no
longer holds the shelf's revision (pruned, or a change rolled back: each log row carries a
random tag), the shelf starts empty. Other writes (the outbox, sync state, drafts) leave
the anchors standing: local edits are laid over S by cache.query, not part of it.

A search's matches hang on FTS and the comments, a label without a bit on `issue_labels`:
filters with either keep no anchors. One shelf per database file, shared by every thread of
the process (the app reads each window on a new worker thread) under a lock; a reader in an
older snapshot than the shelf's reads without anchors.

The unfiltered list's anchors and number of rows are also kept in the file, by the pull
(cache.anchor_file, cache.anchor_keeping): a book or total that the shelf does not hold is
taken from there the first time a reader needs it, brought from the revision it was saved at
to the reader's through the log as the shelf itself would be, or left out when it cannot be.
So a new process (each CLI command, each app start) does not walk to its first deep window
of each order again, and no read writes the file.
"""

from __future__ import annotations

import bisect
import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from cache import anchor_file
from cache.filtering import CompiledFilter
from cache.models import Cell, IssueSort
from cache.ordering import ORDERINGS, Key
from cache.resources import labels_of
from cache.schema import MOVED_COLUMNS

SPACING = 4096
"""Rows a window may skip after its anchor (~0.3 ms of index entries)."""

STRIDE = 16 * SPACING
"""Rows between the anchors a first walk far from any keeps on its way (see `walk`)."""

BOOKS_KEPT = 32
"""Orders and filters kept per file, the least recently used dropped first (a book holds
about one anchor per `SPACING` rows: 245 for a million issues)."""

FILES_KEPT = 4
"""Cache files whose shelves a process keeps (one per profile it opened; tests open many)."""

MOVES_REPAIRED = 5000
"""Changes since the shelf's revision past which it starts empty rather than repaired (a
first pull's pages; repairing costs about a microsecond a change and anchor)."""

Cells = tuple[Cell, ...]
Token = tuple[int, int]
Values = dict[str, Any]
"""A row's `MOVED_COLUMNS` by name, its labels decoded."""
Moves = list[tuple[Values | None, Values | None]]
Signs = tuple[list[Key], list[int]]


class Book:
    """Anchors of one filter in one order, by position: `(rows, cells)`, the sort columns
    (`ordering.columns`, ending in `rid`) of a boundary and how many rows of S are at or
    before it in the walk's order."""

    def __init__(self, shelf: Shelf, sort: IssueSort, compiled: CompiledFilter) -> None:
        self.shelf = shelf
        self.sort = sort
        self.compiled = compiled
        self.anchors: list[tuple[int, Cells, Key]] = []
        """`(rows, cells, ordering.key(cells))`, by `rows`."""

    def nearest(self, token: Token, start: int) -> tuple[int, Cells | None] | None:
        """The last anchor at or before position `start` (`(0, None)`: the top of the
        list), None when the shelf moved to another revision than the reader's."""
        with _LOCK:
            if self.shelf.token != token:
                return None
            index = bisect.bisect_right(self.anchors, start, key=lambda anchor: anchor[0]) - 1
            return (0, None) if index < 0 else self.anchors[index][:2]

    def last_before(self, token: Token, key: Key) -> tuple[int, Cells | None] | None:
        """The last anchor strictly before the row of sort key `key` in the walk's order
        (`(0, None)`: the top of the list, when the first anchor is not), None when none
        is kept or the shelf moved to another revision."""
        with _LOCK:
            if self.shelf.token != token or not self.anchors:
                return None
            chosen: tuple[int, Cells | None] = (0, None)
            for rows, cells, found in self.anchors:
                if not (found > key if self.sort.descending else found < key):
                    return chosen
                chosen = (rows, cells)
            return chosen

    def add(self, token: Token, rows: int, cells: Cells) -> None:
        """Keep an anchor found at revision `token`, unless the shelf moved on since or
        another thread found it first."""
        with _LOCK:
            if self.shelf.token != token:
                return
            index = bisect.bisect_left(self.anchors, rows, key=lambda anchor: anchor[0])
            if index == len(self.anchors) or self.anchors[index][0] != rows:
                self.anchors.insert(index, (rows, cells, ORDERINGS[self.sort.key].key(cells)))

    def repair(self, moves: Moves, shared: dict[Hashable, Signs]) -> None:
        """Move each anchor by the rows that changed at or before it (see the module doc).
        `shared` holds what the books of one repair compute alike: both directions of an
        order and filter sort the same changes by the same keys."""
        found = shared.get(self._signs_key())
        keys, sums = found if found is not None else self._signs(moves)
        shared[self._signs_key()] = (keys, sums)
        if not keys:
            return
        moved: list[tuple[int, Cells, Key]] = []
        for rows, cells, key in self.anchors:
            if self.sort.descending:
                rows += sums[-1] - sums[bisect.bisect_left(keys, key)]
            else:
                rows += sums[bisect.bisect_right(keys, key)]
            moved.append((rows, cells, key))
        self.anchors = moved

    def _signs_key(self) -> Hashable:
        return (self.sort.key, self.compiled.scan_where, self.compiled.params, self.compiled.drive)

    def _signs(self, moves: Moves) -> Signs:
        """The changed rows' sort keys in ascending order, each taken row as it is counting
        one and as it was minus one, and the running sums of those (`sums[i]`: of the
        first `i`)."""
        ordering = ORDERINGS[self.sort.key]
        signs: list[tuple[Key, int]] = []
        for old, new in moves:
            for values, sign in ((old, -1), (new, 1)):
                if values is not None and _taken(self.compiled, values):
                    signs.append((ordering.key_of(values), sign))
        signs.sort(key=lambda item: item[0])
        sums = [0]
        for _, sign in signs:
            sums.append(sums[-1] + sign)
        return [key for key, _ in signs], sums


class Total:
    """Plain classes, as `Shelf`: a dataclass compiles its methods as its module loads, on
    every read's start (docs/architecture.md#start-up)."""

    __slots__ = ("compiled", "rows")

    def __init__(self, compiled: CompiledFilter, rows: int) -> None:
        self.compiled = compiled
        self.rows = rows


class Shelf:
    __slots__ = ("books", "token", "totals")

    def __init__(self, token: Token) -> None:
        self.token = token
        self.books: OrderedDict[Hashable, Book] = OrderedDict()
        self.totals: dict[Hashable, Total] = {}


_LOCK = threading.RLock()
"""Reentrant: a shelf is brought on (`advance`, reading the log through `_moves_since`)
under it."""
_SHELVES: dict[str, Shelf] = {}


def anchorable(compiled: CompiledFilter) -> bool:
    """Whether S of this filter depends on the issues table alone (see the module doc)."""
    return compiled.text is None and "issue_labels" not in compiled.scan_where


def _taken(compiled: CompiledFilter, values: Values) -> bool:
    if unfiltered(compiled):
        return True  # without decoding the labels: the list the file keeps (anchor_file)
    return compiled.accepts(values, labels_of({"labels": values["labels"]}), True)


def _decoded(labels: object) -> object:
    """The labels as `labels_of` reads them: `extra -> 'labels'` is JSON text, the same
    within the log's `json_array` an array."""
    return json.loads(labels) if isinstance(labels, str) else labels


def revision(conn: sqlite3.Connection) -> Token | None:
    """The revision of the issues table this connection's transaction sees; None for a file
    before the migration."""
    try:
        row = conn.execute("SELECT seq, tag FROM issue_moves ORDER BY seq DESC LIMIT 1").fetchone()
    except sqlite3.OperationalError:
        return None  # a file before that migration (tests build those by hand)
    return None if row is None else (int(row[0]), int(row[1]))


def _shelf(conn: sqlite3.Connection) -> tuple[Shelf, Token] | None:
    """The shelf of this connection's file brought to the revision its transaction sees,
    with that revision; None for a file before the migration or in memory."""
    token = revision(conn)
    path = str(conn.execute("PRAGMA database_list").fetchone()[2])
    if token is None or not path:
        return None
    with _LOCK:
        kept = _SHELVES.get(path)
        if kept is None or not advance(conn, kept, token):
            _SHELVES.pop(path, None)
            kept = _SHELVES[path] = Shelf(token)
            while len(_SHELVES) > FILES_KEPT:
                del _SHELVES[next(iter(_SHELVES))]
        return kept, token


def advance(conn: sqlite3.Connection, shelf: Shelf, token: Token) -> bool:
    """Bring `shelf` to `token` from the log; False when it cannot be (see the module doc).
    A reader in an older snapshot leaves it as it is (it then reads without anchors)."""
    if shelf.token == token or shelf.token[0] > token[0]:
        return True
    if not _holds(conn, shelf.token):
        return False
    moves = _moves_since(conn, shelf.token, token)
    if moves is None:
        return False
    shared: dict[Hashable, Signs] = {}
    for book in shelf.books.values():
        book.repair(moves, shared)
    for total in shelf.totals.values():
        total.rows += sum(
            (new is not None and _taken(total.compiled, new))
            - (old is not None and _taken(total.compiled, old))
            for old, new in moves
        )
    shelf.token = token
    return True


def _holds(conn: sqlite3.Connection, token: Token) -> bool:
    """Whether the log still holds revision `token`: not pruned, and not a change rolled back
    or made with the log set aside (cache.bulk_load), whose rows carry other tags."""
    held = conn.execute("SELECT tag FROM issue_moves WHERE seq = ?", (token[0],)).fetchone()
    return held is not None and int(held[0]) == token[1]


def changed_rows(conn: sqlite3.Connection, since: Token, limit: int) -> frozenset[int] | None:
    """The issues (rids) inserted, changed or deleted after revision `since`, as this
    connection's transaction sees the log; None when the log no longer holds `since`, or
    when more than `limit` changes follow it."""
    if not _holds(conn, since):
        return None
    logged = conn.execute(
        "SELECT rid FROM issue_moves WHERE seq > ? AND rid IS NOT NULL LIMIT ?",
        (since[0], limit + 1),
    ).fetchall()
    return None if len(logged) > limit else frozenset(int(row[0]) for row in logged)


_LAST_MOVES: list[tuple[tuple[str, Token, Token], Moves | None]] = []
"""The last changes read from a log, by file and revisions: every book the file keeps
(anchor_file) is brought from the same revision, one at a time, as windows need them."""


def _moves_since(conn: sqlite3.Connection, since: Token, token: Token) -> Moves | None:
    """The rows changed after revision `since` up to `token` (what the reader sees), None
    past `MOVES_REPAIRED` of them."""
    key = (str(conn.execute("PRAGMA database_list").fetchone()[2]), since, token)
    with _LOCK:
        if _LAST_MOVES and _LAST_MOVES[0][0] == key:
            return _LAST_MOVES[0][1]
    logged = conn.execute(
        "SELECT rid, was FROM issue_moves WHERE seq > ? AND rid IS NOT NULL ORDER BY seq LIMIT ?",
        (since[0], MOVES_REPAIRED + 1),
    ).fetchall()
    moves = None if len(logged) > MOVES_REPAIRED else _moves(conn, logged)
    with _LOCK:
        _LAST_MOVES[:] = [(key, moves)]
    return moves


def _moves(conn: sqlite3.Connection, logged: list[tuple[int, str | None]]) -> Moves:
    """Each changed row as it was at the shelf's revision (its first log row: None for an
    insert) and as it is now (None when gone)."""
    was: dict[int, Values | None] = {}
    for rid, old in logged:
        if rid not in was:
            if old is None:
                was[rid] = None
            else:
                cells = json.loads(old)
                was[rid] = dict(zip(MOVED_COLUMNS, (*cells[:-1], _decoded(cells[-1])), strict=True))
    names = ", ".join(MOVED_COLUMNS[:-1])
    now: dict[int, Values] = {
        int(row[0]): dict(zip(MOVED_COLUMNS, (*row[:-1], _decoded(row[-1])), strict=True))
        for row in conn.execute(
            f"SELECT {names}, extra -> 'labels' FROM issues "
            "WHERE rid IN (SELECT value FROM json_each(?))",
            (json.dumps(list(was)),),
        )
    }
    return [(old, now.get(rid)) for rid, old in was.items() if old != now.get(rid)]


def book(
    conn: sqlite3.Connection, sort: IssueSort, compiled: CompiledFilter
) -> tuple[Book, Token] | None:
    """The anchors of `compiled` in `sort` order with the reader's revision, None when the
    filter keeps none."""
    if not anchorable(compiled):
        return None
    found = _shelf(conn)
    if found is None:
        return None
    shelf, token = found
    key = (sort.key, sort.descending, compiled.scan_where, compiled.params, compiled.drive)
    with _LOCK:
        kept = shelf.books.get(key)
        if kept is not None:
            shelf.books.move_to_end(key)
            return kept, token
    saved = _saved_book(conn, token, sort, compiled) if shelf.token == token else None
    with _LOCK:
        kept = shelf.books.get(key)
        if kept is None:
            kept = Book(shelf, sort, compiled)
            if saved is not None and shelf.token == token:
                kept.anchors = saved.anchors
            shelf.books[key] = kept
            while len(shelf.books) > BOOKS_KEPT:
                shelf.books.popitem(last=False)
        shelf.books.move_to_end(key)
        return kept, token


def unfiltered(compiled: CompiledFilter) -> bool:
    """Whether the filter takes every server row: the list whose anchors the file keeps."""
    return (
        not compiled.kinds
        and compiled.text is None
        and not compiled.scan_where
        and not compiled.params
        and compiled.drive is None
    )


def _saved_book(
    conn: sqlite3.Connection, token: Token, sort: IssueSort, compiled: CompiledFilter
) -> Book | None:
    """The file's anchors of the unfiltered list in `sort` order brought to `token`, None
    when it keeps none that can be (cache.anchor_file)."""
    if not unfiltered(compiled):
        return None
    found = anchor_file.read(conn, anchor_file.name(sort))
    if found is None:
        return None
    saved, kept = found
    if not isinstance(kept, list):
        return None
    shelf = Shelf(saved)
    book = shelf.books[None] = filled(shelf, sort, compiled, kept)
    return book if brought_on(conn, shelf, token) else None


def filled(
    shelf: Shelf, sort: IssueSort, compiled: CompiledFilter, laid: Sequence[Sequence[Any]]
) -> Book:
    """A book holding anchors laid or saved elsewhere, each a row count and its sort
    columns (cache.anchor_keeping lays them, cache.anchor_file keeps them as JSON)."""
    book = Book(shelf, sort, compiled)
    key = ORDERINGS[sort.key].key
    book.anchors = [(int(rows), tuple(cells), key(tuple(cells))) for rows, cells in laid]
    return book


def _saved_total(conn: sqlite3.Connection, token: Token, compiled: CompiledFilter) -> int | None:
    """The file's number of server rows of the unfiltered list brought to `token`."""
    found = anchor_file.read(conn, anchor_file.TOTAL) if unfiltered(compiled) else None
    if found is None or not isinstance(found[1], int):
        return None
    shelf = Shelf(found[0])
    kept = shelf.totals[None] = Total(compiled, found[1])
    return kept.rows if brought_on(conn, shelf, token) else None


def brought_on(conn: sqlite3.Connection, shelf: Shelf, token: Token) -> bool:
    """`advance` a shelf saved at an earlier revision, never back to an older one (a reader
    sees only rows saved at or before its own revision: they are written in a transaction)."""
    return shelf.token[0] <= token[0] and advance(conn, shelf, token)


def total(
    conn: sqlite3.Connection,
    compiled: CompiledFilter,
    count: tuple[str, Sequence[object]],
    read: Callable[[], int],
) -> int | None:
    """How many server rows `count` (a query and its parameters) finds, read once and then
    kept up to date from the log; None when the filter keeps no anchors (the caller counts
    as it always did)."""
    if not anchorable(compiled) or "issue_labels" in count[0]:
        return None
    found = _shelf(conn)
    if found is None:
        return None
    shelf, token = found
    key = (count[0], tuple(count[1]))
    with _LOCK:
        kept = shelf.totals.get(key)
        if kept is not None and shelf.token == token:
            return kept.rows
    saved = _saved_total(conn, token, compiled) if shelf.token == token else None
    rows = read() if saved is None else saved
    with _LOCK:
        if shelf.token == token:
            shelf.totals[key] = Total(compiled, rows)
    return rows


def walk(
    book: Book, token: Token, start: int, step: Callable[[Cells | None, int], Cells | None]
) -> tuple[Cells | None, int]:
    """The anchor nearest before position `start` and how many rows after it to skip to
    reach `start` (None and `start`: from the top). Anchors missing on the way, or spread
    apart by inserts since, are found: `step(cells, rows)` reads the sort columns of the row
    `rows` rows after the boundary `cells` (of row `rows - 1` for None), None past the end
    of the list. Far from any anchor the walk strides `STRIDE` rows at a time, then
    `SPACING`: each stride is a few queries (~0.2 ms), and later windows elsewhere in the
    stride find their anchors from its ends."""
    while True:
        found = book.nearest(token, start)
        if found is None:
            return None, start
        rows, cells = found
        if start - rows < SPACING:
            return cells, start - rows
        stride = STRIDE if start - rows >= STRIDE else SPACING
        following = step(cells, stride)
        if following is None:
            return cells, start - rows
        book.add(token, rows + stride, following)
