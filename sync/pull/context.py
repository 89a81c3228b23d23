"""One resource's pull in progress: how to list it, the page size in force, the report.

Every strategy (keyset, page walk, sweep) fetches through `ResourceRun.fetch`, so retries,
page-size learning, skipped records, tombstone sightings and progress are handled once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from cache import ApplyResult, Cursor, Resource
from sync.client import Peek, Response
from sync.models import Page, Record, Tombstone
from sync.pull.report import PullProgress, ResourceReport
from sync.remembered import note_unreadable, unreadable_records
from sync.retry import Retrier
from sync.session import SyncSession, remember_features

REQUEST_PAGE_SIZE = 100
"""What every list asks for: the largest page the reference service allows
(docs/api.md#page-size); the server's `pagination.per_page` wins."""


class Lister(Protocol):
    def __call__(
        self,
        *,
        page: int | None,
        per_page: int | None,
        updated_after: str | None,
        include_deleted: bool | None,
        peek: Peek | None = None,
    ) -> Awaitable[Response[Page[Any]]]: ...


@dataclass
class ResourceRun:
    """Shared state of one resource's pull."""

    resource: Resource
    list: Lister
    session: SyncSession
    retrier: Retrier
    report: ResourceReport
    progress: Callable[[PullProgress], None] | None
    can_tombstone: bool
    size: int = REQUEST_PAGE_SIZE
    phase: str = "pull"
    news: bool = False
    """Records new to the cache are news for the inbox (cache.changelog): a pull that began
    from a cursor after a complete one, not a first load."""
    gate: Callable[[], None] | None = None
    """Called before every attempt of a request, retries included: raises to send no more
    (the backfill's day share, spent: sync.pull.backfill)."""
    _unreadable: set[str | None] | None = field(default=None, repr=False)
    """Ids of this resource kept as unreadable (sync.remembered), once read."""
    _received: int = field(default=0, repr=False)
    """Records received in this phase (the report counts the whole resource)."""
    _expected: int | None = field(default=None, repr=False)

    @property
    def tombstones(self) -> bool | None:
        """Whether to ask for tombstones: unless the server was seen refusing them."""
        return None if not self.can_tombstone or self.session.features.tombstones is False else True

    @property
    def deletes_covered(self) -> bool:
        """Tombstones were seen working, so no count check is needed."""
        return self.can_tombstone and self.session.features.tombstones is True

    async def fetch(
        self,
        *,
        page: int,
        updated_after: str | None,
        per_page: int | None = None,
        peek: Peek | None = None,
    ) -> Response[Page[Any]]:
        asked = per_page or self.size
        include = self.tombstones if updated_after is not None else None

        def attempt() -> Awaitable[Response[Page[Any]]]:
            # Counted per attempt, not as a difference of the retrier's total: a keyset pass
            # has a second fetch running meanwhile (sync.pull.ahead).
            if self.gate is not None:
                self.gate()
            self.report.requests += 1
            return self.list(
                page=page,
                per_page=asked,
                updated_after=updated_after,
                include_deleted=include,
                peek=peek,
            )

        await self.after_the_keys()
        response = await self.retrier.run(attempt)
        return self.adopt(response, page=page, asked=asked, per_page=per_page)

    async def after_the_keys(self) -> None:
        """Wait for a pause in the user's typing before asking for a page (sync.foreground)."""
        if self.session.foreground is not None:
            await self.session.foreground.quiet()

    def adopt(
        self, response: Response[Page[Any]], *, page: int, asked: int, per_page: int | None
    ) -> Response[Page[Any]]:
        """Learn what a page of this resource's list says (its page size, skipped records,
        tombstones), whether `fetch` asked for it or it came another way (the probe's page:
        sync.pull.head)."""
        listing = response.value
        if per_page is None:
            self._learn_size(listing, asked, page)
        known = {(item.id, item.reason) for item in self.report.skipped}
        self.report.skipped.extend(
            item
            for item in listing.skipped
            if item.id is None or (item.id, item.reason) not in known
        )
        self._keep_unreadable(listing)
        if (
            listing.tombstones
            and self.can_tombstone
            and self.session.features.tombstones is not True
        ):
            self.session.features = self.session.features.replace(tombstones=True)
            remember_features(self.session)
        return response

    def _keep_unreadable(self, listing: Page[Any]) -> None:
        """Keep the records this page skipped, and forget those it holds readable again
        (sync.remembered); the cache is read once a run, and written only then."""
        if self._unreadable is None:
            name = self.resource.value
            self._unreadable = {
                item.id for item in unreadable_records(self.session.cache) if item.resource == name
            }
        read = {item.id for item in listing.items}
        if listing.skipped or not self._unreadable.isdisjoint(read):
            kept = note_unreadable(self.session.cache, self.resource.value, listing.skipped, read)
            self._unreadable = {item.id for item in kept if item.resource == self.resource.value}

    def _learn_size(self, listing: Page[Any], asked: int, page: int) -> None:
        """Follow the server's page size: what it says, or what it sent when it says nothing
        and `total` shows more records exist."""
        said = listing.pagination.per_page
        if said is not None and 0 < said < self.size:
            self.size = said
        elif said is None and page == 1:
            total = listing.pagination.total
            if total is not None and 0 < listing.received < min(total, asked):
                self.size = listing.received

    def left(self, listing: Page[Any], page: int) -> int | None:
        """Records the query of `listing` (page number `page`) has after this page, by its
        `pagination.total`: of a query with `updated_after`, the total is what remains from
        that point, not the whole resource. None when the server gives no total."""
        pagination = listing.pagination
        if pagination.total is None:
            return None
        size = pagination.per_page or self.size
        return max(0, pagination.total - ((page - 1) * size + listing.received))

    def is_last(self, listing: Page[Any], page: int) -> bool:
        """Whether `listing`, page number `page` of its query, ends that query."""
        pagination = listing.pagination
        return self.ends(listing.received, pagination.total, pagination.per_page, page)

    def ends(self, received: int, total: int | None, per_page: int | None, page: int) -> bool:
        """Whether `received` records, page number `page` of a query whose pagination says
        `total` and `per_page`, end that query (also read from a raw body, sync.pull.ahead)."""
        if received == 0:
            return True
        size = per_page or self.size
        if total is not None:
            return (page - 1) * size + received >= total
        return received < size

    def store(
        self, items: Sequence[Record | Tombstone], cursor: Cursor | None, *, scope: str = ""
    ) -> None:
        """Store a page, with the cursor that follows it (the incremental pull's, or the
        cursor of `scope`: sync.pull.backfill_state), in one transaction."""
        raws = [item.raw for item in items]
        stored = self.session.cache.server.apply_page(
            self.resource, raws, cursor, scope=scope, news=self.news
        )
        self.count(stored)
        self.count_page(len(items))

    def count_page(self, received: int, fresh: int | None = None) -> None:
        """Add a stored page to the report; `fresh` of its records were new to the phase
        (all of them unless said: only a keyset pass re-reads some)."""
        self.report.pages += 1
        self.report.received += received
        self._received += received if fresh is None else fresh

    def begin_phase(self, phase: str) -> None:
        """A new walk over the resource (the id sweep): progress counts from zero again."""
        self.phase = phase
        self._received = 0
        self._expected = None

    def count(self, result: ApplyResult) -> None:
        """Add what storing one or more pages did to the report."""
        report = self.report
        report.inserted += result.inserted
        report.updated += result.updated
        report.unchanged += result.unchanged
        report.deleted += result.deleted

    def tell(self, left: int | None = None, *, expected: int | None = None) -> None:
        """Report progress after a page was counted: `left` is what its query still has to
        send (`left()`), so the estimate is what this phase received plus that; or the
        strategy knows the `expected` total itself (keyset paging, whose every query starts
        from a new point). None keeps the last estimate."""
        if left is not None:
            self._expected = self._received + left
        elif expected is not None:
            self._expected = expected
        if self.progress is not None:
            self.progress(
                PullProgress(
                    resource=self.resource.value,
                    pages=self.report.pages,
                    received=self._received,
                    total=self._expected,
                    phase=self.phase,
                )
            )
