"""The caller's workspace: list, read, rename (`admin`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Response

from server.auth import AuthContext, require
from server.models import WorkspaceUpdate
from server.records.listing import list_page
from server.records.rows import fetch_record
from server.records.tables import WORKSPACES
from server.records.workspaces import update_workspace
from server.routes.deps import ETAG_HEADER, IfMatch, ListQueryDep, StoreDep, errors, tagged
from server.schemas import Workspace, WorkspaceList

router = APIRouter(tags=["workspaces"])
Caller = Annotated[AuthContext, Depends(require())]
Admin = Annotated[AuthContext, Depends(require("admin"))]


@router.get("/workspaces", response_model=WorkspaceList, responses=errors(400))
def list_workspaces(auth: Caller, store: StoreDep, query: ListQueryDep) -> dict[str, Any]:
    """The key's own workspace, as a list."""
    with store.reading() as conn:
        return list_page(conn, WORKSPACES, auth.workspace_id, query)


@router.get(
    "/workspaces/{workspace_id}",
    response_model=Workspace,
    responses={**errors(404), 200: {"headers": ETAG_HEADER}},
)
def get_workspace(
    workspace_id: str, auth: Caller, store: StoreDep, response: Response
) -> dict[str, Any]:
    with store.reading() as conn:
        return tagged(response, fetch_record(conn, WORKSPACES, auth.workspace_id, workspace_id))


@router.patch(
    "/workspaces/{workspace_id}",
    response_model=Workspace,
    responses={**errors(400, 403, 404, 412, 413), 200: {"headers": ETAG_HEADER}},
)
def patch_workspace(
    workspace_id: str,
    update: WorkspaceUpdate,
    auth: Admin,
    store: StoreDep,
    response: Response,
    if_match: IfMatch = None,
) -> dict[str, Any]:
    with store.transaction(auth.workspace_id) as tx:
        workspace = update_workspace(tx, workspace_id, update, if_match)
    return tagged(response, workspace)
