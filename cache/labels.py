"""Issue labels: the `issue_labels` table behind pickers and counts, and the bit masks behind
label filters.

Every sort index carries `label_mask`, one bit per label, so a label filter is a bit test on
the index entry (a few VDBE instructions) instead of a probe into another table for each of
the up to 100,000 entries a window may walk. Bits are handed out in `label_bits` the first
time a label is seen, inside the writing transaction; labels past the 62nd share the
OVERFLOW bit and are confirmed through `issue_labels`, so any number of labels still filters
exactly.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from cache.resources import dumps, labels_of

MAX_BITS = 62
OVERFLOW = 1 << MAX_BITS

Bits = dict[str, int | None]


def load_bits(conn: sqlite3.Connection) -> Bits:
    return {str(label): bit for label, bit in conn.execute("SELECT label, bit FROM label_bits")}


def mask_of(labels: Iterable[str], bits: Bits) -> int:
    mask = 0
    for label in labels:
        bit = bits.get(label)
        mask |= OVERFLOW if bit is None else 1 << bit
    return mask


def masks(conn: sqlite3.Connection, label_sets: list[tuple[str, ...]]) -> list[int]:
    """Masks for these label sets, giving new labels the next free bits."""
    bits = load_bits(conn)
    fresh = dict.fromkeys(label for labels in label_sets for label in labels if label not in bits)
    used = sum(bit is not None for bit in bits.values())
    for label in fresh:
        bits[label] = used if used < MAX_BITS else None
        used += bits[label] is not None
    if fresh:
        conn.executemany(
            "INSERT INTO label_bits (label, bit) VALUES (?, ?)",
            [(label, bits[label]) for label in fresh],
        )
    return [mask_of(labels, bits) for labels in label_sets]


def filter_clause(
    mask: str, rid: str, wanted: frozenset[str], bits: Bits
) -> tuple[str, list[object]]:
    """SQL true for issues carrying any of `wanted`; `mask` and `rid` name the columns (with
    or without the unary `+` that stops the planner seeking on them)."""
    bitted = mask_of((label for label in wanted if bits.get(label) is not None), bits)
    overflowed = sorted(label for label in wanted if label in bits and bits[label] is None)
    parts: list[str] = []
    params: list[object] = []
    if bitted:
        parts.append(f"({mask} & ?) != 0")
        params.append(bitted)
    if overflowed:
        marks = ", ".join("?" * len(overflowed))
        parts.append(
            f"(({mask} & {OVERFLOW}) != 0 AND {rid} IN "
            f"(SELECT issue FROM issue_labels WHERE label IN ({marks})))"
        )
        params += overflowed
    return ("(" + " OR ".join(parts) + ")" if parts else "0"), params


def index(conn: sqlite3.Connection, where: str, param: object) -> None:
    """Fill `issue_labels` for stored issues, reading their labels (in `extra`) in SQLite: the
    rule of `labels_of` (string members of a `labels` array, each once) without Python."""
    conn.execute(
        "INSERT OR IGNORE INTO issue_labels (label, issue) SELECT j.value, i.rid "
        f"FROM issues i, json_each(i.extra, '$.labels') j WHERE {where} "
        "AND j.type = 'text' AND typeof(j.key) = 'integer'",
        (param,),
    )


def unindex(conn: sqlite3.Connection, rids: list[int]) -> None:
    """Drop the label rows of issues about to change or go, found from their stored records
    (the table is keyed by label first, which is what filters and pickers read)."""
    stored = conn.execute(
        "SELECT rid, extra -> 'labels' FROM issues WHERE rid IN (SELECT value FROM json_each(?))",
        (dumps(rids),),
    )
    pairs = [
        (label, rid)
        for rid, labels in stored
        if labels is not None
        for label in labels_of({"labels": json.loads(labels)})
    ]
    conn.executemany("DELETE FROM issue_labels WHERE label = ? AND issue = ?", pairs)
