"""Issue filters, compiled twice from one description: SQL over the server rows, and a Python
predicate over the few effective rows that local edits replace. The two must agree exactly;
the text part of both is decided by FTS5 itself (see cache.fts).

Status and priority filters test the rank columns (they are in every sort index) and touch
the `status`/`priority` text only for unknown values, which share the last rank.

A filter on a field with an index of its own (assignee, project, priority, status) can also
be *driven* by that index: each index lists its field, then the default order (`updated_key
DESC, rid DESC`), so the rows of one value are a range already in that order, and the ranges
of a few values merge in order (see cache.query). That walks only the matching rows instead of
testing every entry of the sort index; it pays for fields whose values each hold a small part
of the issues, and for at most two values of status or priority, which hold large parts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from cache import fts, labels
from cache.fts import TextQuery
from cache.models import Cell, IssueFilter
from cache.resources import RANKS, rank_column, unknown_rank
from issuefields import FILTERS, Field, Kind
from issuefields.frozen import Frozen

FILTERED_BY_WORD = {f.word: f for f in FILTERS}


def _marks(count: int) -> str:
    return ", ".join("?" * count)


Clause = tuple[str, list[object]]

DRIVERS = {
    "mine": ("issues_by_assignee", 1),
    "assignee": ("issues_by_assignee", 4),
    "project": ("issues_by_project", 4),
    "priority": ("issues_by_priority", 2),
    "status": ("issues_by_status", 2),
}
"""Drivers in order of preference (the first present wins): the field's index, and how many
ranges of it may be merged: past that, merging costs more per row than testing the skipped
ones."""


class Drive(Frozen):
    """Ranges of one field's index, each in the default order: a window merges them."""

    _fields = ("index", "arms")
    __slots__ = _fields
    index: str
    arms: tuple[tuple[str, tuple[object, ...]], ...]

    def __init__(self, index: str, arms: tuple[tuple[str, tuple[object, ...]], ...]) -> None:
        self._init(index, arms)


def _split_ranked(values: frozenset[str], ranks: Mapping[str, int]) -> tuple[list[int], list[str]]:
    """The ranks of the known values, and the unknown values (which share the last rank)."""
    known = sorted({ranks[value] for value in values if value in ranks})
    return known, sorted(value for value in values if value not in ranks)


def _present(values: frozenset[str | None]) -> list[str]:
    """The values other than None ("unassigned", "no project"), in order."""
    return sorted(value for value in values if value is not None)


def _ranked_clause(rank: str, text: str, values: frozenset[str], f: Field) -> Clause:
    unknown = unknown_rank(f)
    known, others = _split_ranked(values, RANKS[f.member])
    parts: list[str] = []
    params: list[object] = []
    if known:
        parts.append(f"{rank} IN ({_marks(len(known))})")
        params += known
    if others:
        parts.append(f"({rank} = {unknown} AND {text} IN ({_marks(len(others))}))")
        params += others
    return "(" + " OR ".join(parts) + ")", params


def _ranked_arms(f: Field, values: frozenset[str]) -> list[Clause]:
    rank, text, unknown = rank_column(f), f.member, unknown_rank(f)
    known, others = _split_ranked(values, RANKS[f.member])
    arms: list[Clause] = [(f"{rank} = ?", [r]) for r in known]
    if others:
        arms.append((f"{rank} = {unknown} AND +{text} IN ({_marks(len(others))})", list(others)))
    return arms


def _nullable_arms(column: str, values: frozenset[str | None]) -> list[Clause]:
    arms: list[Clause] = [(f"{column} = ?", [v]) for v in _present(values)]
    if None in values:
        arms.append((f"{column} IS NULL", []))
    return arms


def _nullable_clause(column: str, values: frozenset[str | None]) -> Clause:
    present = _present(values)
    parts: list[str] = []
    if present:
        parts.append(f"{column} IN ({_marks(len(present))})")
    if None in values:
        parts.append(f"{column} IS NULL")
    return "(" + " OR ".join(parts) + ")", list(present)


