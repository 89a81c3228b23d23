"""The answer of a POST, rendered inside the transaction of the write it answers.

FastAPI renders a route's return value after the route has returned, so after its transaction
has committed: too late to store the answer with the write under the request's
`Idempotency-Key` (`server.idempotency`). POST routes render it themselves, through the same
response model, while the transaction is still open.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from fastapi.responses import JSONResponse
from pydantic import BaseModel

from server.idempotency import keep_answer


def kept(
    conn: sqlite3.Connection, model: type[BaseModel], record: Mapping[str, Any], status: int
) -> JSONResponse:
    """`record` as `model` prints it, stored in the transaction open on `conn`."""
    content = model.model_validate(record).model_dump(mode="json", by_alias=True)
    answer = JSONResponse(content, status_code=status)
    keep_answer(conn, answer)
    return answer
