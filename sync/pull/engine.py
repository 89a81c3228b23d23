"""The pull: each resource's changes since its cursor, then its deletions (docs/sync.md#the-pull).

Strategy per resource, from what the server was found to support (`ServerFeatures`):

- `updated_after` and sync order: keyset paging (`sync.pull.keyset`); a page out of order
  switches the resource to page walking for good (the server lied, or changed).
- `updated_after` without sync order: page walking from the cursor (`sync.pull.walk`).
- no `updated_after`: page walking over the whole list, which doubles as the id sweep.

Deletions: tombstones when seen working, else a count check and, on a difference, an id sweep
(`sync.pull.deletes`); `full` sweeps every resource. Comments and users are pulled only from
servers that list them; a server that refuses to list all comments at once (only per issue)
leaves comments to the issue view.

A key may read some resources and not others (a key with `issues:read` alone): a resource the
key is known not to read (`sync.permissions`: `/me`, or an earlier 403) is not asked for, and
one whose listing answers 403 is left there; either is named in `PullReport.withheld` with the
permission it lacks, and the rest is pulled (docs/sync.md#the-pull). Issues are the exception:
a 403 on them fails the pull as before, since nothing else is worth pulling without them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from cache import Resource
from sync.client import ApiClient, Peek, Response
from sync.errors import Forbidden, InvalidRequest, NotFound, UnexpectedStatus
from sync.models import Page
from sync.permissions import KNOWN, session_permissions
from sync.pull import backfill_state
from sync.pull.backfill import StepReport, backfill, finish_backfill
from sync.pull.collector import fewer_collections
from sync.pull.context import Lister, ResourceRun
from sync.pull.deletes import count_differs, sweep, sweep_with
from sync.pull.head import head_first
from sync.pull.keyset import OrderBroken, keyset_pass
from sync.pull.report import Mode, PullProgress, PullReport, ResourceReport
from sync.pull.views import pull_views
from sync.pull.walk import walk_pass
from sync.ratelimit import RequestClass
from sync.remembered import LAST_PULL_STATE_KEY
from sync.retry import Backoff, Retrier
from sync.session import SyncSession, known_features, remember_features

OPTIONAL_REFUSALS = (Forbidden, InvalidRequest, NotFound, UnexpectedStatus)
"""How a server says it will not list an optional resource (comments, users) for this key."""


async def pull(
    session: SyncSession,
    *,
    full: bool = False,
    progress: Callable[[PullProgress], None] | None = None,
    request_class: RequestClass = RequestClass.USER,
    retry: Backoff | None = None,
    head_first: bool = False,
    finish_backfill: bool = True,
) -> PullReport:
    """Bring the cache up to date with the server; safe to interrupt at any point.

    `head_first`: a cold start reads the newest issues first and leaves the rest to a
    backfill (docs/sync.md#head-first), which this pull finishes when `finish_backfill`, and
    otherwise leaves to `backfill_step` (the app's loop, on the background budget); comments
    wait for it.

    Errors that retries cannot cure (401, 403 on issues, a network that stays down) propagate
    as `sync.errors`; everything stored up to then stays, with its cursor, and the next pull
    resumes there. Unreadable records are skipped and listed in the report; resources the key
    may not read are left out and named (`PullReport.withheld`).
    """
    with fewer_collections():
        return await _pull(
            session,
            full=full,
            progress=progress,
            request_class=request_class,
            retry=retry,
            head_first=head_first,
            finish_backfill=finish_backfill,
        )


async def backfill_step(
    session: SyncSession,
    *,
    should_yield: Callable[[], bool],
    progress: Callable[[PullProgress], None] | None = None,
    retry: Backoff | None = None,
    give_way: asyncio.Event | None = None,
) -> StepReport | None:
    """Go on with a pending backfill as background work until it is done, `should_yield()`
    says the caller has other work (or `give_way` is set while it waits for a slot), or the
    day's share of the budget is spent; None when no backfill is pending."""
    if not backfill_state.pending(session.cache):
        return None
    with fewer_collections():
        run = ResourceRun(
            resource=Resource.ISSUES,
            list=session.client.with_request_class(RequestClass.BACKGROUND).list_issues,
            session=session,
            retrier=Retrier(retry or Backoff()),
            report=ResourceReport(Resource.ISSUES.value),
            progress=progress,
            can_tombstone=True,
            phase="backfill",
        )
        return await backfill(run, should_yield=should_yield, budgeted=True, give_way=give_way)


async def _pull(
    session: SyncSession,
    *,
    full: bool,
    progress: Callable[[PullProgress], None] | None,
    request_class: RequestClass,
    retry: Backoff | None,
    head_first: bool,
    finish_backfill: bool,
) -> PullReport:
    began = time.monotonic()
    report = PullReport(full=full)
    retrier = Retrier(retry or Backoff())
    client = session.client.with_request_class(request_class)
    if session.features.updated_after is None:
        session.features = await known_features(
            session.cache, session.client, session.server, refresh=True
        )
        report.features_refreshed = True
    known = session_permissions(session)
    pulled_before = session.cache.state.get(LAST_PULL_STATE_KEY) is not None
    try:
        for resource, lister, can_tombstone, optional in _listings(session, client):
            if resource is Resource.COMMENTS and backfill_state.pending(session.cache):
                continue  # bulk comments follow the issues' backfill
            run = ResourceRun(
                resource=resource,
                list=lister,
                session=session,
                retrier=retrier,
                report=ResourceReport(resource.value),
                progress=progress,
                can_tombstone=can_tombstone,
                news=pulled_before and session.cache.server.cursor(resource) is not None,
            )
            report.resources[resource.value] = run.report
            needed = f"{resource.value}:read"
            if resource is not Resource.ISSUES and needed in KNOWN and known.lacks(needed):
                _withhold(report, run.report, needed)
                continue
            started = time.monotonic()
            try:
                if resource is Resource.ISSUES:
                    await _pull_issues(
                        run, report, full=full, head=head_first, finish=finish_backfill
                    )
                else:
                    await _pull_resource(run, full=full)
            except Forbidden as error:
                if resource is Resource.ISSUES:
                    raise  # without its issues a pull has nothing worth the name to do
                if optional and not error.permission:
                    run.report.note = f"not pulled: {error.message}"
                else:
                    _withhold(report, run.report, error.permission or needed)
            except OPTIONAL_REFUSALS as error:
                if not optional:
                    raise
                run.report.note = f"not pulled: {error.message}"
            finally:
                run.report.seconds = time.monotonic() - started
        session.cache.inbox.prune()  # the change log's entries past their month
        session.cache.state.set(
            LAST_PULL_STATE_KEY,
            {
                "at": time.time(),
                "requests": report.requests,
                "changed": report.changed,
                "full": full,
            },
        )
    finally:
        report.retries = retrier.retries
        offset = session.limiter.offset
        if offset.known:
            session.cache.state.set_clock_offset(offset.seconds)
            report.clock_offset = offset.seconds
        report.seconds = time.monotonic() - began
    return report


def _withhold(report: PullReport, resource: ResourceReport, permission: str) -> None:
    """The key may not read this resource: it is left out of the pull, and said."""
    report.withheld[resource.resource] = permission
    resource.note = f"not pulled: the API key lacks {permission}"


async def _pull_issues(
    run: ResourceRun, report: PullReport, *, full: bool, head: bool, finish: bool
) -> None:
    """The issues: head first on a cold start when asked, the incremental pull otherwise,
    then the user's views and the backfill while one is pending (docs/sync.md#head-first)."""
    session = run.session
    cache = session.cache
    cold = cache.server.cursor(Resource.ISSUES) is None
    if cold and head and session.features.updated_after:
        report.head_first = True
        if not await head_first(run):
            if not run.deletes_covered and await count_differs(run):
                await sweep(run)
            return
    elif cold or not backfill_state.pending(cache):
        if cold and backfill_state.pending(cache):
            finish_backfill(run)  # a head-first start killed early: this pull reads it all
        await _pull_resource(run, full=full)
        return
    else:
        await _pull_resource(run, full=False, deletes=False)
    shown = backfill_state.progress(cache) or backfill_state.BackfillProgress()
    if shown.views == "pending":
        views = await pull_views(run)
        shown = (backfill_state.progress(cache) or shown).replace(views=views)
        backfill_state.save_progress(cache, shown)
        run.tell(0)
    if finish:
        run.begin_phase("backfill")
        report.backfill = await backfill(run)
        if not run.deletes_covered and await count_differs(run):
            await sweep(run)


async def _pull_resource(run: ResourceRun, *, full: bool, deletes: bool = True) -> None:
    """One resource's changes since its cursor, then (unless not `deletes`: a backfill is
    still filling the cache, which a count would take for deletions) its deletions."""
    features = run.session.features
    cursor = run.session.cache.server.cursor(run.resource)
    swept_ids: set[str] | None = None
    if features.updated_after and features.keyset_order:
        try:
            await keyset_pass(run, cursor)
        except OrderBroken:
            run.session.features = features.replace(keyset_order=False)
            remember_features(run.session)
            run.report.note = "the server broke its sync order; switched to page walking"
            run.report.mode = Mode.PAGES
            swept_ids = await walk_pass(run, cursor, filtered=True)
    else:
        run.report.mode = Mode.PAGES
        run.session.cache.server.finish_bulk_load(run.resource)  # of a keyset pass that was killed
        swept_ids = await walk_pass(run, cursor, filtered=bool(features.updated_after))
    if not deletes:
        return
    if swept_ids is not None:
        await sweep_with(run, swept_ids)
    elif full or (not run.deletes_covered and await count_differs(run)):
        await sweep(run)


def _listings(session: SyncSession, client: ApiClient) -> list[tuple[Resource, Lister, bool, bool]]:
    """(resource, how to list it, may it have tombstones, may the server refuse it)."""
    found: list[tuple[Resource, Lister, bool, bool]] = [
        (Resource.ISSUES, client.list_issues, True, False),
        (Resource.PROJECTS, client.list_projects, True, False),
    ]
    if session.features.users_list:
        found.append((Resource.USERS, _users(client), False, True))
    if session.features.comments_list:
        found.append((Resource.COMMENTS, client.list_comments, True, True))
    return found


def _users(client: ApiClient) -> Lister:
    """`GET /users` takes no `include_deleted`: members leave, they are not deleted."""

    async def list_users(
        *,
        page: int | None,
        per_page: int | None,
        updated_after: str | None,
        include_deleted: bool | None,
        peek: Peek | None = None,
    ) -> Response[Page[Any]]:
        del include_deleted
        return await client.list_users(
            page=page, per_page=per_page, updated_after=updated_after, peek=peek
        )

    return list_users
