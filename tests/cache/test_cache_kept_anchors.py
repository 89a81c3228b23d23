"""Anchors kept in the cache file (cache.anchor_file, cache.anchor_keeping): a new process
starts its deep windows from them, moved by the changes made since by any connection, and
never from anchors whose revision the log no longer holds.

A new process is the module's shelves forgotten (`anchors._SHELVES`, per process), as a
new CLI command or app start finds them. Anchors every few rows make a few hundred issues
behave as a million do (see test_cache_query_anchors).
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from cache_factories import Record, issue, stamp
from cache_oracle import Row, expected

from cache import (
    Cache,
    IssueFilter,
    IssueSort,
    Resource,
    anchor_file,
    anchor_keeping,
    anchors,
    query,
)
from cache.filtering import compile_filter
from cache.ordering import ORDERINGS
from issuefields import SORT_KEYS

ISSUE = Resource.ISSUES
SORTS = [IssueSort(key, descending) for key in SORT_KEYS for descending in (False, True)]
SPACING = 5
TITLES = ["alpha", "Alpha", "beta", "BETA", "gamma", "Zeta", "zeta", "éclair", "a b"]
STATUSES = ["backlog", "todo", "in_progress", "done", "canceled", "triage"]
PRIORITIES = ["urgent", "high", "medium", "low", "none", "p9"]


@pytest.fixture(autouse=True)
def deep_at_small_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(anchors, "SPACING", SPACING)
    monkeypatch.setattr(anchors, "STRIDE", 4 * SPACING)
    monkeypatch.setattr(anchors, "_SHELVES", {})
    monkeypatch.setattr(query, "SHALLOW_ROWS", 12)


def new_process() -> None:
    """What a new process starts with: no shelf in memory."""
    anchors._SHELVES.clear()


class Model:
    """The list as the oracle sees it: rows by id, in the order the cache gives them rids."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self.next_position = 1

    def pull(self, cache: Cache, page: list[Record]) -> None:
        cache.server.apply_page(ISSUE, page)
        for record in page:
            if record.get("deleted"):
                self.rows.pop(record["id"], None)
            elif record["id"] in self.rows:
                self.rows[record["id"]].record = dict(record)
            else:
                self.rows[record["id"]] = Row(record["id"], self.next_position, dict(record), [])
                self.next_position += 1

    def ids(self, flt: IssueFilter, sort: IssueSort) -> list[str]:
        return expected(list(self.rows.values()), flt, sort)


def random_issue(rnd: random.Random, n: int, newest: int = 30) -> Record:
    """Few distinct values per column, so every order has long runs of ties, and NULLs."""
    return issue(
        n,
        number=rnd.choice([n, n, None]),
        title=rnd.choice(TITLES),
        status=rnd.choice(STATUSES),
        priority=rnd.choice(PRIORITIES),
        created_at=rnd.choice([stamp(rnd.randint(0, 30)), None]),
        updated_at=rnd.choice([stamp(rnd.randint(0, newest)), None]),
    )


def filled(path: Path, rnd: random.Random, n: int = 200) -> Model:
    model = Model()
    with Cache.open(path) as cache:
        made = [random_issue(rnd, number) for number in range(1, n + 1)]
        for start in range(0, n, 50):
            model.pull(cache, made[start : start + 50])
    return model


def changes(rnd: random.Random, model: Model, first: int) -> list[Record]:
    """A page that moves rows in every order (updated, newer than any row: the cache skips
    a record older than its own), deletes some and inserts some, at the top of the default
    order and elsewhere."""
    picked = rnd.sample(sorted(model.rows), 24)
    moved = [
        {**random_issue(rnd, int(key[4:])), "id": key, "updated_at": stamp(first + n)}
        for n, key in enumerate(picked[:16])
    ]
    gone = [{"id": key, "deleted": True, "updated_at": stamp(first + 99)} for key in picked[16:]]
    new = [random_issue(rnd, number, 60) for number in range(first, first + 12)]
    return [*moved, *gone, *new]


ALL = IssueFilter()


