"""`GET /search?q=`: issues whose title or description match, best first."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from server.auth import AuthContext, require
from server.records.search import search_issues
from server.routes.deps import PagingDep, StoreDep, errors
from server.schemas import SearchResults

router = APIRouter(tags=["search"])


@router.get("/search", response_model=SearchResults, responses=errors(400, 403))
def search(
    q: Annotated[
        str,
        Query(
            min_length=1,
            max_length=500,
            description="Words to find; each matches as a prefix (`cras` finds crash), all "
            "must match. Search syntax is not interpreted.",
        ),
    ],
    auth: Annotated[AuthContext, Depends(require("issues:read"))],
    store: StoreDep,
    paging: PagingDep,
) -> dict[str, Any]:
    with store.reading() as conn:
        return search_issues(conn, auth.workspace_id, q, paging)
