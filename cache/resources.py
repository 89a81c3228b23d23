"""How each server record maps onto its table: which members become columns, normalised how.

The columns are projections of the record for indexes, filters and sorts; `extra` holds, as
JSON, every member a column does not hold verbatim (labels, members this client does not know,
a value its column had to normalise), so a record is stored once and read back whole
(`ResourceSpec.record_of`), unknown members and values included. Storing each record whole
in a JSON column beside its columns doubled the largest part of the cache (see
docs/architecture.md#the-cache-file).

Projections are normalised so that SQLite's ordering means something: timestamps in one
canonical UTC form (servers may send `+00:00` or no fraction), and values of an unexpected
type as JSON text rather than dropped. The same functions build the columns of locally edited
records, so the effective view sorts and filters them exactly like server rows.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from cache.errors import InvalidRecordError
from cache.models import Cell, JsonObject, Resource
from issuefields import ISSUE_FIELDS, Field, Kind
from issuefields.frozen import Frozen

_ENCODER = json.JSONEncoder(separators=(",", ":"))


def dumps(value: object) -> str:
    """Compact JSON, by orjson: a cold sync serialises 100,000 records, and orjson does a
    page of them in a tenth of the time of CPython's encoder. What orjson refuses (integers
    beyond 64 bits, keys that are not strings) goes to CPython's."""
    try:
        return _orjson_dumps(value).decode()
    except TypeError:
        return _ENCODER.encode(value)


def json_list(values: Iterable[object]) -> str:
    """Ids (or states) as a JSON array for `json_each(?)`, by CPython's encoder: reads ask for
    a few dozen, and orjson (`dumps`) would load dataclasses, uuid and platform for them
    (docs/architecture.md#start-up)."""
    return _ENCODER.encode(list(values))


def _first_dumps(value: object) -> bytes:
    """`orjson.dumps`, imported where a value is first written: orjson imports dataclasses,
    uuid and platform, and a read of the cache writes no JSON (docs/architecture.md#start-up).
    It then stands in for this function."""
    global _orjson_dumps
    import orjson

    _orjson_dumps = orjson.dumps
    return _orjson_dumps(value)


_orjson_dumps: Callable[[object], bytes] = _first_dumps


def as_text(value: object) -> str | None:
    if value is None or type(value) is str:
        return value
    return dumps(value)


def as_body(value: object) -> str:
    text = as_text(value)
    return "" if text is None else text


INT_RANGE = (-(2**63), 2**63 - 1)
"""The integers SQLite holds (64-bit, signed); JSON sets no bound, nor does the published API
on `number` (docs/api.md#issue-numbers)."""


def as_int(value: object) -> int | float | None:
    """An integer column's value: an integer as it is, one beyond SQLite's range
    (`INT_RANGE`) as the nearest float, so the record is stored, sorts among the numbers
    where it belongs, and its exact value stays in `extra` (the column no longer holds it as
    sent; `ResourceSpec.extra`). Anything else (text, a float, a boolean) is no number: NULL,
    the value kept in `extra` too. Binding the integer itself raised OverflowError and
    failed the page it came in, at every pull (docs/sync.md#records-the-cache-cannot-hold)."""
    if type(value) is not int:
        return None
    low, high = INT_RANGE
    return value if low <= value <= high else float(value)


def _ints_held(values: list[Any]) -> bool:
    """Whether a column of values is all integers SQLite holds, or None (`as_int` keeps them)."""
    if not _types(values) <= {int, type(None)}:
        return False
    ints = [value for value in values if value is not None]
    return not ints or (min(ints) >= INT_RANGE[0] and max(ints) <= INT_RANGE[1])


def as_timestamp(value: object) -> str | None:
    """Canonical `YYYY-MM-DDTHH:MM:SS.ffffffZ` so text order is time order; anything that
    does not parse is kept as text (it still sorts, just not chronologically)."""
    if type(value) is str:
        if len(value) == 27 and value[26] == "Z" and value[19] == "." and value[10] == "T":
            return value
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return value
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return as_text(value)


