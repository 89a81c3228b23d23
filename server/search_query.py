"""Turn what a user typed into a safe FTS5 query.

FTS5 has its own syntax (quotes, `*`, `^`, `:`, parentheses, `AND`/`OR`/`NOT`/`NEAR`), and passing
user text through raises syntax errors or changes the meaning. So the text is never parsed as
FTS5: it is split into words the way the `unicode61` tokenizer splits (letters and digits; all
else separates), and each word becomes a quoted prefix term. Terms are joined by spaces, which
FTS5 reads as AND: `cras fail` finds issues containing a word starting with "cras" and a word
starting with "fail".
"""

from __future__ import annotations

import re

MAX_TERMS = 16
"""Enough for any real query; a bound keeps a pasted paragraph from costing much."""

_WORD = re.compile(r"[^\W_]+")


def match_expression(text: str) -> str | None:
    """The FTS5 MATCH expression for `text`, or None when it holds no word at all."""
    words = _WORD.findall(text)[:MAX_TERMS]
    if not words:
        return None
    return " ".join(f'"{word}"*' for word in words)