def check_windows(cache: Cache, model: Model, flt: IssueFilter = ALL) -> None:
    for sort in SORTS:
        want = model.ids(flt, sort)
        for offset in sorted({0, 7, 13, len(want) // 2, len(want) - 9, len(want) - 1, len(want)}):
            got = [row.id for row in cache.reads.window(flt, sort, offset, 8)]
            assert got == want[offset : offset + 8], (sort, offset)


def shelf_book(cache: Cache, sort: IssueSort) -> anchors.Book:
    """The unfiltered list's book this process holds for `sort`, taking it from the file
    the first time."""
    with cache.reads._db.read() as conn:
        found = anchors.book(conn, sort, compile_filter(IssueFilter(), None, {}))
    assert found is not None
    return found[0]


def exact(cache: Cache, book: anchors.Book) -> bool:
    """Whether each anchor counts the rows at or before its boundary in its order, as the
    table holds them now."""
    ordering = ORDERINGS[book.sort.key]
    with cache.reads._db.read() as conn:
        keys = [
            ordering.key(row)
            for row in conn.execute(f"SELECT {', '.join(ordering.columns)} FROM issues")
        ]
    for rows, _, key in book.anchors:
        held = sum(1 for other in keys if (other >= key if book.sort.descending else other <= key))
        if held != rows:
            return False
    return True


def counted_steps(patch: pytest.MonkeyPatch) -> list[object]:
    """The boundaries `anchors.walk` reads the next anchor after, from now on (None: the
    top of the list)."""
    steps: list[object] = []
    walk = anchors.walk

    def counting(book: anchors.Book, token: anchors.Token, start: int, step: object) -> object:
        def counted(after: anchors.Cells | None, rows: int) -> anchors.Cells | None:
            steps.append(after)
            return step(after, rows)  # type: ignore[operator]

        return walk(book, token, start, counted)  # type: ignore[arg-type]

    patch.setattr(anchors, "walk", counting)
    return steps


def counts_of_the_table(cache: Cache) -> list[str]:
    """The statements this thread's connection runs from now on."""
    statements: list[str] = []
    cache.reads._db.conn().set_trace_callback(statements.append)
    return statements


def test_a_new_process_reads_deep_windows_from_the_anchors_the_pull_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every deep window of every order starts within `SPACING` rows of an anchor from the
    file and knows the list's length from it: no walk, no count of the table."""
    path = tmp_path / "cache.db"
    model = filled(path, random.Random(1))
    with Cache.open(path) as cache:
        assert cache.server.keep_anchors()
        assert not cache.server.keep_anchors()  # the file holds them at this revision already
    new_process()
    steps = counted_steps(monkeypatch)
    with Cache.open(path) as cache:
        statements = counts_of_the_table(cache)
        check_windows(cache, model)
        for sort in SORTS:
            book = shelf_book(cache, sort)
            assert len(book.anchors) == len(model.rows) // SPACING
            assert exact(cache, book)
    assert steps == []
    assert not [sql for sql in statements if sql.startswith("SELECT count(*) FROM issues")]


def test_kept_anchors_follow_inserts_updates_and_deletes_made_since_by_another_process(
    tmp_path: Path,
) -> None:
    """Another process's pulls change the table after the file's anchors were kept, and
    keep nothing: the next process brings the file's anchors to the table through the log,
    exactly, and reads every window as a plain OFFSET would. A later pull keeps them again
    at its revision (moved, or laid again where inserts spread them apart), and the
    process after it reads from those through more changes."""
    rnd = random.Random(2)
    path = tmp_path / "cache.db"
    model = filled(path, rnd)
    with Cache.open(path) as cache:
        cache.server.keep_anchors()
    new_process()
    with Cache.open(path) as other:
        model.pull(other, changes(rnd, model, 1000))
        with other.server._db.write() as conn:  # a change outside any pull
            conn.execute("UPDATE issues SET title = 'Alpha' WHERE id = ?", (sorted(model.rows)[3],))
        model.rows[sorted(model.rows)[3]].record["title"] = "Alpha"
    new_process()
    with Cache.open(path) as cache:
        for sort in SORTS:
            book = shelf_book(cache, sort)
            assert len(book.anchors) == 200 // SPACING  # the file's, moved
            assert exact(cache, book)
        check_windows(cache, model)
        check_windows(cache, model, IssueFilter(status=frozenset({"todo", "done"})))

    with Cache.open(path) as cache:
        model.pull(cache, [random_issue(rnd, number, 90) for number in range(2000, 2030)])
        assert cache.server.keep_anchors()
    new_process()
    with Cache.open(path) as other:
        model.pull(other, changes(rnd, model, 3000))
    new_process()
    with Cache.open(path) as cache:
        for sort in SORTS:
            book = shelf_book(cache, sort)
            assert book.anchors
            assert exact(cache, book)
        check_windows(cache, model)


def restart_the_log(cache: Cache) -> None:
    """What a page that sets the log's triggers aside does: the log starts afresh at one row,
    numbered on from the last."""
    with cache.server._db.write() as conn:
        conn.execute(
            "INSERT INTO issue_moves (seq, tag) SELECT max(seq) + 1, random() FROM issue_moves"
        )
        conn.execute("DELETE FROM issue_moves WHERE seq < (SELECT max(seq) FROM issue_moves)")


@pytest.mark.parametrize("lost", ["log restarted", "too many changes"])
def test_kept_anchors_are_dropped_when_the_log_no_longer_holds_their_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lost: str
) -> None:
    """Rows inserted while the log could not follow would shift every anchor: the next
    process starts with none (and counts the list), and the next pull lays them again."""
    rnd = random.Random(3)
    path = tmp_path / "cache.db"
    model = filled(path, rnd)
    with Cache.open(path) as cache:
        cache.server.keep_anchors()
    new_process()
    with Cache.open(path) as other:
        if lost == "log restarted":
            model.pull(other, changes(rnd, model, 1000))
            restart_the_log(other)
        else:
            monkeypatch.setattr(anchors, "MOVES_REPAIRED", 3)
            model.pull(other, [random_issue(rnd, number, 90) for number in range(1000, 1004)])
    new_process()
    with Cache.open(path) as cache:
        statements = counts_of_the_table(cache)
        for sort in SORTS:
            assert shelf_book(cache, sort).anchors == []
        check_windows(cache, model)
        assert [sql for sql in statements if sql.startswith("SELECT count(*) FROM issues")]
        assert cache.server.keep_anchors()
    new_process()
    with Cache.open(path) as cache:
        for sort in SORTS:
            book = shelf_book(cache, sort)
            assert len(book.anchors) == len(model.rows) // SPACING
            assert exact(cache, book)
        check_windows(cache, model)


def test_anchors_laid_before_a_change_are_saved_moved_by_it(tmp_path: Path) -> None:
    """`keep_anchors` lays in a read transaction and saves in a write one: what another
    connection wrote in between moves the anchors before they are saved at its revision."""
    rnd = random.Random(7)
    path = tmp_path / "cache.db"
    model = filled(path, rnd)
    with Cache.open(path) as cache, Cache.open(path) as other:
        with cache.reads._db.read() as conn:
            laid = anchor_keeping.brought(conn)
        assert laid is not None
        model.pull(other, changes(rnd, model, 1000))
        with cache.server._db.write() as conn:
            assert anchor_keeping.save(conn, laid)
            assert {at for at, _ in anchor_file.read_all(conn).values()} == {anchors.revision(conn)}
    new_process()
    with Cache.open(path) as cache:
        for sort in SORTS:
            book = shelf_book(cache, sort)
            assert len(book.anchors) == 200 // SPACING
            assert exact(cache, book)
        check_windows(cache, model)


def test_reading_from_kept_anchors_writes_nothing(tmp_path: Path) -> None:
    """A read command brings the file's anchors on through the log in memory only: the file's
    change counter stays, and no WAL is left."""
    rnd = random.Random(4)
    path = tmp_path / "cache.db"
    model = filled(path, rnd)
    with Cache.open(path) as cache:
        cache.server.keep_anchors()
        model.pull(cache, changes(rnd, model, 1000))
    new_process()
    counter = path.read_bytes()[24:28]
    with Cache.open(path) as cache:
        check_windows(cache, model)
    assert path.read_bytes()[24:28] == counter
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0


def test_a_file_before_the_migration_reads_without_kept_anchors(tmp_path: Path) -> None:
    """A file some steps behind (tests build those by hand) reads as before."""
    rnd = random.Random(5)
    path = tmp_path / "cache.db"
    model = filled(path, rnd)
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE issue_anchors")
    new_process()
    with Cache.open(path) as cache:
        check_windows(cache, model)


def test_the_file_keeps_every_order_and_the_total_at_the_table_revision(tmp_path: Path) -> None:
    rnd = random.Random(6)
    path = tmp_path / "cache.db"
    model = filled(path, rnd, 23)
    with Cache.open(path) as cache:
        cache.server.keep_anchors()
        with cache.reads._db.read() as conn:
            kept = anchor_file.read_all(conn)
            revision = anchors.revision(conn)
    assert set(kept) == {anchor_file.name(sort) for sort in SORTS} | {anchor_file.TOTAL}
    assert {at for at, _ in kept.values()} == {revision}
    assert kept[anchor_file.TOTAL][1] == len(model.rows)


def test_no_anchors_are_laid_while_a_cold_load_is_open(tmp_path: Path) -> None:
    """A cold load's title index is a stand-in on `rid` until the load ends: anchors walked
    along it would sort the whole table at every step. The pull keeps them once it ends."""
    path = tmp_path / "cache.db"
    with Cache.open(path) as cache:
        assert cache.server.begin_bulk_load(ISSUE)
        cache.server.apply_page(ISSUE, [issue(n) for n in range(1, 31)])
        assert not cache.server.keep_anchors()
        assert cache.server.finish_bulk_load(ISSUE)
        assert cache.server.keep_anchors()
        with cache.reads._db.read() as conn:
            assert anchor_file.read_all(conn)[anchor_file.TOTAL][1] == 30


def test_a_command_s_first_page_leaves_the_kept_anchors_unread(tmp_path: Path) -> None:
    """No anchor shortens a walk of fewer than `SPACING` rows: the first page of a list
    (`issues list`) does not read the file's anchors, a deep window does."""
    path = tmp_path / "cache.db"
    model = filled(path, random.Random(8))
    with Cache.open(path) as cache:
        cache.server.keep_anchors()
    new_process()
    with Cache.open(path) as cache:
        statements = counts_of_the_table(cache)
        for sort in SORTS:
            got = [row.id for row in cache.reads.window(ALL, sort, 0, SPACING)]
            assert got == model.ids(ALL, sort)[:SPACING]
        assert not [sql for sql in statements if "issue_anchors" in sql]
        cache.reads.window(ALL, IssueSort(), 100, 5)
        assert [sql for sql in statements if "issue_anchors" in sql]
