"""Laying the unfiltered list's anchors and keeping them in the cache file (cache.anchor_file):
what a pull does at the end of its pass over the issues (`Cache.server.keep_anchors`), so
that the next process to read a deep window finds them there.

Every order of the unfiltered list gets an anchor every `anchors.SPACING` rows, read
ascending by steps along its index (`query.read_after`, a keyset from the anchor before);
descending is the exact reverse (cache.ordering), so its anchors are the same rows counted
from the other end. A cache whose anchors are already in the file at an earlier revision
has them moved by the log (`anchors.advance`, as a reader would); an order whose anchors
stand more than `2 * SPACING` rows apart after that (inserts between them), or that the log
could not bring, is laid again. Laying walks each order's whole index once, in a read
transaction; the write transaction that saves them only brings them on by what was written
meanwhile, so it holds the write lock for milliseconds.
"""

from __future__ import annotations

import sqlite3
from itertools import pairwise

from cache import anchor_file, anchors, bulk_load, query, syncstate
from cache.filtering import CompiledFilter, compile_filter
from cache.models import IssueFilter, IssueSort
from issuefields import SORT_KEYS

SORTS = tuple(IssueSort(key, descending) for key in SORT_KEYS for descending in (False, True))


def brought(conn: sqlite3.Connection) -> anchors.Shelf | None:
    """Inside a read transaction: the anchors of every order of the unfiltered list and its
    number of server rows at the revision this snapshot sees (books by `anchor_file.name`,
    the total under `anchor_file.TOTAL`); None when the file keeps them at it already, or
    while a cold load is open."""
    token = anchors.revision(conn)
    if token is None or syncstate.get_state(conn, bulk_load.BULK_LOAD_KEY + "issues") is not None:
        return None  # a cold load's title index is a stand-in until it ends (cache.bulk_load)
    held = anchor_file.revisions(conn)
    wanted = {anchor_file.name(sort) for sort in SORTS} | {anchor_file.TOTAL}
    if set(held) == wanted and set(held.values()) == {token}:
        return None
    saved = anchor_file.read_all(conn)
    compiled = compile_filter(IssueFilter(), None, {})
    shelf = _kept(conn, saved, token, compiled)
    total = shelf.totals.get(anchor_file.TOTAL)
    if total is None:
        rows = int(conn.execute("SELECT count(*) FROM issues").fetchone()[0])
        total = shelf.totals[anchor_file.TOTAL] = anchors.Total(compiled, rows)
    for key in SORT_KEYS:
        ascending, descending = IssueSort(key, False), IssueSort(key, True)
        pair = [shelf.books.get(anchor_file.name(sort)) for sort in (ascending, descending)]
        if all(book is not None and _tight(book, total.rows) for book in pair):
            continue
        laid = _laid(conn, compiled, ascending)
        shelf.books[anchor_file.name(ascending)] = anchors.filled(shelf, ascending, compiled, laid)
        reverse = [(total.rows - rows + 1, cells) for rows, cells in reversed(laid)]
        shelf.books[anchor_file.name(descending)] = anchors.filled(
            shelf, descending, compiled, reverse
        )
    return shelf


def save(conn: sqlite3.Connection, shelf: anchors.Shelf) -> bool:
    """Inside a write transaction: write what `brought` made, moved by the changes since its
    snapshot; False (nothing written) when the log cannot bring it that far."""
    token = anchors.revision(conn)
    if token is None or not anchors.advance(conn, shelf, token):
        return False
    kept: dict[str, object] = {
        str(name): [[rows, list(cells)] for rows, cells, _ in book.anchors]
        for name, book in shelf.books.items()
    }
    kept[anchor_file.TOTAL] = shelf.totals[anchor_file.TOTAL].rows
    anchor_file.write(conn, token, kept)
    return True


def _kept(
    conn: sqlite3.Connection,
    saved: dict[str, anchor_file.Saved],
    token: anchors.Token,
    compiled: CompiledFilter,
) -> anchors.Shelf:
    """What the file keeps, brought to `token` by the log; an empty shelf at `token` when
    it keeps nothing, rows of several revisions, or what the log cannot bring."""
    revisions = {at for at, _ in saved.values()}
    if len(revisions) != 1:
        return anchors.Shelf(token)
    shelf = anchors.Shelf(revisions.pop())
    for sort in SORTS:
        found = saved.get(anchor_file.name(sort))
        if found is not None and isinstance(found[1], list):
            shelf.books[anchor_file.name(sort)] = anchors.filled(shelf, sort, compiled, found[1])
    found = saved.get(anchor_file.TOTAL)
    if found is not None and isinstance(found[1], int):
        shelf.totals[anchor_file.TOTAL] = anchors.Total(compiled, found[1])
    if not anchors.brought_on(conn, shelf, token):
        return anchors.Shelf(token)
    return shelf


def _tight(book: anchors.Book, total: int) -> bool:
    """Whether no window of the list is more than `2 * SPACING` rows past an anchor (or
    the top)."""
    ends = [0, *(rows for rows, _, _ in book.anchors), total]
    return all(later - earlier <= 2 * anchors.SPACING for earlier, later in pairwise(ends))


def _laid(
    conn: sqlite3.Connection, compiled: CompiledFilter, sort: IssueSort
) -> list[tuple[int, anchors.Cells]]:
    """An anchor every `SPACING` rows of the whole list in `sort` order."""
    laid: list[tuple[int, anchors.Cells]] = []
    cells: anchors.Cells | None = None
    while True:
        found = query.read_after(conn, compiled, sort, cells, anchors.SPACING - 1, 1)
        if not found:
            return laid
        cells = tuple(found[0])
        laid.append(((laid[-1][0] if laid else 0) + anchors.SPACING, cells))
