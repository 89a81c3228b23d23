"""Comments: list (per issue or all), create; the author alone may update or delete."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response
from fastapi.responses import JSONResponse

from server.auth import AuthContext, require
from server.models import CommentCreate, CommentUpdate
from server.records import comments
from server.routes.answers import kept
from server.routes.deps import ETAG_HEADER, IfMatch, ListQueryDep, StoreDep, errors, tagged
from server.schemas import Comment, CommentList

router = APIRouter(tags=["comments"])
Reader = Annotated[AuthContext, Depends(require("comments:read"))]
Writer = Annotated[AuthContext, Depends(require("comments:write"))]


@router.get("/comments", response_model=CommentList, responses=errors(400, 403))
def list_comments(
    auth: Reader,
    store: StoreDep,
    query: ListQueryDep,
    issue_id: Annotated[str | None, Query(description="Only this issue's comments.")] = None,
) -> dict[str, Any]:
    with store.reading() as conn:
        return comments.list_comments(conn, auth.workspace_id, query, issue_id)


@router.post("/comments", status_code=201, response_model=Comment, responses=errors(400, 403, 413))
def create_comment(fields: CommentCreate, auth: Writer, store: StoreDep) -> JSONResponse:
    with store.transaction(auth.workspace_id) as tx:
        return kept(tx.conn, Comment, comments.create_comment(tx, auth.user_id, fields), 201)


@router.get(
    "/comments/{comment_id}",
    response_model=Comment,
    responses={**errors(403, 404), 200: {"headers": ETAG_HEADER}},
)
def get_comment(
    comment_id: str, auth: Reader, store: StoreDep, response: Response
) -> dict[str, Any]:
    with store.reading() as conn:
        return tagged(response, comments.get_comment(conn, auth.workspace_id, comment_id))


@router.patch(
    "/comments/{comment_id}",
    response_model=Comment,
    responses={**errors(400, 403, 404, 412, 413), 200: {"headers": ETAG_HEADER}},
)
def patch_comment(
    comment_id: str,
    update: CommentUpdate,
    auth: Writer,
    store: StoreDep,
    response: Response,
    if_match: IfMatch = None,
) -> dict[str, Any]:
    with store.transaction(auth.workspace_id) as tx:
        comment = comments.update_comment(tx, comment_id, auth.user_id, update, if_match)
    return tagged(response, comment)


@router.delete("/comments/{comment_id}", response_model=Comment, responses=errors(403, 404, 412))
def delete_comment(
    comment_id: str, auth: Writer, store: StoreDep, if_match: IfMatch = None
) -> dict[str, Any]:
    with store.transaction(auth.workspace_id) as tx:
        return comments.delete_comment(tx, comment_id, auth.user_id, if_match)
