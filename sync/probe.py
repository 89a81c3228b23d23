"""Finding out which optional features (docs/api.md#optional-features) a server has
(`sync.features.ServerFeatures`) by asking.

`detect_features` costs, on a server with every extension: 1 (`/me`) + 1 (a list of issues,
which also answers updated_after, include_deleted, order, page size and usually ETag) + 1 (one
issue, only when the list had no `ETag`) + 1 (bulk) + 1 (comments) + 1 (users) = 5 or 6
requests. A server refusing list parameters costs one more list request per parameter refused
(at most 3); a server with only the published API that refuses `include_deleted` costs 8.

Idempotency cannot be probed safely: the only test is to create something twice. It stays None
until sync observes it: a retry with the same `Idempotency-Key` answered with the first
attempt's record (True), an `idempotency_key_reused` error (True), or a duplicate (False).
Until then the push engine sends keys anyway (harmless when ignored) and, after an unknown
outcome, looks for its write before sending it again (docs/sync.md#unknown-outcomes).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from sync.client import ApiClient, Response
from sync.errors import (
    ApiError,
    InvalidRequest,
    NetworkError,
    ProtocolError,
    RateLimited,
    ServerError,
    SyncError,
    Unauthorized,
)
from sync.features import ServerFeatures, is_keyset_ordered
from sync.models import BulkUpdate, Issue, Page

PROBE_SINCE = "1970-01-01T00:00:00.000000Z"
PROBE_PAGE_SIZE = 100
PROBE_ID = "iss_feature_probe"
ABSENT_STATUSES = frozenset({404, 405, 501})
"""What a server answers for an endpoint it does not have."""
TRANSIENT = (NetworkError, RateLimited, ServerError, ProtocolError)
"""Failures that may say nothing about the server (a dropped connection, a proxy's 502, a body
cut short or garbled on the way): with retries, a probe is sent again before they count."""
RETRY_PAUSE = 0.2
"""Seconds before a probe's first retry after a 5xx or a network failure (doubling after each);
a 429 needs none, since the limiter holds the next request for as long as the server asked."""

T = TypeVar("T")


@dataclass(frozen=True)
class ProbePage:
    """The first page of the issues the probe listed, oldest first from `PROBE_SINCE`, with
    tombstones and `PROBE_PAGE_SIZE` records: the very query a head-first start asks first
    (docs/sync.md#head-first), so that start reuses it rather than ask again."""

    response: Response[Page[Issue]]


async def detect_features(
    client: ApiClient,
    *,
    retries: int = 0,
    keep_page: Callable[[ProbePage], None] | None = None,
) -> ServerFeatures:
    """Probe a server for the optional features with as few requests as possible.

    Raises `Unauthorized`, `RateLimited` and `NetworkError` (nothing can be learned then);
    every other refusal just leaves a feature False or None. Features are stored and trusted
    for good, so a caller that stores them should pass `retries`: each probe whose answer was
    `TRANSIENT` is sent again up to that many times before the failure is read as an answer
    (a 500 as "undecided", an unreadable body as "absent"). Every probe is safe to resend.
    """
    probe = _Prober(retries)
    me = await probe.run(client.me)
    listing = await _probe_listing(probe, client)
    page = None if listing.response is None else listing.response.value
    whole = listing.per_page == PROBE_PAGE_SIZE and listing.tombstones is not False
    if keep_page is not None and listing.response is not None and whole:
        keep_page(ProbePage(listing.response))
    first_id = page.data[0].id if page is not None and page.data else None
    etag: bool | None = None
    if listing.response is not None and listing.response.meta.etag:
        etag = True
    elif first_id is not None:
        item = await probe.run(lambda: client.get_issue(first_id))
        etag = None if item.value is None else item.value.meta.etag is not None
    bulk = await _probe_bulk(probe, client)
    comments = await probe.run(
        lambda: client.list_comments(first_id, per_page=1), exists_on_400=True
    )
    users = await probe.run(lambda: client.list_users(per_page=1))
    return ServerFeatures(
        me=me.present,
        updated_after=listing.updated_after,
        tombstones=listing.tombstones,
        keyset_order=_order(page, listing.updated_after),
        etag=etag,
        bulk=bulk,
        comments_list=comments.present,
        users_list=users.present,
        page_size=_page_size(page, listing.per_page),
        plan=None if me.value is None else me.value.value.effective_plan,
        detected_at=time.time(),
        requests=probe.requests,
    )


@dataclass(frozen=True)
class _Outcome(Generic[T]):
    present: bool | None
    value: T | None = None
    error: ApiError | None = None


class _Prober:
    """Runs probes, counts them, and turns refusals into answers."""

    def __init__(self, retries: int = 0) -> None:
        self.requests = 0
        self._retries = retries

    async def run(
        self, call: Callable[[], Awaitable[T]], *, exists_on_400: bool = False
    ) -> _Outcome[T]:
        attempt = 0
        while True:
            self.requests += 1
            try:
                return _Outcome(True, await call())
            except TRANSIENT as error:
                absent = isinstance(error, ServerError) and error.status in ABSENT_STATUSES
                if absent or attempt >= self._retries:
                    return _answer(error, exists_on_400)
                if not isinstance(error, RateLimited):
                    await asyncio.sleep(RETRY_PAUSE * 2**attempt)
                attempt += 1
            except SyncError as error:
                return _answer(error, exists_on_400)


def _answer(error: SyncError, exists_on_400: bool) -> _Outcome[Any]:
    """What a failed probe says about the feature; raises when it says nothing at all."""
    if isinstance(error, Unauthorized | RateLimited | NetworkError):
        raise error
    if isinstance(error, ProtocolError):
        return _Outcome(False)
    if not isinstance(error, ApiError):
        raise error
    if error.status in ABSENT_STATUSES:
        return _Outcome(False, error=error)
    if exists_on_400 and isinstance(error, InvalidRequest):
        return _Outcome(True, error=error)
    return _Outcome(None, error=error)


@dataclass(frozen=True)
class _Listing:
    response: Response[Page[Issue]] | None = None
    updated_after: bool | None = None
    tombstones: bool | None = None
    per_page: int | None = None


async def _probe_listing(probe: _Prober, client: ApiClient) -> _Listing:
    """One list of issues answering four questions, retried without what the server refuses.

    Each retry drops one parameter (a too large `per_page`, then `include_deleted`, then
    `updated_after` as ISO 8601), so the first success says which one the server refused.
    Tombstones are True only once one is seen.
    """
    since, size = PROBE_SINCE, PROBE_PAGE_SIZE
    attempts: list[tuple[dict[str, Any], _Listing]] = [
        (
            {"updated_after": since, "include_deleted": True, "per_page": size},
            _Listing(updated_after=True, per_page=size),
        ),
        ({"updated_after": since, "include_deleted": True}, _Listing(updated_after=True)),
        ({"updated_after": since}, _Listing(updated_after=True, tombstones=False)),
        ({}, _Listing(updated_after=False)),
    ]
    for params, found in attempts:
        outcome = await probe.run(functools.partial(client.list_issues, **params))
        if outcome.value is not None:
            seen = found.tombstones is None and bool(outcome.value.value.tombstones)
            return replace(
                found, response=outcome.value, tombstones=True if seen else found.tombstones
            )
        if not isinstance(outcome.error, InvalidRequest):
            break
    return _Listing()


def _order(page: Page[Issue] | None, updated_after: bool | None) -> bool | None:
    if not updated_after:
        return None if updated_after is None else False
    return None if page is None else is_keyset_ordered(page.items)


def _page_size(page: Page[Issue] | None, requested: int | None) -> int | None:
    """The largest page the server serves: what it says, or what it sent when it sent less."""
    if page is None:
        return None
    size = page.pagination.per_page or requested
    total = page.pagination.total
    if size is not None and total is not None and 0 < page.received < min(total, size):
        size = page.received
    return size


async def _probe_bulk(probe: _Prober, client: ApiClient) -> bool | None:
    """A bulk update of no fields on a record that does not exist: it cannot change anything.

    A 400 naming `title` is a server with only the published API routing the path to `POST /issues`.
    """
    outcome = await probe.run(lambda: client.bulk([BulkUpdate(PROBE_ID, {})]), exists_on_400=True)
    if outcome.error is not None and "title" in outcome.error.message.lower():
        return False
    return outcome.present
