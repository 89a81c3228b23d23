"""`GET /users`: the members of the workspace, for assignee pickers."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends

from server.auth import AuthContext, require
from server.records.listing import list_page
from server.records.tables import USERS
from server.routes.deps import ListQueryDep, StoreDep, errors
from server.schemas import UserList

router = APIRouter(tags=["users"])


@router.get("/users", response_model=UserList, responses=errors(400))
def list_users(
    auth: Annotated[AuthContext, Depends(require())], store: StoreDep, query: ListQueryDep
) -> dict[str, Any]:
    with store.reading() as conn:
        return list_page(conn, USERS, auth.workspace_id, query)
