"""Lines drawn on screen that leave no reference cycle behind.

Textual's compositor cuts every line a widget draws at the edges of the widgets beside it
(`Strip.divide`), and a strip caches its pieces. A line that spans one piece (most of them: a
list's row, the footer, the chips) is its own only piece, so it caches a list holding itself:
once the line is replaced, it and its seven caches are garbage that only the cyclic collector
frees. That was 600-1,000 objects for every key typed into the list at 100,000 issues (issue
18), kept long enough to reach the oldest generation, where they set off the full collections
that landed in keys (64-86 ms each, one every ~6 keys).

`install()` makes that one case answer without the cache; any other cut is Textual's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from textual.strip import Strip

_textual_divide = Strip.divide


def _divide(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
    """`Strip.divide`, but a strip cut only at its end is returned in a new list, uncached."""
    length = self.cell_length
    kept = [cut for cut in cuts if cut <= length]
    if kept == [length]:
        return [self]
    return _textual_divide(self, kept)


def install() -> None:
    """Divide strips without caching them in themselves (idempotent)."""
    Strip.divide = _divide  # type: ignore[method-assign]
