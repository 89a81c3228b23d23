"""`Transaction.step`: a part of a transaction that fails alone (the bulk endpoint's operations).

A failed step must leave nothing behind, neither rows nor events, while the steps before and
after it commit with the transaction.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from server_support import FakeClock, MakeKey, RecordingSink

from server.db import Database
from server.errors import NotFound
from server.models import IssueCreate
from server.records import issues
from server.store import Store


def test_a_failed_step_leaves_no_row_and_no_event(
    db_path: Path, clock: FakeClock, make_key: MakeKey
) -> None:
    make_key()
    sink = RecordingSink()
    store = Store(Database(db_path), clock, sink)
    with store.reading() as conn:
        (workspace_id,) = conn.execute("SELECT id FROM workspaces").fetchone()
    with store.transaction(workspace_id) as tx:
        with tx.step():
            issues.create_issue(tx, IssueCreate(title="before"))
        with pytest.raises(NotFound), tx.step():
            issues.create_issue(tx, IssueCreate(title="undone"))
            raise NotFound("after the write")
        with tx.step():
            issues.create_issue(tx, IssueCreate(title="after"))
    with store.reading() as conn:
        rows = conn.execute("SELECT title, number FROM issues ORDER BY number").fetchall()
    assert [tuple(row) for row in rows] == [("before", 1), ("after", 2)]
    assert [event[2]["title"] for event in sink.events] == ["before", "after"]
    assert sink.types() == ["issue.created", "issue.created"]
