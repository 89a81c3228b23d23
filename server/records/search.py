"""Full-text search over issue titles and descriptions, best matches first."""

from __future__ import annotations

import sqlite3
from typing import Any

from server.errors import InvalidRequest
from server.records.listing import Paging
from server.records.tables import ISSUES
from server.search_query import match_expression

TITLE_WEIGHT = 10.0
"""bm25 column weight of titles against descriptions (1.0): a word in the title says more."""

MATCHES = (
    "FROM issues_fts CROSS JOIN issues ON issues.seq = issues_fts.rowid "
    "WHERE issues_fts MATCH ? AND issues.workspace_id = ?"
)
"""The matching issues of a workspace. `CROSS JOIN` makes the full-text index the outer loop:
with a plain join SQLite may walk the workspace's issues and run the MATCH once per issue,
which took a minute for a count over 100,000 issues instead of milliseconds."""

RANKED = f"{MATCHES} AND issues_fts.rank MATCH 'bm25({TITLE_WEIGHT}, 1.0)' ORDER BY issues_fts.rank"
"""The same, best first. FTS5 orders by its `rank` column itself, as the outer loop, so SQLite
needs no sort of its own over every match with its whole row: a quarter less CPU than
`ORDER BY bm25(...)` over 100,000 issues (benchmarks/service.py). Ties keep the index's rowid
order, which is `issues.seq`, the order of creation."""


def search_issues(
    conn: sqlite3.Connection, workspace_id: str, text: str, paging: Paging
) -> dict[str, Any]:
    expression = match_expression(text)
    if expression is None:
        raise InvalidRequest.for_field("q", "must contain at least one word")
    params = (expression, workspace_id)
    (total,) = conn.execute(f"SELECT count(*) {MATCHES}", params).fetchone()
    rows = conn.execute(
        f"SELECT issues.* {RANKED} LIMIT ? OFFSET ?", (*params, paging.per_page, paging.offset)
    ).fetchall()
    return paging.envelope([ISSUES.to_record(row) for row in rows], total)
