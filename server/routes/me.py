"""`GET /me`: who the calling key is."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends

from server.auth import AuthContext, require
from server.records.rows import fetch_record
from server.records.tables import USERS, WORKSPACES
from server.routes.deps import StoreDep, errors
from server.schemas import Me

router = APIRouter(tags=["me"])


@router.get("/me", response_model=Me, responses=errors())
def get_me(auth: Annotated[AuthContext, Depends(require())], store: StoreDep) -> dict[str, Any]:
    with store.reading() as conn:
        user = fetch_record(conn, USERS, auth.workspace_id, auth.user_id)
        workspace = fetch_record(conn, WORKSPACES, auth.workspace_id, auth.workspace_id)
    return {
        "user": user,
        "workspace": workspace,
        "permissions": sorted(auth.permissions),
        "plan": workspace["plan"],
    }
