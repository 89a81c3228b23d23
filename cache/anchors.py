"""Positions kept along the sort indexes, so that a window deep in the list skips few rows.

SQLite's b-trees cannot find the row at position n without stepping over the n before it: a
window at offset 500,000 of a million issues walked half an index (23-45 ms of CPU; issue
18). A walk towards a deep window now stops every `SPACING` rows of the server rows S of its
filter, in its order, and keeps that row's sort columns (an anchor); a later window starts
after the nearest anchor before it (a keyset condition, cache.query's `window_sql`) and
skips fewer than `SPACING` rows. The number of rows in S is kept beside them: counting a
million issues reads a whole index (8-10 ms).

Anchors describe the issues table as it was when they were read: the table's revision (a
random token that triggers on `issues` draw anew in every insert, update and delete,
migration `issue_list_revision`) is read in the reader's own transaction, and a shelf of
another revision is dropped whole. Other writes (the outbox, sync state, drafts) leave
them standing: local edits are laid over S by cache.query, they are not part of it. A
search's matches hang on FTS and the comments, a label without a bit on `issue_labels`:
filters with either keep no anchors.

One shelf per database file, shared by every thread of the process (the app reads each
window on a new worker thread) under a lock. The token being random, not a count, a file
made again at the same path, or a change rolled back, never brings back a revision seen.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from cache.filtering import CompiledFilter
from cache.models import Cell, IssueSort

SPACING = 4096
"""Rows between anchors: a window skips fewer than this many index entries (~0.3 ms), and
a first walk to offset 500,000 stops 122 times on its way (~4 ms more than one walk)."""

BOOKS_KEPT = 32
"""Orders and filters kept per file, the least recently used dropped first (a book holds at
most one anchor per `SPACING` rows: 245 tuples for a million issues)."""

Cells = tuple[Cell, ...]


class Book:
    """Anchors of one filter in one order: `cells[j]` holds the sort columns (those of
    `ordering.columns`, ending in `rid`) of the row at position `(j + 1) * SPACING - 1`."""

    def __init__(self) -> None:
        self.cells: list[Cells] = []

    def add(self, index: int, cells: Cells) -> None:
        """Keep the anchor found at `index`, unless another thread got there first (it read
        the same revision, so the same row)."""
        with _LOCK:
            if len(self.cells) == index:
                self.cells.append(cells)


@dataclass
class Shelf:
    token: int
    books: OrderedDict[Hashable, Book] = field(default_factory=OrderedDict)
    totals: dict[Hashable, int] = field(default_factory=dict)


_LOCK = threading.Lock()
_SHELVES: dict[str, Shelf] = {}


def anchorable(compiled: CompiledFilter) -> bool:
    """Whether S of this filter depends on the issues table alone (see the module doc)."""
    return compiled.text is None and "issue_labels" not in compiled.scan_where


def _shelf(conn: sqlite3.Connection) -> Shelf | None:
    """The shelf of this connection's file at the revision its transaction sees (the
    latest revision read replaces the kept shelf: readers in older snapshots are rare)."""
    try:
        row = conn.execute("SELECT token FROM issue_list_revision").fetchone()
    except sqlite3.OperationalError:
        return None  # a file before that migration (tests build those by hand)
    path = str(conn.execute("PRAGMA database_list").fetchone()[2])
    if row is None or not path:
        return None
    token = int(row[0])
    with _LOCK:
        kept = _SHELVES.get(path)
        if kept is None or kept.token != token:
            kept = _SHELVES[path] = Shelf(token)
        return kept


def book(conn: sqlite3.Connection, sort: IssueSort, compiled: CompiledFilter) -> Book | None:
    """The anchors of `compiled` in `sort` order, None when it keeps none."""
    if not anchorable(compiled):
        return None
    shelf = _shelf(conn)
    if shelf is None:
        return None
    key = (sort.key, sort.descending, compiled.scan_where, compiled.params, compiled.drive)
    with _LOCK:
        found = shelf.books.get(key)
        if found is None:
            found = shelf.books[key] = Book()
            while len(shelf.books) > BOOKS_KEPT:
                shelf.books.popitem(last=False)
        shelf.books.move_to_end(key)
        return found


def total(
    conn: sqlite3.Connection,
    compiled: CompiledFilter,
    count: tuple[str, Sequence[object]],
    read: Callable[[], int],
) -> int | None:
    """How many server rows `count` (a query and its parameters) finds, read once per
    revision; None when the filter keeps no anchors (the caller counts as it always did)."""
    if not anchorable(compiled) or "issue_labels" in count[0]:
        return None
    shelf = _shelf(conn)
    if shelf is None:
        return None
    key = (count[0], tuple(count[1]))
    found = shelf.totals.get(key)
    if found is None:
        found = shelf.totals[key] = read()
    return found


def walk(
    book: Book, start: int, step: Callable[[Cells | None], Cells | None]
) -> tuple[Cells | None, int]:
    """The anchor nearest before position `start` and how many rows after it to skip to
    reach `start` (None and `start` when there is none). Missing anchors are found on the
    way: `step(anchor)` reads the sort columns of the row `SPACING` rows after `anchor` (of
    row `SPACING - 1` for None), None past the end of the list."""
    reach = start // SPACING
    while len(book.cells) < reach:
        known = len(book.cells)
        found = step(book.cells[known - 1] if known else None)
        if found is None:
            break
        book.add(known, found)
    reached = min(reach, len(book.cells))
    if reached == 0:
        return None, start
    return book.cells[reached - 1], start - reached * SPACING
