"""Opening a cache: where it lives, who may read it, which schema it holds."""

from __future__ import annotations

import sqlite3
import stat
import sys
import threading
from pathlib import Path

import pytest
from cache_factories import issue, query_plans
from sqlite_utils import Database

from cache import (
    Cache,
    CacheBusyError,
    CacheClosedError,
    CorruptCacheError,
    InvalidProfileError,
    IssueFilter,
    IssueSort,
    Resource,
    SchemaTooNewError,
    open_cache,
)
from cache.paths import data_dir
from cache.schema import KNOWN_STEPS, MIGRATIONS


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_root_argument_places_the_profile_file(tmp_path: Path) -> None:
    with open_cache("work", root=tmp_path / "d") as cache:
        assert cache.path == tmp_path / "d" / "work.db"


def test_tracker_home_moves_the_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACKER_HOME", str(tmp_path / "home"))
    with open_cache("default") as cache:
        assert cache.path == tmp_path / "home" / "data" / "default.db"


def test_without_tracker_home_the_platform_directory_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Linux's usual case as platformdirs answers it, without asking it
    (tests/accounts/test_profiles.py compares the two); any other, platformdirs itself."""
    monkeypatch.delenv("TRACKER_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr("platformdirs.user_data_dir", lambda app: str(tmp_path / "pd" / app))
    usual = tmp_path / "xdg" / "tracker-tui" if sys.platform == "linux" else None
    assert data_dir() == (usual or tmp_path / "pd" / "tracker-tui")
    monkeypatch.setenv("HOME", "relative")
    assert data_dir() == tmp_path / "pd" / "tracker-tui"


@pytest.mark.parametrize("name", ["", "../x", ".hidden", "a/b", "-x", "x" * 65, "sp ace"])
def test_profile_names_that_are_not_file_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(InvalidProfileError):
        open_cache(name, root=tmp_path)


def test_directory_is_0700_and_database_files_0600(tmp_path: Path) -> None:
    root = tmp_path / "data"
    with open_cache("p", root=root) as cache:
        cache.server.apply_page(Resource.ISSUES, [issue(1)])
        files = [cache.path, Path(f"{cache.path}-wal"), Path(f"{cache.path}-shm")]
        assert all(path.exists() for path in files)
        assert mode(root) == 0o700
        assert [mode(path) for path in files] == [0o600] * 3


def test_loose_modes_left_by_someone_else_are_tightened(tmp_path: Path) -> None:
    root = tmp_path / "data"
    open_cache("p", root=root).close()
    root.chmod(0o755)
    (root / "p.db").chmod(0o644)
    open_cache("p", root=root).close()
    assert (mode(root), mode(root / "p.db")) == (0o700, 0o600)


def test_connection_is_in_wal_mode_with_a_busy_timeout(cache: Cache) -> None:
    conn = sqlite3.connect(cache.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_a_new_file_vacuums_incrementally(tmp_path: Path) -> None:
    with Cache.open(tmp_path / "cache.db"):
        pass
    conn = sqlite3.connect(tmp_path / "cache.db")
    assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # INCREMENTAL
    conn.close()


def test_opening_and_reading_a_cache_writes_nothing(tmp_path: Path) -> None:
    """A read opens the cache without a write transaction: its header's change counter stays
    where it was (re-setting `auto_vacuum` rewrote the header on every open, with a commit
    and a checkpoint to sync)."""
    path = tmp_path / "cache.db"
    with Cache.open(path) as cache:
        cache.server.apply_page(Resource.ISSUES, [issue(1)])
    counter = path.read_bytes()[24:28]
    with Cache.open(path) as cache:
        assert cache.reads.count(IssueFilter()) == 1
    assert path.read_bytes()[24:28] == counter
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0


def test_a_file_that_is_not_a_database_is_reported_as_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    path.write_bytes(b"this is not sqlite, just text that happens to be long enough" * 100)
    with pytest.raises(CorruptCacheError):
        Cache.open(path)


def test_a_damaged_database_is_reported_as_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    Cache.open(path).close()
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xa5" * (4096 - 100)
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptCacheError):
        Cache.open(path)


def test_a_cache_from_a_newer_client_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    Cache.open(path).close()
    db = Database(path)
    db["_sqlite_migrations"].insert(
        {"migration_set": MIGRATIONS.name, "name": "9999_future", "applied_at": "x"}
    )
    db.close()
    with pytest.raises(SchemaTooNewError) as caught:
        Cache.open(path)
    assert caught.value.unknown == ["9999_future"]


def test_an_old_cache_is_migrated_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    db = Database(path)
    MIGRATIONS.apply(db, stop_before=KNOWN_STEPS[1])
    conn = db.conn
    conn.execute(
        "INSERT INTO issues (id, title, description, record, status_rank, priority_rank, "
        "label_mask) VALUES ('iss_1', 'kept', '', '{\"id\": \"iss_1\", \"title\": \"kept\"}', "
        "6, 5, 0)"
    )
    conn.commit()
    assert "outbox" not in db.table_names()
    db.close()
    with Cache.open(path) as cache:
        assert cache.server.server_record(Resource.ISSUES, "iss_1") == {
            "id": "iss_1",
            "title": "kept",
        }
        assert cache.outbox.create(Resource.ISSUES, {"title": "new"}).startswith("local_")
        applied = [m.name for m in MIGRATIONS.applied(Database(path))]
    assert applied == list(KNOWN_STEPS)


def test_filter_indexes_of_an_old_cache_are_rebuilt_in_the_default_order(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    db = Database(path)
    MIGRATIONS.apply(db, stop_before="filter_indexes_in_default_order")
    db.close()
    with Cache.open(path) as cache:
        cache.server.apply_page(
            Resource.ISSUES,
            [
                issue(n, status="todo", assignee="usr_1", updated_at="2026-01-01T00:00:00Z")
                for n in (1, 2, 3)
            ],
        )
        rows = cache.reads.window(
            IssueFilter(mine="usr_1"), IssueSort("status", descending=False), 0, 10
        )
        plans = query_plans(cache, IssueFilter(mine="usr_1"), IssueSort())
    assert [row.id for row in rows] == ["iss_000003", "iss_000002", "iss_000001"]
    assert "SEARCH issues USING COVERING INDEX issues_by_assignee (assignee=?)" in plans
    indexes = dict(sqlite3.connect(path).execute("SELECT name, sql FROM sqlite_master"))
    for field in ("status_rank", "priority_rank", "assignee", "project_id"):
        found = [sql for sql in indexes.values() if sql and f"({field}, updated_key DESC" in sql]
        assert len(found) == 1, field


def test_two_processes_opening_an_old_cache_migrate_it_once(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    MIGRATIONS.apply(Database(path), stop_before=KNOWN_STEPS[1])
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            Cache.open(path).close()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [m.name for m in MIGRATIONS.applied(Database(path))] == list(KNOWN_STEPS)


def test_a_closed_cache_refuses_further_use(cache: Cache) -> None:
    cache.close()
    with pytest.raises(CacheClosedError):
        cache.reads.count(IssueFilter())


def test_a_lock_held_past_the_busy_timeout_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cache.db.BUSY_TIMEOUT_MS", 50)
    path = tmp_path / "cache.db"
    with Cache.open(path) as cache:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(CacheBusyError):
            cache.state.set("k", 1)
        assert cache.reads.count(IssueFilter()) == 0
        other.execute("ROLLBACK")
        other.close()
        cache.state.set("k", 1)
        assert cache.state.get("k") == 1