class CompiledFilter(Frozen):
    """`where` lets the planner seek on any term (for counts); `scan_where` marks every
    column with unary `+`, which forbids seeking on it, so a window walks its sort index in
    order and tests the terms on each entry instead of seeking the filter and sorting the
    result in a temp b-tree."""

    _fields = ("filter", "text", "where", "scan_where", "params", "kinds", "label_mask", "drive")
    __slots__ = _fields
    filter: IssueFilter
    text: TextQuery | None
    where: str
    scan_where: str
    params: tuple[object, ...]
    kinds: frozenset[str]
    label_mask: int | None
    drive: Drive | None

    def __init__(
        self,
        filter: IssueFilter,
        text: TextQuery | None,
        where: str,
        scan_where: str,
        params: tuple[object, ...],
        kinds: frozenset[str],
        label_mask: int | None = None,
        drive: Drive | None = None,
    ) -> None:
        self._init(filter, text, where, scan_where, params, kinds, label_mask, drive)

    @property
    def sql(self) -> str:
        return f"WHERE {self.where}" if self.where else ""

    @property
    def scan_sql(self) -> str:
        return f"WHERE {self.scan_where}" if self.scan_where else ""

    def accepts(self, values: Mapping[str, Cell], labels: Iterable[str], text_ok: bool) -> bool:
        """The filter on one effective row; `text_ok` says whether FTS matched its text."""
        f = self.filter
        for field in FILTERS:
            wanted: frozenset[str | None] = getattr(f, field.word)
            if not wanted:
                continue
            if field.kind is Kind.LABELS:
                if wanted.isdisjoint(labels):
                    return False
            elif values[field.member] not in wanted:
                return False
        if f.mine is not None and values["assignee"] != f.mine:
            return False
        return self.text is None or text_ok


def _clauses(
    f: IssueFilter, text: TextQuery | None, bits: labels.Bits, scan: bool
) -> dict[str, Clause]:
    """One clause per constrained field, by its word; a choice field's by its rank."""

    def col(name: str) -> str:
        return f"+{name}" if scan else name

    parts: dict[str, Clause] = {}
    for field in FILTERS:
        values = getattr(f, field.word)
        if not values:
            continue
        if field.kind is Kind.CHOICE:
            rank, member = col(rank_column(field)), col(field.member)
            parts[field.word] = _ranked_clause(rank, member, values, field)
        elif field.kind is Kind.LABELS:
            parts[field.word] = labels.filter_clause(col("label_mask"), col("rid"), values, bits)
        else:
            parts[field.word] = _nullable_clause(col(field.member), values)
    if f.mine is not None:
        parts["mine"] = (f"{col('assignee')} = ?", [f.mine])
    if text is not None:
        parts["text"] = (f"{col('rid')} IN {fts.HITS_TABLE}", [])
    return parts


def _arms(f: IssueFilter, kind: str) -> list[Clause]:
    if kind == "mine":
        return [("assignee = ?", [f.mine])]
    field = FILTERED_BY_WORD[kind]
    values = getattr(f, field.word)
    if field.kind is Kind.CHOICE:
        return _ranked_arms(field, values)
    return _nullable_arms(field.member, values)


def _drive(f: IssueFilter, scan: dict[str, Clause]) -> Drive | None:
    """The first field that can drive the filter: its ranges, each with the other terms."""
    for kind, (index, most) in DRIVERS.items():
        if kind not in scan:
            continue
        arms = _arms(f, kind)
        if len(arms) > most:
            continue
        rest = [(clause, params) for name, (clause, params) in scan.items() if name != kind]
        return Drive(
            index,
            tuple(
                (
                    " AND ".join([arm, *(clause for clause, _ in rest)]),
                    (*arm_params, *(p for _, params in rest for p in params)),
                )
                for arm, arm_params in arms
            ),
        )
    return None


def compile_filter(f: IssueFilter, text: TextQuery | None, bits: labels.Bits) -> CompiledFilter:
    """`text` is `f.text` parsed by `fts.parse`, `bits` the label bits (both read from the
    database, hence passed in)."""
    seek, scan = _clauses(f, text, bits, scan=False), _clauses(f, text, bits, scan=True)
    overflowed = any(label in bits and bits[label] is None for label in f.label)
    return CompiledFilter(
        f,
        text,
        " AND ".join(clause for clause, _ in seek.values()),
        " AND ".join(clause for clause, _ in scan.values()),
        tuple(param for _, values in seek.values() for param in values),
        frozenset(seek),
        None if overflowed else labels.mask_of((x for x in f.label if x in bits), bits),
        _drive(f, scan),
    )
