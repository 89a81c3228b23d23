"""Optimistic concurrency: entity tags of records and `If-Match` preconditions.

A record's tag is derived from its id and `updated_at`; since every write moves `updated_at` to a
value never used before in the workspace, the tag changes exactly when the record does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from server.errors import PreconditionFailed


def etag(record: Mapping[str, Any]) -> str:
    digest = hashlib.sha256(f"{record['id']}|{record['updated_at']}".encode()).hexdigest()
    return f'"{digest[:32]}"'


def check_if_match(if_match: str | None, record: Mapping[str, Any]) -> None:
    """412 unless `If-Match` is absent, `*`, or lists the record's current tag."""
    if if_match is None:
        return
    candidates = {candidate.strip() for candidate in if_match.split(",")}
    if "*" not in candidates and etag(record) not in candidates:
        raise PreconditionFailed(
            "The record has changed since you read it (If-Match does not match its ETag)."
        )