STAMP_SHAPE = re.compile(
    r"[0-9]{4}-[01][0-9]-[0-3][0-9]T[012][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9]{6}Z"
)
"""The canonical form of `as_timestamp`, each field's first digit bounded as `stamp_order`
needs (a month, day, hour, minute or second that is not one cannot pass; a leap second
can)."""


_stamp_shape = STAMP_SHAPE.fullmatch


def stamp_order(stamp: Cell) -> Cell:
    """What the issues table sorts a timestamp column's value by (the `*_key` columns,
    `KEY_COLUMNS`): the canonical text of `as_timestamp` as an integer in the same order,
    8 bytes where the text takes 27 in each of the six indexes that order by time (issue 18,
    docs/architecture.md#the-cache-file).

    Read as a mixed-radix number (year, then month < 20, day < 40, hour < 30, minute < 60,
    second < 70, then microseconds, each bounded by `STAMP_SHAPE`), the fields compare as the
    digits do, so two canonical timestamps compare as their texts compare, to the microsecond,
    and the largest (year 9999) stays under 2**63. Any other value is kept as it is: SQLite
    (and `cache.ordering.value_key`) sorts text after every number, so a value that is not a
    timestamp sorts after all timestamps rather than among them by its characters."""
    if type(stamp) is not str or _stamp_shape(stamp) is None:
        return stamp
    # One C call reads the fields that make a date: an `int` of text costs about a quarter
    # of a microsecond, and both keys of every issue of a big page took seven each.
    try:
        at = datetime.fromisoformat(stamp[:26])
    except ValueError:  # the shape, but no date (month 19, second 60): field by field
        date = (int(stamp[0:4]) * 20 + int(stamp[5:7])) * 40 + int(stamp[8:10])
        time = (date * 30 + int(stamp[11:13])) * 60 + int(stamp[14:16])
        return (time * 70 + int(stamp[17:19])) * 1_000_000 + int(stamp[20:26])
    date = (at.year * 20 + at.month) * 40 + at.day
    time = (date * 30 + at.hour) * 60 + at.minute
    return (time * 70 + at.second) * 1_000_000 + at.microsecond


def stamp_key(value: object) -> Cell:
    """The sort key of a timestamp member as the server sent it (`stamp_order` of the text
    its column holds)."""
    return stamp_order(as_timestamp(value))


KEY_COLUMNS: Mapping[str, str] = {"created_at": "created_key", "updated_at": "updated_key"}
"""The issues table's sort key column (`stamp_key`) of each timestamp member: the indexes
and `ORDER BY`s name these, reads of the value itself the member's column."""


