"""Lines drawn on screen that leave no reference cycle behind.

Textual's compositor cuts every line a widget draws at the edges of the widgets beside it
(`Strip.divide`), and a strip caches its pieces. A line that spans one piece (most of them: a
list's row, the footer, the chips) is its own only piece, so it caches a list holding itself:
once the line is replaced, it and its seven caches are garbage that only the cyclic collector
frees. That was 600-1,000 objects for every key typed into the list at 100,000 issues (issue
18), kept long enough to reach the oldest generation, where they set off the full collections
that landed in keys (64-86 ms each, one every ~6 keys).

`install()` makes that one case answer without the cache; any other cut is Textual's own.

Textual's `LRUCache` keeps its entries in a ring of links, so a cleared cache leaves the whole
ring, and every line it held, to the cyclic collector. Option lists keep their lines in one
and clear it whenever their options are replaced, as the filter dialog's value list is on
every opening: some 14 lines a key, with their caches, in `benchmarks/tui.py --keys-home` at
100,000 issues, frozen by the app's full collections until a sweep of the whole heap freed
them (0.5-1.2 s each after a first pull, issue 18). `install()` also makes `clear` undo the
ring's links first, so reference counting frees what the cache held.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from textual.cache import LRUCache
from textual.strip import Strip

_textual_divide = Strip.divide
_textual_clear = LRUCache.clear


def _divide(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
    """`Strip.divide`, but a strip cut only at its end is returned in a new list, uncached."""
    length = self.cell_length
    kept = [cut for cut in cuts if cut <= length]
    if kept == [length]:
        return [self]
    return _textual_divide(self, kept)


def _clear(self: LRUCache[object, object]) -> None:
    """`LRUCache.clear`, with every link of the ring emptied first."""
    for link in self._cache.values():
        link.clear()
    _textual_clear(self)


def install() -> None:
    """Divide strips without caching them in themselves, and clear line caches without
    leaving their rings behind (idempotent)."""
    Strip.divide = _divide  # type: ignore[method-assign]
    LRUCache.clear = _clear  # type: ignore[method-assign,assignment]
