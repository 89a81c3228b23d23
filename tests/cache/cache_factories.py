"""Record factories, a controllable clock and the query plans shared by the cache tests."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from cache import Cache, IssueFilter, IssueSort, query, records

Record = dict[str, Any]


class Clock:
    """A controllable local clock, so outbox timestamps are deterministic."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


BASE = datetime(2026, 3, 1, tzinfo=UTC)


def stamp(n: int) -> str:
    """The n-th second after a fixed start, in the server's timestamp format."""
    return (BASE + timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_numbers = itertools.count(1)


def issue(n: int | None = None, **fields: Any) -> Record:
    """An issue record as the server sends it; `n` fixes id, number and timestamps."""
    n = next(_numbers) if n is None else n
    record: Record = {
        "id": f"iss_{n:06d}",
        "number": n,
        "title": f"Issue {n}",
        "description": "",
        "status": "todo",
        "priority": "none",
        "assignee": None,
        "project_id": None,
        "labels": [],
        "created_at": stamp(n),
        "updated_at": stamp(n),
    }
    record.update(fields)
    return record


def comment(n: int, issue_id: str, body: str, **fields: Any) -> Record:
    record: Record = {
        "id": f"cmt_{n:06d}",
        "issue_id": issue_id,
        "body": body,
        "author": "usr_1",
        "created_at": stamp(n),
        "updated_at": stamp(n),
    }
    record.update(fields)
    return record


def query_plans(cache: Cache, flt: IssueFilter, sort: IssueSort) -> list[str]:
    """EXPLAIN QUERY PLAN of the list's window and count queries, as `cache.reads` runs them."""
    db = cache.reads._db
    with db.read():
        return query.plans(query.prepare(db.state(), flt), sort)


def reset_server_copy(cache: Cache) -> None:
    """Wipe the server copy for a full re-pull (`records.reset_server_copy`), as no command
    does yet: the tests hold what such a reset must keep."""
    db = cache.server._db
    with db.write() as conn:
        records.reset_server_copy(conn)