def iso_from_unix(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _labels(value: object) -> tuple[str, ...]:
    if type(value) is not list or not value:
        return ()
    return tuple(dict.fromkeys(item for item in value if type(item) is str))


def labels_of(record: Mapping[str, Any]) -> tuple[str, ...]:
    """The record's labels that are strings, de-duplicated in order; other shapes stay only
    in the stored record."""
    return _labels(record.get("labels"))


class Column(Frozen):
    _fields = ("name", "member", "convert")
    __slots__ = _fields
    name: str
    member: str
    convert: Callable[[object], Cell]

    def __init__(self, name: str, member: str, convert: Callable[[object], Cell]) -> None:
        self._init(name, member, convert)


class ResourceSpec(Frozen):
    """`Frozen`, not a dataclass: every read's start defines it (docs/architecture.md#start-up)."""

    _fields = (
        *("resource", "table", "columns", "fts_table", "fts_columns", "parent_column"),
        *("label_mask", "column_names", "record_columns", "_extractors", "_verbatim"),
    )
    __slots__ = _fields
    resource: Resource
    table: str
    columns: tuple[Column, ...]
    fts_table: str | None
    fts_columns: tuple[str, ...]
    parent_column: str | None
    label_mask: bool
    column_names: tuple[str, ...]
    record_columns: str
    """What `record_of` reads a stored record back from: `id`, the columns, then `extra`."""
    _extractors: tuple[tuple[str, Callable[[object], Cell]], ...]
    _verbatim: tuple[tuple[int, str], ...]
    """The columns that may hold a member as it came (not the ranks derived from one): their
    place in `cells` and their member."""

    def __init__(
        self,
        resource: Resource,
        table: str,
        columns: tuple[Column, ...],
        fts_table: str | None = None,
        fts_columns: tuple[str, ...] = (),
        parent_column: str | None = None,
        label_mask: bool = False,
    ) -> None:
        names = tuple(c.name for c in columns)
        self._init(
            *(resource, table, columns, fts_table, fts_columns, parent_column, label_mask),
            names,
            ", ".join(("id", *names, "extra")),
            tuple((c.member, c.convert) for c in columns),
            tuple((n, c.member) for n, c in enumerate(columns) if c.name == c.member),
        )

    def cells(self, record: Mapping[str, Any]) -> tuple[Cell, ...]:
        get = record.get
        return tuple([convert(get(member)) for member, convert in self._extractors])

    def cells_of(self, records: Sequence[Mapping[str, Any]]) -> list[tuple[Cell, ...]]:
        """`cells` of each record, worked out a column at a time: a column whose values all
        come as their cells would hold them (text as text, timestamps already canonical) is
        taken as it is, tested in C (`_KEPT_AS_SENT`), and a rank column of text is looked
        up in C, not through a Python call a value (`records.prepare` of a big page; with
        `stamp_order`'s and `records.Prepared`'s changes, 101,800 instructions an issue
        became 72,500, callgrind; issue 18)."""
        columns = []
        for member, convert in self._extractors:
            values = [record.get(member) for record in records]
            kept = _KEPT_AS_SENT.get(convert)
            columns.append(
                values if kept is not None and kept(values) else _converted(convert, values)
            )
        return list(zip(*columns, strict=True)) if columns else [() for _ in records]

    def extra(self, record: Mapping[str, Any], cells: tuple[Cell, ...]) -> str:
        """The JSON of `extra`: the record without its id and without each member its column
        (`cells`) holds as that very value, of that type. Nulls and empty strings stay, because a
        column holds NULL or "" for a missing member too (see `record_of`)."""
        rest = dict(record)
        del rest["id"]
        for place, member in self._verbatim:
            value, cell = rest.get(member), cells[place]
            if value is not None and value != "" and type(value) is type(cell) and value == cell:
                del rest[member]
        return dumps(rest)

    def record_of(self, row: Sequence[Any]) -> JsonObject:
        """The record stored as `row` (read with `record_columns`): each member taken out for
        its column put back, unless `extra` has it or the column is empty (NULL or "")."""
        found: JsonObject = {"id": row[0]}
        for place, member in self._verbatim:
            value = row[place + 1]
            if value is not None and value != "":
                found[member] = value
        found.update(loads_object(row[-1]))
        return found


def _types(values: list[Any]) -> set[type]:
    return set(map(type, values))


_TEXT_OR_NONE = {str, type(None)}
_KEPT_AS_SENT: dict[Callable[[object], Cell], Callable[[list[Any]], bool]] = {
    as_text: lambda values: _types(values) <= _TEXT_OR_NONE,
    as_body: lambda values: _types(values) <= {str},
    as_int: _ints_held,
    as_timestamp: lambda values: (
        _types(values) <= _TEXT_OR_NONE and all(map(_stamp_shape, filter(None, values)))
    ),
}
"""For each converter, whether it gives a column's values back unchanged: `as_timestamp`
keeps None, "" and the canonical shape as they are."""


def _converted(convert: Callable[[object], Cell], values: list[Any]) -> list[Cell]:
    ranks = _RANKERS.get(convert)
    if ranks is not None and _types(values) <= _TEXT_OR_NONE:
        known, unknown = ranks
        return list(map(known.get, values, itertools.repeat(unknown)))
    return list(map(convert, values))


def _timestamps() -> tuple[Column, Column]:
    return (
        Column("created_at", "created_at", as_timestamp),
        Column("updated_at", "updated_at", as_timestamp),
    )


def rank_column(f: Field) -> str:
    """The column holding a choice field's rank: its place in the table's order, so SQLite
    sorts and filters by it (every value the table does not list shares the last rank)."""
    return f"{f.member}_rank"


RANKS: Mapping[str, Mapping[str, int]] = {
    f.member: {value: rank for rank, value in enumerate(f.values)}
    for f in ISSUE_FIELDS
    if f.kind is Kind.CHOICE
}
"""Each choice field's known values by rank, by member."""


def unknown_rank(f: Field) -> int:
    return len(f.choices)


_RANKERS: dict[Callable[[object], Cell], tuple[Mapping[str, int], int]] = {}
"""Each rank column's converter, with its ranks and the rank of any other value, for
`cells_of` to look up a column of text (None included: it is not a known value) in C."""


def _ranker(f: Field) -> Callable[[object], Cell]:
    ranks, unknown = RANKS[f.member], unknown_rank(f)

    def rank(value: object) -> int:
        return ranks.get(value, unknown) if isinstance(value, str) else unknown

    _RANKERS[rank] = (ranks, unknown)
    return rank


_CONVERT: Mapping[Kind, Callable[[object], Cell]] = {
    Kind.NUMBER: as_int,
    Kind.TEXT: as_body,
    Kind.MARKDOWN: as_body,
    Kind.TIME: as_timestamp,
}
"""How a field of each kind becomes its column; any other kind is kept as text (ids, choices)."""

ISSUE_COLUMNS: tuple[Field, ...] = tuple(f for f in ISSUE_FIELDS if f.kind is not Kind.LABELS)
"""The issue fields that are columns of `issues` (labels live in `issue_labels` and the
label mask, see cache.labels)."""


def _issue_columns() -> tuple[Column, ...]:
    plain = [Column(f.member, f.member, _CONVERT.get(f.kind, as_text)) for f in ISSUE_COLUMNS]
    ranked = [
        Column(rank_column(f), f.member, _ranker(f)) for f in ISSUE_COLUMNS if f.kind is Kind.CHOICE
    ]
    keys = [Column(key, member, stamp_key) for member, key in KEY_COLUMNS.items()]
    return (*plain, *ranked, *keys)


SPECS: dict[Resource, ResourceSpec] = {
    Resource.ISSUES: ResourceSpec(
        Resource.ISSUES,
        "issues",
        _issue_columns(),
        fts_table="issues_fts",
        fts_columns=("title", "description"),
        label_mask=True,
    ),
    Resource.COMMENTS: ResourceSpec(
        Resource.COMMENTS,
        "comments",
        (
            Column("issue_id", "issue_id", as_text),
            Column("body", "body", as_body),
            Column("author", "author", as_text),
            *_timestamps(),
        ),
        fts_table="comments_fts",
        fts_columns=("body",),
        parent_column="issue_id",
    ),
    Resource.PROJECTS: ResourceSpec(
        Resource.PROJECTS,
        "projects",
        (
            Column("key", "key", as_text),
            Column("name", "name", as_body),
            Column("description", "description", as_body),
            Column("state", "state", as_text),
            Column("lead", "lead", as_text),
            *_timestamps(),
        ),
    ),
    Resource.USERS: ResourceSpec(
        Resource.USERS,
        "users",
        (
            Column("name", "name", as_body),
            Column("email", "email", as_text),
            *_timestamps(),
        ),
    ),
    Resource.WORKSPACES: ResourceSpec(
        Resource.WORKSPACES,
        "workspaces",
        (
            Column("name", "name", as_body),
            Column("plan", "plan", as_text),
            *_timestamps(),
        ),
    ),
}


def record_id(record: Mapping[str, Any]) -> str:
    value = record.get("id")
    if type(value) is not str or not value:
        raise InvalidRecordError(f"server record without a string id: {dumps(record)[:200]}")
    return value


def is_tombstone(record: Mapping[str, Any]) -> bool:
    return record.get("deleted") is True


def loads_object(text: str | None) -> JsonObject:
    if not text:
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {}
