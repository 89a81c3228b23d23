"""What the endpoints share: the store, list parameters, preconditions, declared errors."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Header, Query, Request, Response

from server.etag import etag
from server.models import IsoDateTime
from server.records.listing import ListQuery, Paging
from server.records.rows import Record
from server.schemas import ErrorEnvelope
from server.store import Store
from server.timestamps import to_micros


def _store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


StoreDep = Annotated[Store, Depends(_store)]


def _paging(
    page: Annotated[int, Query(ge=1, description="Page number, from 1.")] = 1,
    per_page: Annotated[int, Query(ge=1, le=100, description="Records per page.")] = 25,
) -> Paging:
    return Paging(page, per_page)


PagingDep = Annotated[Paging, Depends(_paging)]


def _list_query(
    paging: PagingDep,
    updated_after: Annotated[
        IsoDateTime | None,
        Query(
            description="Only records updated strictly after this ISO 8601 time (UTC when it "
            "has no offset); the list is then ordered by (updated_at, id)."
        ),
    ] = None,
    include_deleted: Annotated[
        bool,
        Query(description="Also list records deleted after `updated_after`, as tombstones."),
    ] = False,
) -> ListQuery:
    after = None if updated_after is None else to_micros(updated_after)
    return ListQuery(paging, after, include_deleted)


ListQueryDep = Annotated[ListQuery, Depends(_list_query)]

IfMatch = Annotated[
    str | None,
    Header(description="Answer 412 unless the record still has this ETag."),
]


def tagged(response: Response, record: Record) -> Record:
    """Give the response the record's ETag and return the record."""
    response.headers["ETag"] = etag(record)
    return record


_DESCRIPTIONS = {
    400: "Invalid request (`invalid_request`, `invalid_transition`, `idempotency_key_reused`).",
    401: "Missing, invalid, revoked or expired API key (`unauthorized`).",
    403: "The API key lacks a permission (`forbidden`).",
    404: "No such record in the caller's workspace (`not_found`).",
    412: "`If-Match` does not match the record's ETag (`precondition_failed`).",
    413: "Request body larger than 1 MiB (`payload_too_large`).",
    500: "Unexpected server error (`internal_error`).",
}


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The error responses of an endpoint for OpenAPI; 401 and 500 can happen anywhere."""
    return {
        status: {"model": ErrorEnvelope, "description": _DESCRIPTIONS[status]}
        for status in sorted({401, 500, *statuses})
    }


ETAG_HEADER = {"ETag": {"description": "The record's entity tag.", "schema": {"type": "string"}}}
