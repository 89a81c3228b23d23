"""A bounded cache of fixed-size pages of rows, and the bookkeeping of reads in flight.

The list asks which pages cover the rows it is about to draw (plus a margin), fetches the
missing ones in a worker, and stores what comes back. Pages far from the viewport are evicted
least recently used first, so memory stays flat however far the user scrolls. A generation
number, bumped whenever the query or the data behind it changes, lets answers to an older
question be recognised and dropped.

Not thread-safe: the widget uses it on the event loop only; workers just read the source.
"""

from __future__ import annotations

from collections import OrderedDict

from cache import IssueRow

PAGE_SIZE = 64
"""Rows per page: a little more than one tall terminal, so a screen spans one or two pages."""

MAX_PAGES = 64
"""Pages kept before the least recently used goes (4,096 rows, a few hundred KiB)."""


class PageCache:
    """Rows of the current generation by page number, and which pages are being read."""

    def __init__(self, page_size: int = PAGE_SIZE, max_pages: int = MAX_PAGES) -> None:
        self.page_size = page_size
        self.max_pages = max_pages
        self.generation = 0
        self._pages: OrderedDict[int, list[IssueRow]] = OrderedDict()
        self._in_flight: frozenset[int] = frozenset()

    def __len__(self) -> int:
        """The number of pages held (tests check that scrolling does not grow it unbounded)."""
        return len(self._pages)

    def get(self, index: int) -> IssueRow | None:
        """The row at `index`, or None while its page has not arrived."""
        page = self._pages.get(index // self.page_size)
        if page is None:
            return None
        offset = index % self.page_size
        return page[offset] if offset < len(page) else None

    def restart(self, *, clear: bool) -> int:
        """Begin a new generation (new query, or changed data) and return its number.

        With `clear` the rows go at once (a new query); without, they stay on screen until the
        new generation's first answer replaces them (a reload, which should not flicker).
        """
        self.generation += 1
        self._in_flight = frozenset()
        if clear:
            self._pages.clear()
        return self.generation

    def span(self, first: int, last: int) -> tuple[int, int]:
        """The first page and the number of pages covering rows `first`..`last`."""
        first_page = max(first, 0) // self.page_size
        return first_page, max(last // self.page_size - first_page + 1, 1)

    def plan(self, first: int, last: int) -> tuple[int, int] | None:
        """The pages to read so rows `first`..`last` are held: (first page, page count).

        None when every one of them is held or already being read. The planned pages count as
        in flight from now on; touching the held ones keeps them from eviction.
        """
        if last < first:
            return None
        first_page, count = self.span(first, last)
        wanted = range(first_page, first_page + count)
        for page in wanted:
            if page in self._pages:
                self._pages.move_to_end(page)
        missing = [page for page in wanted if page not in self._pages]
        if not missing or set(missing) <= self._in_flight:
            return None
        self._in_flight = frozenset(missing)
        return missing[0], missing[-1] - missing[0] + 1

    def accept(
        self,
        generation: int,
        first_page: int,
        page_count: int,
        rows: list[IssueRow],
        *,
        fresh: bool,
    ) -> bool:
        """Store an answer if it belongs to the current generation; say whether it did.

        Every requested page is stored, short or empty ones too, so rows the source no longer
        has are not asked for again on every scroll. A `fresh` answer (the one that also
        counted) first drops the rows kept over from before the generation began.
        """
        if generation != self.generation:
            return False
        if fresh:
            self._pages.clear()
        self._in_flight -= set(range(first_page, first_page + page_count))
        for number in range(page_count):
            start = number * self.page_size
            self._pages[first_page + number] = rows[start : start + self.page_size]
            self._pages.move_to_end(first_page + number)
        while len(self._pages) > self.max_pages:
            self._pages.popitem(last=False)
        return True

    def abandon(self, generation: int) -> bool:
        """A read failed: forget what is in flight so a later scroll retries; say if current."""
        if generation != self.generation:
            return False
        self._in_flight = frozenset()
        return True
