"""Projects: list, create, read, update, delete."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Response
from fastapi.responses import JSONResponse

from server.auth import AuthContext, require
from server.models import ProjectCreate, ProjectUpdate
from server.records import projects
from server.routes.answers import kept
from server.routes.deps import ETAG_HEADER, IfMatch, ListQueryDep, StoreDep, errors, tagged
from server.schemas import Project, ProjectList

router = APIRouter(tags=["projects"])
Reader = Annotated[AuthContext, Depends(require("projects:read"))]
Writer = Annotated[AuthContext, Depends(require("projects:write"))]


@router.get("/projects", response_model=ProjectList, responses=errors(400, 403))
def list_projects(auth: Reader, store: StoreDep, query: ListQueryDep) -> dict[str, Any]:
    with store.reading() as conn:
        return projects.list_projects(conn, auth.workspace_id, query)


@router.post("/projects", status_code=201, response_model=Project, responses=errors(400, 403, 413))
def create_project(fields: ProjectCreate, auth: Writer, store: StoreDep) -> JSONResponse:
    with store.transaction(auth.workspace_id) as tx:
        return kept(tx.conn, Project, projects.create_project(tx, fields), 201)


@router.get(
    "/projects/{project_id}",
    response_model=Project,
    responses={**errors(403, 404), 200: {"headers": ETAG_HEADER}},
)
def get_project(
    project_id: str, auth: Reader, store: StoreDep, response: Response
) -> dict[str, Any]:
    with store.reading() as conn:
        return tagged(response, projects.get_project(conn, auth.workspace_id, project_id))


@router.patch(
    "/projects/{project_id}",
    response_model=Project,
    responses={**errors(400, 403, 404, 412, 413), 200: {"headers": ETAG_HEADER}},
)
def patch_project(
    project_id: str,
    update: ProjectUpdate,
    auth: Writer,
    store: StoreDep,
    response: Response,
    if_match: IfMatch = None,
) -> dict[str, Any]:
    with store.transaction(auth.workspace_id) as tx:
        project = projects.update_project(tx, project_id, update, if_match)
    return tagged(response, project)


@router.delete("/projects/{project_id}", response_model=Project, responses=errors(403, 404, 412))
def delete_project(
    project_id: str, auth: Writer, store: StoreDep, if_match: IfMatch = None
) -> dict[str, Any]:
    """Answers with the deleted project; its issues stay, with `project_id` cleared."""
    with store.transaction(auth.workspace_id) as tx:
        return projects.delete_project(tx, project_id, if_match)
