"""What the users of the model meant to do, kept apart from what the client did with it.

Every local action adds to the ledger: a create (identical ones are distinct intents), the
latest value typed into each field of each record, a delete. What the user *saw* is kept too:
the value shown beneath each edit, and the server's value of each conflict they settled. The
invariants (`model_checks`) hold the client's outbox and the service's records against it.

Records are keyed as the user named them, a `local_…` id for one created offline; the checks
follow those to server ids through the client's `id_map` when they compare with the service.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

UNIQUE_FIELDS = ("title", "description")
"""Fields whose every typed value is new, so a value on the service names the edit it came
from (priority and status repeat values, so they are not checked for order)."""


def canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@dataclass
class CreateIntent:
    client: str
    resource: str
    local_id: str
    seq: int
    parent: str | None = None
    """The issue a comment was made on, as the user named it."""
    void: bool = False
    """Deleted by the user before it was ever sent: nothing is owed."""


@dataclass
class FieldIntent:
    seq: int
    value: Any
    void: bool = False
    """Undone before it left (typed back to what the server has), or given up for theirs."""


@dataclass
class Ledger:
    seq: int = 0
    creates: list[CreateIntent] = field(default_factory=list)
    fields: dict[tuple[str, str, str], FieldIntent] = field(default_factory=dict)
    """(client, record, field) -> the latest value typed."""
    deletes: dict[tuple[str, str], int] = field(default_factory=dict)
    seen: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)
    """(client, record, field) -> every value the user was shown beneath an edit, or as
    `theirs` in a conflict they settled (canonical JSON)."""
    typed: dict[tuple[str, str, str], dict[str, int]] = field(default_factory=dict)
    """(client, record, field) -> each value typed and its (latest) sequence."""

    def next(self) -> int:
        self.seq += 1
        return self.seq

    def created(self, client: str, resource: str, local_id: str, parent: str | None) -> None:
        self.creates.append(CreateIntent(client, resource, local_id, self.next(), parent))

    def edited(self, client: str, record: str, name: str, shown: Any, value: Any) -> int:
        seq = self.next()
        self.fields[(client, record, name)] = FieldIntent(seq, value)
        self.saw(client, record, name, shown)
        self.typed.setdefault((client, record, name), {})[canon(value)] = seq
        return seq

    def saw(self, client: str, record: str, name: str, value: Any) -> None:
        self.seen.setdefault((client, record, name), []).append(canon(value))

    def deleted(self, client: str, record: str) -> None:
        self.deletes[(client, record)] = self.next()
        for (owner, key, _name), intent in self.fields.items():
            if owner == client and key == record:
                intent.void = True

    def vanished(self, client: str, local_id: str) -> None:
        """A record created offline was deleted before it was sent: it and everything the
        user wrote on it are gone, as meant."""
        for create in self.creates:
            if create.client == client and local_id in (create.local_id, create.parent):
                create.void = True
        self.deleted(client, local_id)
        self.deletes.pop((client, local_id), None)

    def gave_up(self, client: str, record: str, name: str, mine: Any) -> None:
        """The user took theirs over `mine`: if that was their latest value, nothing is owed."""
        intent = self.fields.get((client, record, name))
        if intent is not None and canon(intent.value) == canon(mine):
            intent.void = True
