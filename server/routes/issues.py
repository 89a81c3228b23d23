"""Issues: list (with filters), create, read, update, delete."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response
from fastapi.responses import JSONResponse

from server.auth import AuthContext, require
from server.models import IssueCreate, IssueUpdate, Priority, Status
from server.records import issues
from server.records.issues import IssueFilters
from server.routes.answers import kept
from server.routes.deps import ETAG_HEADER, IfMatch, ListQueryDep, StoreDep, errors, tagged
from server.schemas import Issue, IssueList

router = APIRouter(tags=["issues"])
Reader = Annotated[AuthContext, Depends(require("issues:read"))]
Writer = Annotated[AuthContext, Depends(require("issues:write"))]


def _filters(
    status: Status | None = None,
    priority: Priority | None = None,
    assignee: Annotated[str | None, Query(description="A user id.")] = None,
    project_id: str | None = None,
    label: str | None = None,
) -> IssueFilters:
    return IssueFilters(status, priority, assignee, project_id, label)


@router.get("/issues", response_model=IssueList, responses=errors(400, 403))
def list_issues(
    auth: Reader,
    store: StoreDep,
    query: ListQueryDep,
    filters: Annotated[IssueFilters, Depends(_filters)],
) -> dict[str, Any]:
    with store.reading() as conn:
        return issues.list_issues(conn, auth.workspace_id, query, filters)


@router.post("/issues", status_code=201, response_model=Issue, responses=errors(400, 403, 413))
def create_issue(fields: IssueCreate, auth: Writer, store: StoreDep) -> JSONResponse:
    with store.transaction(auth.workspace_id) as tx:
        return kept(tx.conn, Issue, issues.create_issue(tx, fields), 201)


@router.get(
    "/issues/{issue_id}",
    response_model=Issue,
    responses={**errors(403, 404), 200: {"headers": ETAG_HEADER}},
)
def get_issue(issue_id: str, auth: Reader, store: StoreDep, response: Response) -> dict[str, Any]:
    with store.reading() as conn:
        return tagged(response, issues.get_issue(conn, auth.workspace_id, issue_id))


@router.patch(
    "/issues/{issue_id}",
    response_model=Issue,
    responses={**errors(400, 403, 404, 412, 413), 200: {"headers": ETAG_HEADER}},
)
def patch_issue(
    issue_id: str,
    update: IssueUpdate,
    auth: Writer,
    store: StoreDep,
    response: Response,
    if_match: IfMatch = None,
) -> dict[str, Any]:
    with store.transaction(auth.workspace_id) as tx:
        issue = issues.update_issue(tx, issue_id, update, if_match)
    return tagged(response, issue)


@router.delete("/issues/{issue_id}", response_model=Issue, responses=errors(403, 404, 412))
def delete_issue(
    issue_id: str, auth: Writer, store: StoreDep, if_match: IfMatch = None
) -> dict[str, Any]:
    """Answers with the deleted issue; its comments go with it."""
    with store.transaction(auth.workspace_id) as tx:
        return issues.delete_issue(tx, issue_id, if_match)
