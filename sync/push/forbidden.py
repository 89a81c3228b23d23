"""Whose refusal a 403 on a write is: the key's, for every write of its kind, or one record's.

The reference service has both (docs/api.md#permissions). A key without `issues:write` gets a 403 on
every issue write; the run must stop, and its entries wait, pending, until the key is fixed (each
would be refused the same way). Only a comment's author may edit or delete it, others get a 403;
that entry must fail with the server's message while the queue goes on (sent again, it is refused
forever). A server we did not write may word its 403s any way, so the wording is one clue among
others, taken in this order:

1. What the key may do, by `/me` (on servers that have it; asked once a run, at the first 403):
   a key without the permission the request needed (`issues:write`, `comments:write`...; a
   GET needs `:read`), or without the one the 403 names, is refused; a key with both met a
   rule of that record.
2. The 403 names a permission (as the reference service's do): the key lacks it.
3. A write of the same resource succeeded in this run: the key may write there; the record is
   refused.
4. Nothing known (no `/me`, no permission named, the first write of its kind): the entry is
   *undecided*. It waits, pending and not sent again this run, while the rest goes on. A later
   write of that resource that succeeds makes it the record's refusal; a second 403 on that
   resource makes it the key's (the run stops; both stay pending); a run that ends with it still
   undecided fails it with the server's message, since nothing says the key is refused and a
   403 sent again is refused again.

A 403 for one operation of a bulk request the server accepted as a whole is that record's
(`sync.push.bulk`). A workspace rename refused is failed whatever the verdict: there is one
workspace, so nothing else waits behind it, and the user must see it and act (`sync.push.outcomes`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from cache import OutboxEntry, Resource
from sync.errors import Forbidden

READS = frozenset({"GET", "HEAD"})


class Verdict(Enum):
    KEY = "key"
    """The key may not make writes of this kind: stop the run, the entries wait."""
    RECORD = "record"
    """This one record refused the write: the entry fails, the queue goes on."""
    UNDECIDED = "undecided"
    """Nothing tells yet: the entry waits for the rest of the run to tell (see the module)."""


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    reason: str
    """For KEY, what the run stopped for (and each waiting entry shows); else the server's
    message, which a failed entry keeps."""


@dataclass(frozen=True)
class Undecided:
    entry: OutboxEntry
    message: str


@dataclass
class Refusals:
    """What one push run learnt about the writes its key may make."""

    granted: set[Resource] = field(default_factory=set)
    """Resources a write succeeded on in this run."""
    undecided: dict[Resource, list[Undecided]] = field(default_factory=dict)

    def judge(
        self, resource: Resource, error: Forbidden, permissions: frozenset[str] | None
    ) -> Judgement:
        """The verdict on a 403 to a request about `resource`; `permissions` are the key's by
        `/me`, None when unknown."""
        reading = error.meta.method.upper() in READS
        needed = needed_permission(resource, reading=reading)
        named = error.permission
        if permissions is not None:
            lacking = next((p for p in (named, needed) if p and p not in permissions), None)
            if lacking is None:
                return Judgement(Verdict.RECORD, error.message)
            return Judgement(Verdict.KEY, _lacks(lacking, error.message))
        if named is not None:
            return Judgement(Verdict.KEY, _lacks(named, error.message))
        if resource in self.granted:
            return Judgement(Verdict.RECORD, error.message)
        if self.undecided.get(resource):
            reason = (
                f"the API key seems not to be allowed to write {resource.value}: two writes "
                f"refused and none accepted ({error.message})"
            )
            return Judgement(Verdict.KEY, reason)
        return Judgement(Verdict.UNDECIDED, error.message)

    def wait(self, entry: OutboxEntry, message: str) -> None:
        """Keep an undecided entry until the run tells whose refusal it was."""
        self.undecided.setdefault(entry.resource, []).append(Undecided(entry, message))

    def succeeded(self, resource: Resource) -> list[Undecided]:
        """A write of `resource` succeeded: the entries waiting there were refused by their
        records; they are returned to be failed."""
        self.granted.add(resource)
        return self.undecided.pop(resource, [])

    def unresolved(self) -> list[Undecided]:
        """At the end of a run: the entries still undecided, to be failed."""
        left = [each for waiting in self.undecided.values() for each in waiting]
        self.undecided.clear()
        return left


def needed_permission(resource: Resource, *, reading: bool) -> str:
    """What a request about `resource` needs (docs/api.md#permissions): `admin` to rename the
    workspace (any key reads it), `<resource>:read` or `:write` for the rest."""
    if resource is Resource.WORKSPACES and not reading:
        return "admin"
    return f"{resource.value}:{'read' if reading else 'write'}"


def _lacks(permission: str, message: str) -> str:
    return f"the API key lacks {permission}: {message}"
