"""The next keyset request, sent before the current page is parsed.

A keyset query depends on the page before it, so the pull cannot have two requests in flight;
but it need not wait for the whole page to be parsed either. The next query follows from a few
members of the raw body (how many items, the last one's `updated_at`, the stamps that share
it), so it is guessed from the JSON as soon as it arrives, sent, and only then is the page
parsed (about a millisecond of validation per 100 records, which used to sit between every
answer and the next request). Once the page is parsed, `keyset_pass` computes the next query
as always; a guess that differs from it (a record that could not be read, an order the
server did not keep) is cancelled and the right request sent, so a wrong guess costs a
request and never a record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any

from sync.client import Response
from sync.models import Page
from sync.pull.context import ResourceRun

Query = tuple[str, int]
"""`(updated_after, page)` of a keyset request."""
NextQuery = Callable[[str, str, int, Sequence[str]], Query]
"""`keyset_pass`'s rule: from the last stamp, the query and page number, and the stamps of
records not yet seen, the query that follows."""

SEND_STEPS = 8
"""Event-loop turns given to a guessed request before the page is parsed: enough for the
limiter and the connection pool's checkpoints to let it reach the socket."""


class Ahead:
    """At most one guessed request in flight, with the query it asked."""

    def __init__(self, run: ResourceRun, next_query: NextQuery) -> None:
        self._run = run
        self._next_query = next_query
        self._query: Query | None = None
        self._task: asyncio.Future[Response[Page[Any]]] | None = None
        self.guessing = False
        """Off until the pass's first page has been parsed: the page size the server keeps
        is learnt from it (`ResourceRun._learn_size`), and a guess must ask for that size."""

    def fetch(self, since: str, page: int) -> asyncio.Future[Response[Page[Any]]]:
        """The request for `(since, page)`: the guessed one when it asked exactly that."""
        task, query = self._task, self._query
        self._task, self._query = None, None
        if task is not None and query == (since, page):
            return task
        if task is not None:
            task.cancel()
        return asyncio.ensure_future(self._fetch(since, page))

    async def cancel(self) -> None:
        """Drop a guess nobody will use, waiting until it has stopped."""
        task, self._task, self._query = self._task, None, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def _fetch(self, since: str, page: int) -> Coroutine[Any, Any, Response[Page[Any]]]:
        async def peek(payload: object) -> None:
            guessed = self._guess(payload, since, page) if self.guessing else None
            if guessed is None or self._task is not None:
                return
            self._query = guessed
            self._task = asyncio.ensure_future(self._fetch(*guessed))
            for _ in range(SEND_STEPS):
                await asyncio.sleep(0)

        return self._run.fetch(page=page, updated_after=since, peek=peek)

    def _guess(self, payload: object, since: str, page: int) -> Query | None:
        """The query after this page, as `keyset_pass` will work it out (the same
        `ResourceRun.ends` and next-query rule, over the raw values); None for the last page
        or a body this does not understand."""
        if not isinstance(payload, Mapping):
            return None
        data, pagination = payload.get("data"), payload.get("pagination") or {}
        if not isinstance(data, list) or not isinstance(pagination, Mapping):
            return None
        total, per_page = pagination.get("total"), pagination.get("per_page")
        if self._run.ends(
            len(data),
            total if isinstance(total, int) else None,
            per_page if isinstance(per_page, int) and per_page > 0 else None,
            page,
        ):
            return None
        try:
            stamps = [item["updated_at"] for item in data]
            return self._next_query(stamps[-1], since, page, stamps)
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
