"""The HTTP API client: the published endpoints (docs/api.md) over one long-lived
`httpx.AsyncClient`.

Every call returns a `Response[T]`: the parsed `value` and the `meta` of its response (status,
`Date`, `X-RateLimit-*`, `Retry-After`, `ETag`). Per call rather than "the latest meta" on the
client, because calls run concurrently and an ETag belongs to the record it came with.

Errors are those of `sync.errors`, never httpx's. With a `RateLimiter`, every request first
waits for a slot and every response (errors and 429s included) is shown to it; a request that
never reached the server (connection refused) gives its slot back.

The key arrives as a `Secret` (never a `str`, so no frame on its way here, the login screen's
worker included, holds it in plain) and is kept as one, and in the `httpx.AsyncClient`'s
headers, which httpx masks in its `repr`; no exception raised here holds a request, a header or
the key, and none is chained to an httpx exception (whose traceback frames hold the raw
headers).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Self, TypeVar
from urllib.parse import quote

import httpx
from pydantic import ValidationError

from accounts.secret import Secret, key_problem
from sync.errors import (
    ApiError,
    ErrorBody,
    IdempotencyKeyReused,
    NetworkError,
    ProtocolError,
    SyncError,
    error_for,
)
from sync.models import (
    BulkOperation,
    BulkResult,
    Comment,
    Issue,
    Me,
    Page,
    Project,
    Record,
    User,
    Webhook,
    Workspace,
    describe,
    parse_bulk,
    parse_page,
)
from sync.ratelimit import RateLimiter, RequestClass, ResponseMeta, bucket_for, read_meta
from sync.timeutil import format_timestamp
from sync.wire_text import may_hold_lone_surrogates, replaced

DEFAULT_USER_AGENT = "tracker-tui/0.1"

T = TypeVar("T")
R = TypeVar("R", bound=Record)

Peek = Callable[[object], Awaitable[None]]
"""Shown a list's JSON body (a 2xx's, not yet checked) before the page is parsed: a pull
can start its next request from what the body says while this one is parsed."""

QueryValue = str | int | bool | datetime | Sequence[str] | None

Observer = Callable[[ResponseMeta | SyncError], None]
"""Told the outcome of every request as soon as it is known: the meta of a 2xx, else the
error it raises (an `ApiError`, a `NetworkError`). The engine builds its connection state
from these (`sync.connection`), so a failure anywhere shows at once, not when a pass gives
up after its retries. It must not block or raise."""


@dataclass(frozen=True)
class Response(Generic[T]):
    """A parsed answer and what its headers said."""

    value: T
    meta: ResponseMeta


class ApiClient:
    """A client for any server with the published API; one per process and profile.

    Use as `async with ApiClient(...) as client:` or call `aclose()`. `transport` replaces the
    network (tests: `httpx.MockTransport`, `httpx.ASGITransport`).
    """

    def __init__(
        self,
        base_url: str,
        api_key: Secret,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 10.0,
        limiter: RateLimiter | None = None,
        user_agent: str = DEFAULT_USER_AGENT,
        observer: Observer | None = None,
    ) -> None:
        if not isinstance(api_key, Secret):
            raise TypeError("ApiClient takes the API key as a Secret (accounts.secret), not a str")
        problem = key_problem(api_key)
        if problem is not None:
            raise ValueError(f"the API key {problem}")
        self._key = Secret(api_key.reveal().strip())
        self._base_url = base_url.rstrip("/")
        self._limiter = limiter
        self._observer = observer
        self._request_class = RequestClass.USER
        try:
            self._http = httpx.AsyncClient(
                base_url=self._base_url + "/",
                transport=transport,
                timeout=timeout,
                follow_redirects=False,
                headers={"Accept": "application/json", "User-Agent": user_agent},
            )
        except httpx.InvalidURL as error:
            raise ValueError(f"invalid base URL {base_url!r}: {error}") from error
        self._http.headers["Authorization"] = f"Bearer {self._key.reveal()}"

    def __repr__(self) -> str:
        return f"ApiClient(base_url={self._base_url!r}, request_class={self._request_class.name})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool (shared with every `with_request_class` view)."""
        await self._http.aclose()

    def with_request_class(self, request_class: RequestClass) -> ApiClient:
        """A view sharing this client's connections and limiter, sending as `request_class`.

        Background polling uses `client.with_request_class(RequestClass.BACKGROUND)`; close only the
        original.
        """
        view = copy.copy(self)
        view._request_class = request_class
        return view

    # --- the key ---------------------------------------------------------------------------

    async def me(self) -> Response[Me]:
        """`GET /me` (docs/api.md#current-user-get-me). Tells the limiter the plan when the answer
        names one."""
        payload, meta = await self._exchange("GET", "/me")
        answer = self._parsed(meta, lambda: Me.model_validate(payload))
        if self._limiter is not None:
            self._limiter.set_plan(answer.effective_plan)
        return Response(answer, meta)

    # --- issues ----------------------------------------------------------------------------

    async def list_issues(
        self,
        *,
        page: int | None = None,
        per_page: int | None = None,
        updated_after: str | datetime | None = None,
        include_deleted: bool | None = None,
        peek: Peek | None = None,
        **filters: QueryValue,
    ) -> Response[Page[Issue]]:
        """`GET /issues`. Pass `updated_after` as the server's own string when you have it.

        `filters` (docs/api.md#list-filters): status, priority, assignee, project_id, label. `peek`:
        see `Peek`.
        """
        query = _listing(page, per_page, updated_after, include_deleted) | dict(filters)
        return await self._list("/issues", Issue, query, peek)

    async def get_issue(self, issue_id: str) -> Response[Issue]:
        return await self._record("GET", _path("issues", issue_id), Issue)

    async def create_issue(
        self, fields: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> Response[Issue]:
        """`POST /issues`; reuse one `idempotency_key` for every attempt of one write."""
        return await self._record("POST", "/issues", Issue, body=fields, key=idempotency_key)

    async def update_issue(
        self, issue_id: str, changes: Mapping[str, Any], *, if_match: str | None = None
    ) -> Response[Issue]:
        path = _path("issues", issue_id)
        return await self._record("PATCH", path, Issue, body=changes, if_match=if_match)

    async def delete_issue(
        self, issue_id: str, *, if_match: str | None = None
    ) -> Response[Issue | None]:
        """`DELETE /issues/:id`; the value is None when the answer holds no readable record."""
        return await self._delete(_path("issues", issue_id), Issue, if_match)

    # --- projects --------------------------------------------------------------------------

    async def list_projects(
        self,
        *,
        page: int | None = None,
        per_page: int | None = None,
        updated_after: str | datetime | None = None,
        include_deleted: bool | None = None,
        peek: Peek | None = None,
    ) -> Response[Page[Project]]:
        query = _listing(page, per_page, updated_after, include_deleted)
        return await self._list("/projects", Project, query, peek)

    async def get_project(self, project_id: str) -> Response[Project]:
        return await self._record("GET", _path("projects", project_id), Project)

    async def create_project(
        self, fields: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> Response[Project]:
        return await self._record("POST", "/projects", Project, body=fields, key=idempotency_key)

    async def update_project(
        self, project_id: str, changes: Mapping[str, Any], *, if_match: str | None = None
    ) -> Response[Project]:
        path = _path("projects", project_id)
        return await self._record("PATCH", path, Project, body=changes, if_match=if_match)

    async def delete_project(
        self, project_id: str, *, if_match: str | None = None
    ) -> Response[Project | None]:
        return await self._delete(_path("projects", project_id), Project, if_match)

    # --- the workspace [ext] ------------------------------------------------------------------

    async def get_workspace(self, workspace_id: str) -> Response[Workspace]:
        return await self._record("GET", _path("workspaces", workspace_id), Workspace)

    async def update_workspace(
        self, workspace_id: str, changes: Mapping[str, Any], *, if_match: str | None = None
    ) -> Response[Workspace]:
        """`PATCH /workspaces/:id` (docs/api.md#workspace-keys-and-webhook-administration):
        a rename, which needs `admin`."""
        path = _path("workspaces", workspace_id)
        return await self._record("PATCH", path, Workspace, body=changes, if_match=if_match)

    # --- comments, users, search -------------------------------------------------------------

    async def list_comments(
        self,
        issue_id: str | None = None,
        *,
        page: int | None = None,
        per_page: int | None = None,
        updated_after: str | datetime | None = None,
        include_deleted: bool | None = None,
        peek: Peek | None = None,
    ) -> Response[Page[Comment]]:
        """`GET /comments` (docs/api.md#comment-and-user-lists), of one issue or (where the server
        allows) of all."""
        query = _listing(page, per_page, updated_after, include_deleted) | {"issue_id": issue_id}
        return await self._list("/comments", Comment, query, peek)

    async def create_comment(
        self, issue_id: str, body: str, *, idempotency_key: str | None = None
    ) -> Response[Comment]:
        fields = {"issue_id": issue_id, "body": body}
        return await self._record("POST", "/comments", Comment, body=fields, key=idempotency_key)

    async def update_comment(
        self, comment_id: str, body: str, *, if_match: str | None = None
    ) -> Response[Comment]:
        path = _path("comments", comment_id)
        return await self._record("PATCH", path, Comment, body={"body": body}, if_match=if_match)

    async def delete_comment(
        self, comment_id: str, *, if_match: str | None = None
    ) -> Response[Comment | None]:
        return await self._delete(_path("comments", comment_id), Comment, if_match)

    async def list_users(
        self,
        *,
        page: int | None = None,
        per_page: int | None = None,
        updated_after: str | datetime | None = None,
        peek: Peek | None = None,
    ) -> Response[Page[User]]:
        """`GET /users` (docs/api.md#comment-and-user-lists): the workspace's members, for assignee
        pickers."""
        query = _listing(page, per_page, updated_after, None)
        return await self._list("/users", User, query, peek)

    async def search(
        self, q: str, *, page: int | None = None, per_page: int | None = None
    ) -> Response[Page[Issue]]:
        """`GET /search?q=`: issues whose title or description match (30 requests a minute)."""
        query = _listing(page, per_page, None, None) | {"q": q}
        return await self._list("/search", Issue, query)

    # --- bulk ------------------------------------------------------------------------------

    async def bulk(
        self, operations: Sequence[BulkOperation], *, idempotency_key: str | None = None
    ) -> Response[list[BulkResult]]:
        """`POST /issues/bulk` [ext path]: up to 100 operations for one request of every limit."""
        body = {"operations": [operation.to_json() for operation in operations]}
        return await self.bulk_body(body, idempotency_key=idempotency_key)

    async def bulk_body(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> Response[list[BulkResult]]:
        """`POST /issues/bulk` with a body already built: a request sent again under its
        first key must carry its first body, byte for byte."""
        payload, meta = await self._exchange("POST", "/issues/bulk", body=body, key=idempotency_key)
        return Response(self._parsed(meta, lambda: parse_bulk(payload)), meta)

    async def key_used(self, path: str, key: str) -> bool:
        """Whether the server holds an answer under `Idempotency-Key` `key` for a POST to
        `path` [ext]: an empty body is sent under it, which creates nothing anywhere (every
        create needs a field). A server that honours keys and holds one refuses it as
        `idempotency_key_reused`; any other refusal (the missing field, an unknown path) says
        no, which on a server that ignores keys means nothing. Transient failures, 401, 403
        and 429 are raised: they say nothing either way."""
        try:
            await self._exchange("POST", path, body={}, key=key)
        except IdempotencyKeyReused:
            return True
        except ApiError as error:
            if error.status in (401, 403, 429) or error.status >= 500:
                raise
            return False
        return False

    # --- webhooks --------------------------------------------------------------------------

    async def create_webhook(
        self, url: str, events: Sequence[str], secret: str | None = None
    ) -> Response[Webhook]:
        """`POST /webhooks`; the answer holds the secret (generated when not given) once."""
        fields: dict[str, Any] = {"url": url, "events": list(events)}
        if secret is not None:
            fields["secret"] = secret
        return await self._record("POST", "/webhooks", Webhook, body=fields)

    async def list_webhooks(
        self, *, page: int | None = None, per_page: int | None = None
    ) -> Response[Page[Webhook]]:
        return await self._list("/webhooks", Webhook, _listing(page, per_page, None, None))

    async def get_webhook(self, webhook_id: str) -> Response[Webhook]:
        return await self._record("GET", _path("webhooks", webhook_id), Webhook)

    async def update_webhook(
        self, webhook_id: str, changes: Mapping[str, Any]
    ) -> Response[Webhook]:
        return await self._record("PATCH", _path("webhooks", webhook_id), Webhook, body=changes)

    async def delete_webhook(self, webhook_id: str) -> Response[Webhook | None]:
        return await self._delete(_path("webhooks", webhook_id), Webhook, None)

    async def call(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, QueryValue] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> Response[object]:
        """One request this class has no method for (`sync.admin`): the JSON of its 2xx body
        (None when empty), through the same limiter, observer and errors as every call."""
        payload, meta = await self._exchange(method, path, query=query, body=body)
        return Response(payload, meta)

    # --- plumbing --------------------------------------------------------------------------

    async def _list(
        self,
        path: str,
        model: type[R],
        query: Mapping[str, QueryValue],
        peek: Peek | None = None,
    ) -> Response[Page[R]]:
        payload, meta = await self._exchange("GET", path, query=query)
        if peek is not None:
            await peek(payload)
        return Response(self._parsed(meta, lambda: parse_page(payload, model)), meta)

    async def _record(
        self,
        method: str,
        path: str,
        model: type[R],
        *,
        body: Mapping[str, Any] | None = None,
        key: str | None = None,
        if_match: str | None = None,
    ) -> Response[R]:
        payload, meta = await self._exchange(method, path, body=body, key=key, if_match=if_match)
        return Response(self._parsed(meta, lambda: model.model_validate(payload)), meta)

    async def _delete(self, path: str, model: type[R], if_match: str | None) -> Response[R | None]:
        """The published API leaves DELETE's answer open: the 2xx is what counts; a record is a
        bonus."""
        payload, meta = await self._exchange("DELETE", path, if_match=if_match)
        try:
            return Response(model.model_validate(payload), meta)
        except ValidationError:
            return Response(None, meta)

    def _parsed(self, meta: ResponseMeta, parse: Callable[[], T]) -> T:
        """Run a parser over a 2xx body; a body of the wrong shape is a `ProtocolError`."""
        try:
            return parse()
        except ValueError as error:
            reason = describe(error) if isinstance(error, ValidationError) else str(error)
            raise ProtocolError(
                f"unexpected answer ({reason})", method=meta.method, path=meta.path, meta=meta
            ) from error

    async def _exchange(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, QueryValue] | None = None,
        body: Mapping[str, Any] | None = None,
        key: str | None = None,
        if_match: str | None = None,
    ) -> tuple[object, ResponseMeta]:
        """Send one request and return its JSON body (None when empty) and meta.

        Failures are raised outside the `except` blocks, so that they have no `__context__`.
        """
        extra = {"Idempotency-Key": key, "If-Match": if_match}
        headers = {name: value for name, value in extra.items() if value is not None}
        sent_at = await self._acquire(method, path)
        request = self._http.build_request(
            method, path, params=_query(query or {}), json=body, headers=headers
        )
        no_answer: NetworkError | None = None
        try:
            response = await self._http.send(request, stream=True)
        except (httpx.TransportError, httpx.DecodingError) as error:
            no_answer = network_error(error, method, path)
        if no_answer is not None:
            if not no_answer.request_sent:
                self._not_sent(method, path, sent_at)
            self._tell(no_answer)
            raise no_answer
        failure: SyncError | None = None
        content: bytes | None = None
        undecodable = False
        try:
            content = self._redact(await response.aread())
        except httpx.DecodingError:
            undecodable = True
        except httpx.TransportError as error:
            failure = network_error(error, method, path, reading_body=True)
        finally:
            await response.aclose()
        meta = self._observe(method, path, response, content, sent_at)
        if failure is not None:
            self._tell(failure)
            raise failure
        if undecodable:
            raise ProtocolError("undecodable body", method=method, path=path, meta=meta)
        return _body(method, path, meta, content), meta

    def _observe(
        self,
        method: str,
        path: str,
        response: httpx.Response,
        content: bytes | None,
        sent_at: float | None,
    ) -> ResponseMeta:
        """Read a response's meta and show it to the limiter; raise if its status is an error."""
        ok = 200 <= response.status_code < 300
        error_body = ErrorBody() if ok or content is None else ErrorBody.from_content(content)
        meta = read_meta(
            method,
            path,
            response.status_code,
            response.headers,
            body_retry_after=error_body.retry_after,
            sent_at=sent_at,
            server_now=self._limiter.server_now() if self._limiter else time.time(),
        )
        if self._limiter is not None:
            self._limiter.on_response(meta)
        if not ok:
            error = error_for(meta, error_body)
            self._tell(error)
            raise error
        self._tell(meta)
        return meta

    def _tell(self, outcome: ResponseMeta | SyncError) -> None:
        if self._observer is not None:
            self._observer(outcome)

    def _redact(self, content: bytes) -> bytes:
        """A body with any echo of the key blanked out, before anything (a local) holds it."""
        return content.replace(self._key.reveal().encode(), b"[redacted]")

    def _not_sent(self, method: str, path: str, sent_at: float | None) -> None:
        """Give back the limiter's slot of a request that never reached the server."""
        if self._limiter is not None and sent_at is not None:
            self._limiter.not_sent(sent_at, bucket_for(method, path), self._request_class)

    async def _acquire(self, method: str, path: str) -> float | None:
        if self._limiter is None:
            return None
        return await self._limiter.acquire(bucket_for(method, path), self._request_class)


def _body(method: str, path: str, meta: ResponseMeta, content: bytes | None) -> object:
    """The JSON of a 2xx body, None when empty; malformed or truncated JSON is a ProtocolError."""
    if content is None or not content.strip():
        return None
    try:
        decoded = json.loads(content)
    except ValueError:
        pass
    else:
        return replaced(decoded) if may_hold_lone_surrogates(content) else decoded
    message = "body is not JSON (malformed or truncated)"
    raise ProtocolError(message, method=method, path=path, meta=meta)


def _path(collection: str, record_id: str) -> str:
    """A record's path; ids are opaque, so they are quoted whole (a `/` stays in the id)."""
    return f"/{collection}/{quote(record_id, safe='')}"


def _listing(
    page: int | None,
    per_page: int | None,
    updated_after: str | datetime | None,
    include_deleted: bool | None,
) -> dict[str, QueryValue]:
    return {
        "page": page,
        "per_page": per_page,
        "updated_after": updated_after,
        "include_deleted": include_deleted,
    }


def _query(params: Mapping[str, QueryValue]) -> dict[str, str | list[str]]:
    """Query parameters as strings: booleans as `true`/`false`, times as the reference service
    writes them (docs/api.md#timestamps)."""
    query: dict[str, str | list[str]] = {}
    for name, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            query[name] = "true" if value else "false"
        elif isinstance(value, datetime):
            query[name] = format_timestamp(value)
        elif isinstance(value, str | int):
            query[name] = str(value)
        else:
            query[name] = [str(item) for item in value]
    return query


_NOT_SENT = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
    httpx.ProxyError,
    httpx.UnsupportedProtocol,
    httpx.LocalProtocolError,
)
"""httpx failures before any byte of the request left: the server cannot have acted."""


def network_error(
    error: httpx.RequestError, method: str, path: str, *, reading_body: bool = False
) -> NetworkError:
    """Our error for httpx's, keeping only its class and text (which hold no header).

    Anything but a failure to connect may come after the request (or part of it) was sent:
    a write timeout, a reset, a read timeout, a reset mid-body (`reading_body`), an answer
    too garbled to decode before its status could be read.
    """
    sent = reading_body or not isinstance(error, _NOT_SENT)
    detail = f"{type(error).__name__}: {str(error) or 'no detail'}"
    return NetworkError(detail, method=method, path=path, request_sent=sent)
