"""`POST /issues/bulk`: up to 100 issue operations, each succeeding or failing alone.

Every operation is validated by the same models and applied by the same functions as the
single endpoints, each in a step (a savepoint) of one transaction, so a failure rolls back that
operation only and the events of the others are still emitted. One transaction, because the
answer is stored with the writes under the request's `Idempotency-Key` (`server.idempotency`):
a retry after a crash replays it rather than applying the operations again.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from server.auth import AuthContext, require
from server.errors import InvalidRequest, ServiceError
from server.idempotency import keep_answer
from server.models import (
    BULK_OPERATIONS,
    BulkOperation,
    BulkRequest,
    CreateOperation,
    UpdateOperation,
)
from server.records import issues
from server.records.rows import Record
from server.routes.deps import StoreDep, errors
from server.schemas import BulkResults
from server.store import Transaction
from server.validation import invalid_request

router = APIRouter(tags=["issues"])


def _parse(operation: dict[str, Any]) -> BulkOperation:
    kind = operation.get("op")
    model = BULK_OPERATIONS.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise InvalidRequest.for_field("op", "must be one of `create`, `update`, `delete`")
    try:
        return model.model_validate(operation)
    except ValidationError as error:
        raise invalid_request(error.errors()) from None


def _apply(tx: Transaction, operation: dict[str, Any]) -> tuple[int, Record]:
    parsed = _parse(operation)
    with tx.step():
        if isinstance(parsed, CreateOperation):
            return 201, issues.create_issue(tx, parsed.fields)
        if isinstance(parsed, UpdateOperation):
            return 200, issues.update_issue(tx, parsed.id, parsed.changes)
        return 200, issues.delete_issue(tx, parsed.id)


@router.post("/issues/bulk", response_model=BulkResults, responses=errors(400, 403, 413))
def bulk_issues(
    request: BulkRequest,
    auth: Annotated[AuthContext, Depends(require("issues:write"))],
    store: StoreDep,
) -> JSONResponse:
    """Results come in the order of the operations: `{index, status, issue}` for a success,
    `{index, status, error}` (the published error object) for a failure."""
    results: list[dict[str, Any]] = []
    with store.transaction(auth.workspace_id) as tx:
        for index, operation in enumerate(request.operations):
            try:
                status, issue = _apply(tx, operation)
            except ServiceError as error:
                results.append({"index": index, "status": error.status, **error.envelope()})
            else:
                results.append({"index": index, "status": status, "issue": issue})
        answer = JSONResponse({"data": results})
        keep_answer(tx.conn, answer)
    return answer
