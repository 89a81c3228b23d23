"""What a person types in search, taken apart: qualifiers, excluded words, phrases, an issue
number, and the free words left for full-text search.

    login "dark mode" -safari status:todo,in_progress priority:high assignee:me label:bug
    project:WEB #123

Qualifiers narrow the list like the filter picker does (AND across fields, OR within one:
`status:todo status:done` is either); `-word` drops issues mentioning the word; `"a phrase"`
must appear as typed (word order kept, case and accents ignored); `#123` or a bare `123` is
the issue with that number (a bare number also finds the issues that mention it).

The parser reads no database: the result is a plain structure (`Search`) that the cache turns
into a filter (cache.query), the chips show, and a server search can be asked with. Values it
can check alone (statuses, priorities) are checked here and a bad one is named in `problems`
with the allowed ones, and left out of the search; names that need the cache (users, project
keys, labels) are resolved there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from issuefields import FILTERS, PRIORITY, STATUS, Field
from issuefields.frozen import Frozen

QUALIFIERS: Mapping[str, Field] = {f.word: f for f in FILTERS}
"""The qualifiers, by the word typed before the colon: status, priority, assignee, project,
label (the filter picker's fields)."""

ME = "me"
"""`assignee:me`: the signed-in user."""
NONE = "none"
"""`assignee:none`, `project:none`: unassigned, no project (`priority:none` is the priority)."""

_TERM = re.compile(r'(-?)(?:([A-Za-z_]+):)?("[^"]*"?|[^\s"]+)')
_NUMBER = re.compile(r"#?(\d+)")


class Search(Frozen):
    """One search, taken apart. Every part is a tuple of strings, in the order typed."""

    _fields = (
        "words",
        "phrases",
        "excluded",
        "qualifiers",
        "number",
        "exact_number",
        "problems",
        "open_ended",
    )
    __slots__ = _fields
    words: tuple[str, ...]
    """Free words for full-text search (title, description, comments, labels)."""
    phrases: tuple[str, ...]
    """Quoted texts that must appear as typed."""
    excluded: tuple[str, ...]
    """`-word` (or `-"a phrase"`): issues mentioning it are left out."""
    qualifiers: tuple[tuple[str, tuple[str, ...]], ...]
    """`(word, values)` per qualifier used (`("status", ("todo",))`), statuses and
    priorities as the API spells them, other values as typed."""
    number: int | None
    """`#123` or `123` alone: the issue with that number."""
    exact_number: bool
    """The number was typed with `#`: only that issue, no text search for the digits."""
    problems: tuple[str, ...]
    """What was typed wrong, one sentence each, naming what is allowed."""
    open_ended: bool
    """The text ends inside its last free word (no space after it): that word is a prefix."""

    def __init__(
        self,
        words: tuple[str, ...] = (),
        phrases: tuple[str, ...] = (),
        excluded: tuple[str, ...] = (),
        qualifiers: tuple[tuple[str, tuple[str, ...]], ...] = (),
        number: int | None = None,
        exact_number: bool = False,
        problems: tuple[str, ...] = (),
        open_ended: bool = False,
    ) -> None:
        self._init(words, phrases, excluded, qualifiers, number, exact_number, problems, open_ended)

    def values(self, word: str) -> tuple[str, ...]:
        """The values of one qualifier (empty when it is not used)."""
        return dict(self.qualifiers).get(word, ())

    @property
    def text(self) -> str:
        """The free words and phrases for full-text search, a space after the last word unless
        it is still being typed."""
        text = " ".join((*self.phrases, *self.words))
        return text if self.open_ended or not text else text + " "

    @property
    def is_plain(self) -> bool:
        """Nothing but free words: the search works as it always has."""
        return not (self.phrases or self.excluded or self.qualifiers or self.number is not None)


def _choice(f: Field, typed: str) -> str | None:
    """The API's value for what was typed of a choice field: the value or the label, any case,
    `-` or a space for `_` (`in-progress`, `In progress`)."""
    wanted = typed.strip().lower().replace("-", "_").replace(" ", "_")
    for choice in f.choices:
        if wanted in (choice.value, choice.label.lower().replace(" ", "_")):
            return choice.value
    return None


def _split_values(raw: str) -> list[str]:
    text = raw[1:].removesuffix('"') if raw.startswith('"') else raw
    return [value.strip() for value in text.split(",") if value.strip()]


def _qualifier(word: str, raw: str, problems: list[str]) -> tuple[str, ...]:
    values = _split_values(raw)
    if not values:
        problems.append(f"{word}: needs a value, e.g. {_example(word)}.")
        return ()
    f = QUALIFIERS[word]
    if f not in (STATUS, PRIORITY):
        return tuple(values)
    known: list[str] = []
    for value in values:
        found = _choice(f, value)
        if found is None:
            allowed = ", ".join(f.values)
            problems.append(f"{word}:{value} is not a {word}; use one of {allowed}.")
        else:
            known.append(found)
    return tuple(known)


def _example(word: str) -> str:
    f = QUALIFIERS[word]
    if f.choices:
        return f"{word}:{f.choices[1].value}"
    return {"assignee": "assignee:me", "project": "project:WEB", "label": "label:bug"}.get(
        word, f"{word}:…"
    )


def parse(typed: str) -> Search:
    """Take `typed` apart. Never raises: what cannot be understood is searched as text or
    named in `problems`."""
    text = typed.strip()
    if number := _NUMBER.fullmatch(text):
        return Search(
            words=() if text.startswith("#") else (number.group(1),),
            number=int(number.group(1)),
            exact_number=text.startswith("#"),
        )
    words: list[str] = []
    phrases: list[str] = []
    excluded: list[str] = []
    qualifiers: dict[str, list[str]] = {}
    problems: list[str] = []
    last_is_word = False
    for match in _TERM.finditer(typed):
        minus, key, body = match.group(1), match.group(2), match.group(3)
        last_is_word = False
        if key is not None and key.lower() in QUALIFIERS:
            word = key.lower()
            if minus:
                problems.append(f"-{word}: is not supported; pick the {word}s you want instead.")
                continue
            qualifiers.setdefault(word, []).extend(_qualifier(word, body, problems))
            continue
        if key is None and body.endswith(":") and body[:-1].lower() in QUALIFIERS:
            word = body[:-1].lower()
            problems.append(f"{word}: needs a value, e.g. {_example(word)}.")
            continue
        if key is not None:
            import difflib  # only for a mistake

            close = difflib.get_close_matches(key.lower(), QUALIFIERS, n=1)
            if close:
                problems.append(f"{key}: is not a qualifier; did you mean {close[0]}:?")
            body = f"{key}:{body}"
        if body.startswith('"'):
            inner = body[1:].removesuffix('"').strip()
            if inner:
                (excluded if minus else phrases).append(inner)
            continue
        if minus and body:
            excluded.append(body)
            continue
        if minus:
            continue
        words.append(body)
        last_is_word = match.end() == len(typed)
    return Search(
        words=tuple(words),
        phrases=tuple(phrases),
        excluded=tuple(excluded),
        qualifiers=tuple((word, tuple(values)) for word, values in qualifiers.items()),
        problems=tuple(problems),
        open_ended=last_is_word,
    )


def describe(search: Search) -> list[str]:
    """The parts of a search as chips read them: `status: todo`, `-safari`, `“a phrase”`."""
    parts = [f"{word}: {', '.join(values)}" for word, values in search.qualifiers if values]
    if search.number is not None:
        parts.append(f"#{search.number}")
    parts += [f"“{phrase}”" for phrase in search.phrases]
    parts += [f"-{word}" for word in search.excluded]
    return parts
