"""Text a server sent that is not Unicode, made text the cache can hold.

JSON may escape half of a surrogate pair on its own (`"\\ud800"`), which Python's decoder
gives back as a string no UTF-8 encoder takes: in a member's value it passed the models, and
SQLite's driver raised UnicodeEncodeError on the record, which failed its whole page at every
pull (docs/sync.md#records-the-cache-cannot-hold); in a member's name the models refused the
record, which was skipped; and a terminal cannot print it either. Such a code point names no
character: it becomes U+FFFD, the replacement character, as any decoder shows an invalid
byte. Only a body that holds such an escape is walked, found by one scan of its bytes.
"""

from __future__ import annotations

import re

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""A JSON escape of a surrogate: paired ones decode to one character, lone ones do not."""


def may_hold_lone_surrogates(content: bytes) -> bool:
    return _SURROGATE_ESCAPE.search(content) is not None


def replaced(value: object) -> object:
    """`value` (decoded JSON) with every lone surrogate in its strings and keys as U+FFFD."""
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, list):
        return [replaced(item) for item in value]
    if isinstance(value, dict):
        return {_text(key): replaced(item) for key, item in value.items()}
    return value


def _text(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text
