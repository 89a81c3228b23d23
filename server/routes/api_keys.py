"""`/api-keys`: list, create (the value shown once), revoke; all need `admin`."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from server.auth import AuthContext, require
from server.errors import InvalidRequest
from server.models import PERMISSIONS, ApiKeyCreate
from server.records import api_keys
from server.routes.answers import kept
from server.routes.deps import PagingDep, StoreDep, errors
from server.schemas import ApiKey, ApiKeyCreated, ApiKeyList
from server.timestamps import to_micros

router = APIRouter(tags=["api-keys"])
Admin = Annotated[AuthContext, Depends(require("admin"))]


def _expiry(fields: ApiKeyCreate, now: int) -> int | None:
    """When the new key expires, in microseconds, from whichever of the two members was sent."""
    if fields.expires_in_days is not None and fields.expires_at is not None:
        raise InvalidRequest.for_field("expires_at", "give it or `expires_in_days`, not both")
    if fields.expires_in_days is not None:
        return now + timedelta(days=fields.expires_in_days) // timedelta(microseconds=1)
    if fields.expires_at is None:
        return None
    expires_at = to_micros(fields.expires_at)
    if expires_at <= now:
        raise InvalidRequest.for_field("expires_at", "must be in the future")
    return expires_at


@router.get("/api-keys", response_model=ApiKeyList, responses=errors(400, 403))
def list_api_keys(auth: Admin, store: StoreDep, paging: PagingDep) -> dict[str, Any]:
    """The workspace's keys, revoked ones included; never a key's value."""
    with store.reading() as conn:
        return api_keys.list_keys(conn, auth.workspace_id, paging)


@router.post(
    "/api-keys", status_code=201, response_model=ApiKeyCreated, responses=errors(400, 403, 413)
)
def create_api_key(fields: ApiKeyCreate, auth: Admin, store: StoreDep) -> JSONResponse:
    """A key of the caller's user; the answer is the only place its value (`key`) appears."""
    permissions: list[str] = (
        list(PERMISSIONS) if fields.permissions is None else list(fields.permissions)
    )
    now = store.now()
    expires_at = _expiry(fields, now)
    with store.transaction(auth.workspace_id) as tx:
        made = api_keys.create_key(tx, auth.user_id, fields.name, permissions, expires_at, now)
        return kept(tx.conn, ApiKeyCreated, made, 201)


@router.delete("/api-keys/{key_id}", response_model=ApiKey, responses=errors(403, 404))
def revoke_api_key(key_id: str, auth: Admin, store: StoreDep) -> dict[str, Any]:
    """Revokes the key (the caller's own too): from now on it is refused with 401."""
    with store.transaction(auth.workspace_id) as tx:
        return api_keys.revoke_key(tx, key_id)
