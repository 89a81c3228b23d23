"""The service beyond issues [ext]: the workspace, API keys, webhooks and their deliveries.

The published API names these areas but none of their endpoints, so everything here follows
the reference service (docs/api.md#workspace-keys-and-webhook-administration) and is used only
where a server answers it. The calls go through the one `ApiClient` of a session, so the
same rate limiter, request log and connection watch see them as every other request; the
webhook calls live updates make are on `ApiClient` already and are reached from here too.

A created key's value and a created webhook's secret are in the answer to their creation only;
`ApiKey.key` and `Webhook.secret` carry them there, and nothing here keeps either.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from pydantic import ValidationError

from cache import Cache, Resource
from sync.client import ApiClient, Response
from sync.errors import NotFound, ProtocolError, UnexpectedStatus, Unsupported
from sync.models import (
    ApiKey,
    DeliveryAttempt,
    Me,
    Page,
    Pagination,
    Record,
    ServerModel,
    Webhook,
    Workspace,
    describe,
    parse_page,
)

T = TypeVar("T")
M = TypeVar("M", bound=ServerModel)
R = TypeVar("R", bound=Record)

PAGE_SIZE = 100
"""The largest page a server gives (docs/api.md#list-envelope-and-paging): the admin lists are
short, so one request is the usual case."""
MAX_PAGES = 50
"""A server whose paging never ends is not followed further than this."""

ABSENT = (NotFound, UnexpectedStatus)
"""How a server answers an operation it does not have: 404, or 405 for a known path."""


@dataclass(frozen=True)
class Rows(Generic[M]):
    """A list of records without ids (delivery attempts), with what could not be read."""

    items: tuple[M, ...]
    pagination: Pagination
    skipped: int = 0


class AdminApi:
    """The admin endpoints over a session's client; cheap to make, holds nothing else."""

    def __init__(self, client: ApiClient) -> None:
        self._client = client

    # --- who the key is ------------------------------------------------------------------

    async def me(self) -> Response[Me]:
        return await self._client.me()

    # --- the workspace -------------------------------------------------------------------

    async def workspace(self) -> Response[Workspace]:
        """The key's own workspace: the first (on the reference service, the only) of
        `GET /workspaces`."""
        response = await self._client.call("GET", "/workspaces")
        page = _read(response, lambda payload: parse_page(payload, Workspace))
        if not page.value.data:
            raise ProtocolError(
                "the server listed no workspace for this key",
                method="GET",
                path="/workspaces",
                meta=response.meta,
            )
        return Response(page.value.data[0], response.meta)

    async def rename_workspace(self, workspace_id: str, name: str) -> Response[Workspace]:
        """`PATCH /workspaces/:id` with `name`; needs `admin`."""
        return await self._client.update_workspace(workspace_id, {"name": name})

    # --- API keys ------------------------------------------------------------------------

    async def list_keys(self) -> list[ApiKey]:
        """Every key of the workspace, revoked ones included; never a key's value."""
        return await _all(lambda page: self._page("/api-keys", ApiKey, page))

    async def create_key(
        self,
        name: str,
        permissions: Sequence[str] | None = None,
        expires_in_days: float | None = None,
    ) -> Response[ApiKey]:
        """`POST /api-keys`; the answer's `key` is the value, shown this once."""
        body: dict[str, Any] = {"name": name}
        if permissions is not None:
            body["permissions"] = list(permissions)
        if expires_in_days is not None:
            body["expires_in_days"] = expires_in_days
        response = await self._client.call("POST", "/api-keys", body=body)
        return _read(response, ApiKey.model_validate)

    async def revoke_key(self, key_id: str) -> Response[ApiKey | None]:
        """`DELETE /api-keys/:id`: refused with 401 from then on (the caller's own key too)."""
        response = await self._client.call("DELETE", _path("api-keys", key_id))
        try:
            return Response(ApiKey.model_validate(response.value), response.meta)
        except ValueError:
            return Response(None, response.meta)

    # --- webhooks ------------------------------------------------------------------------

    async def list_webhooks(self) -> list[Webhook]:
        return await _all(lambda page: self._page("/webhooks", Webhook, page))

    async def get_webhook(self, webhook_id: str) -> Response[Webhook]:
        return await self._client.get_webhook(webhook_id)

    async def create_webhook(
        self, url: str, events: Sequence[str], secret: str | None = None
    ) -> Response[Webhook]:
        """The answer's `secret` is shown this once (generated when not given)."""
        return await self._client.create_webhook(url, events, secret)

    async def update_webhook(
        self, webhook_id: str, changes: Mapping[str, Any]
    ) -> Response[Webhook]:
        return await self._client.update_webhook(webhook_id, changes)

    async def delete_webhook(self, webhook_id: str) -> Response[Webhook | None]:
        return await self._client.delete_webhook(webhook_id)

    async def deliveries(self, webhook_id: str) -> list[DeliveryAttempt]:
        """Every delivery attempt of a webhook, oldest event first."""
        path = _path("webhooks", webhook_id) + "/deliveries"
        found: list[DeliveryAttempt] = []
        for page in range(1, MAX_PAGES + 1):
            query = {"page": page, "per_page": PAGE_SIZE}
            response = await self._client.call("GET", path, query=query)
            rows = _read(response, lambda payload: parse_rows(payload, DeliveryAttempt)).value
            found.extend(rows.items)
            if _last(len(rows.items) + rows.skipped, len(found), rows.pagination):
                break
        return found

    async def redeliver(self, webhook_id: str, event_id: str) -> Response[object]:
        """Ask the server to deliver an event again, where it can: the reference service has
        no such operation (docs/api.md#workspace-keys-and-webhook-administration), so a server
        without it answers 404 or 405 and this raises `Unsupported` (after checking that the
        webhook itself exists, which a 404 would also mean)."""
        path = f"{_path('webhooks', webhook_id)}/deliveries/{quote(event_id, safe='')}/redeliver"
        try:
            return await self._client.call("POST", path)
        except ABSENT as error:
            absent = error
        await self._client.get_webhook(webhook_id)  # a 404 here: no such webhook
        raise Unsupported(
            "redeliver",
            f"this server cannot redeliver webhook events (POST {path} answered "
            f"{absent.status}); the service retries failed deliveries by itself",
        )

    async def _page(self, path: str, model: type[R], page: int) -> Page[R]:
        query = {"page": page, "per_page": PAGE_SIZE}
        response = await self._client.call("GET", path, query=query)
        return _read(response, lambda payload: parse_page(payload, model)).value


async def _all(fetch: Callable[[int], Awaitable[Page[R]]]) -> list[R]:
    """Every record of a list, page after page."""
    found: list[R] = []
    for number in range(1, MAX_PAGES + 1):
        page = await fetch(number)
        found.extend(page.data)
        if _last(page.received, len(found), page.pagination):
            break
    return found


def _last(received: int, so_far: int, pagination: Pagination) -> bool:
    """Whether a page was the last: short, or the total is reached."""
    if received < (pagination.per_page or PAGE_SIZE) or received == 0:
        return True
    return pagination.total is not None and so_far >= pagination.total


@dataclass(frozen=True)
class OwnKey:
    """Which listed key the caller's own may be, told without sending its value anywhere.

    No answer names the key a request used (docs/api.md#workspace-keys-and-webhook-administration),
    but the listing holds every key of the workspace, the caller's included, and `/me` gives
    that key's exact permissions: the caller's key is one of the active, unexpired keys with
    exactly those permissions. `candidates` are those ids; `mine` is the one when it is alone."""

    candidates: frozenset[str]

    @property
    def mine(self) -> str | None:
        return next(iter(self.candidates)) if len(self.candidates) == 1 else None

    def may_be(self, key_id: str) -> bool:
        return key_id in self.candidates


def own_key(keys: Sequence[ApiKey], granted: frozenset[str], now: datetime) -> OwnKey:
    """The listed keys that may be the caller's own, by `/me`'s `granted` permissions."""
    return OwnKey(
        frozenset(
            key.id
            for key in keys
            if not key.revoked
            and (key.expires_at is None or key.expires_at > now)
            and frozenset(key.permissions) == granted
        )
    )


def keep_workspace(cache: Cache, workspace: Workspace) -> None:
    """Store the workspace as read, so a rename can be queued offline against it and shows
    at once (the pull does not list workspaces: it is one record, read where it is shown)."""
    cache.server.apply_page(Resource.WORKSPACES, [workspace.raw])


def parse_rows(payload: object, model: type[M]) -> Rows[M]:
    """A list envelope of records without ids; unreadable rows are counted and skipped."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("data"), list):
        raise ValueError("not a list envelope with a 'data' array")
    pagination = Pagination.model_validate(payload.get("pagination") or {})
    items: list[M] = []
    skipped = 0
    for item in payload["data"]:
        try:
            items.append(model.model_validate(item))
        except ValueError:
            skipped += 1
    return Rows(tuple(items), pagination, skipped)


def _read(response: Response[object], parse: Callable[[object], T]) -> Response[T]:
    """Parse a 2xx body; a body of the wrong shape is a `ProtocolError`."""
    meta = response.meta
    try:
        return Response(parse(response.value), meta)
    except ValueError as error:
        reason = describe(error) if isinstance(error, ValidationError) else str(error)
        raise ProtocolError(
            f"unexpected answer ({reason})", method=meta.method, path=meta.path, meta=meta
        ) from error


def _path(collection: str, record_id: str) -> str:
    """A record's path; ids are opaque, so they are quoted whole."""
    return f"/{collection}/{quote(record_id, safe='')}"
