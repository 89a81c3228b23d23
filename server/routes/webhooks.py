"""`/webhooks`: register receivers, change them, and see their delivery attempts.

The dispatcher (`server.webhook_delivery`, owned by the app) stores the webhooks and delivers;
these routes translate its refusals into 400s naming the member. A webhook of another workspace
is a 404 like any record. Routes are plain functions (run on the thread pool) because a URL is
checked by resolving its host, which blocks.
"""

from __future__ import annotations

import secrets
import sqlite3
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from server.auth import AuthContext, require
from server.errors import InvalidRequest, NotFound
from server.models import IsoDateTime, WebhookCreate, WebhookUpdate
from server.records.listing import Paging
from server.routes.answers import kept
from server.routes.deps import PagingDep, errors
from server.schemas import DeliveryList, Webhook, WebhookCreated, WebhookList
from server.timestamps import format_micros, to_micros
from server.webhook_delivery import WebhookConfigError, WebhookDispatcher
from server.webhook_urls import WebhookURLError

router = APIRouter(tags=["webhooks"])
Manager = Annotated[AuthContext, Depends(require("webhooks:manage"))]


def _dispatcher(request: Request) -> WebhookDispatcher:
    dispatcher: WebhookDispatcher = request.app.state.webhooks
    return dispatcher


Dispatcher = Annotated[WebhookDispatcher, Depends(_dispatcher)]


def _invalid(error: ValueError) -> InvalidRequest:
    field = "url" if isinstance(error, WebhookURLError) else "events"
    return InvalidRequest.for_field(field, str(error))


def _page(records: list[dict[str, Any]], paging: Paging) -> dict[str, Any]:
    chosen = records[paging.offset : paging.offset + paging.per_page]
    return paging.envelope(chosen, len(records))


def _found(webhook: dict[str, Any] | None, webhook_id: str) -> dict[str, Any]:
    if webhook is None:
        raise NotFound(f"No webhook with id `{webhook_id}`.")
    return webhook


@router.get("/webhooks", response_model=WebhookList, responses=errors(400, 403))
def list_webhooks(
    auth: Manager,
    webhooks: Dispatcher,
    paging: PagingDep,
    updated_after: Annotated[
        IsoDateTime | None,
        Query(description="Only webhooks updated strictly after this ISO 8601 time."),
    ] = None,
) -> dict[str, Any]:
    """Oldest first, without secrets; with `updated_after`, in sync order."""
    found = webhooks.list_webhooks(auth.workspace_id)
    if updated_after is not None:
        after = format_micros(to_micros(updated_after))
        found = sorted(
            (hook for hook in found if hook["updated_at"] > after),
            key=lambda hook: (hook["updated_at"], hook["id"]),
        )
    return _page(found, paging)


@router.post(
    "/webhooks", status_code=201, response_model=WebhookCreated, responses=errors(400, 403, 413)
)
def create_webhook(fields: WebhookCreate, auth: Manager, webhooks: Dispatcher) -> JSONResponse:
    """The answer is the only one that shows `secret` (generated when not given)."""
    secret = fields.secret or f"whsec_{secrets.token_urlsafe(32)}"
    answers: list[JSONResponse] = []

    def answer(conn: sqlite3.Connection, made: dict[str, Any]) -> None:
        answers.append(kept(conn, WebhookCreated, made, 201))

    try:
        webhooks.add_webhook(auth.workspace_id, fields.url, list(fields.events), secret, answer)
    except (WebhookURLError, WebhookConfigError) as error:
        raise _invalid(error) from None
    return answers[0]


@router.get("/webhooks/{webhook_id}", response_model=Webhook, responses=errors(403, 404))
def get_webhook(webhook_id: str, auth: Manager, webhooks: Dispatcher) -> dict[str, Any]:
    return _found(webhooks.get_webhook(auth.workspace_id, webhook_id), webhook_id)


@router.patch(
    "/webhooks/{webhook_id}", response_model=Webhook, responses=errors(400, 403, 404, 413)
)
def patch_webhook(
    webhook_id: str, update: WebhookUpdate, auth: Manager, webhooks: Dispatcher
) -> dict[str, Any]:
    """Pending deliveries go to the new URL with the new secret; a new event filter applies
    to events from now on."""
    _found(webhooks.get_webhook(auth.workspace_id, webhook_id), webhook_id)
    events: list[str] | None = None if update.events is None else list(update.events)
    try:
        changed = webhooks.update_webhook(
            auth.workspace_id, webhook_id, url=update.url, events=events, secret=update.secret
        )
    except (WebhookURLError, WebhookConfigError) as error:
        raise _invalid(error) from None
    return _found(changed, webhook_id)


@router.delete("/webhooks/{webhook_id}", response_model=Webhook, responses=errors(403, 404))
def delete_webhook(webhook_id: str, auth: Manager, webhooks: Dispatcher) -> dict[str, Any]:
    """Answers with the deleted webhook; its pending deliveries are dropped."""
    return _found(webhooks.delete_webhook(auth.workspace_id, webhook_id), webhook_id)


@router.get(
    "/webhooks/{webhook_id}/deliveries",
    response_model=DeliveryList,
    responses=errors(400, 403, 404),
)
def list_deliveries(
    webhook_id: str, auth: Manager, webhooks: Dispatcher, paging: PagingDep
) -> dict[str, Any]:
    """Every attempt, oldest event first, then by attempt number."""
    _found(webhooks.get_webhook(auth.workspace_id, webhook_id), webhook_id)
    return _page(webhooks.deliveries(webhook_id), paging)
