"""The invariants of the model, checked after every step and after the final quiet sync.

Each violation is reported under a category (the long run counts them by category):

- `limit`: the service itself answered a client with 429 (fabricated 429s do not count).
- `overwrite`: a client's write replaced a value someone else wrote that its user never saw
  (not beneath an edit, not as the `theirs` of a conflict they settled).
- `order`: a client's write put back a value its user had typed before a newer one of the same
  field that was already on the service.
- `stray`: a client wrote a value, or deleted a record, its user never typed or deleted there
  (a write sent to the wrong record).
- `false-conflict`: a conflict whose `theirs` is the client's own write, or on a field only
  one side changed.
- `claimed`: a create settled as a record its client did not make, or as a record another
  create of the client was already settled as (a write silently gone).
- `twin`: a create settled as an identical record someone else made while its answer was
  lost, in the seconds its own result could have appeared, where the client cannot tell them
  apart: an issue names no author, and without `/me` (docs/api.md#current-user-get-me) the client
  does not know which author is its own (issue 15's accepted limit). Counted apart from the
  violations.
- `report`: a push counted as sent other than the entries that became done in it (a create
  whose fate is unknown counted as sent).
- `altered`: on a server with only the published API, a record a client's create made that no
  write of it accounts for, which someone else deleted before the client looked for it: with
  no key to ask and no tombstone to see, nothing on the server tells it from a create never
  applied, which is sent again. Counted apart from the violations, as the limit it is. Where
  the server honours `Idempotency-Key` the lost create is asked of its key, and a record that
  someone else only changed is one made in the attempt's window (the create is then `unsure`),
  so every other such record is a `duplicate`.
- `duplicate`: a record a client's create made that no write of it accounts for, when no
  create of the same fields is still in doubt (made twice).
- `gone`: a write the user made that is neither on the service nor in the outbox.
- `stuck`: an entry still pending or sending after the quiet sync.
- `copy`: after the quiet sync, a cache's server copy differs from the service.
- `view`: after the quiet sync, what a cache shows differs from the service plus its outbox.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from model_ledger import UNIQUE_FIELDS, Ledger, canon
from model_service import FIELDS, Made, Mirror
from model_world import Client, World

from cache import IssueFilter, IssueSort, Resource
from cache.resources import SPECS
from sync.push.reconcile import ATTEMPT_LIMIT, KNOWN_OFFSET_MARGIN, LATE_APPLY

Fail = Callable[[str, str], None]
UNCERTAIN = ("pending", "sending", "unsure")
ACTIVE = ("pending", "sending", "failed", "conflict", "unsure")


def outbox_rows(client: Client) -> list[dict[str, Any]]:
    with client.raw() as conn:
        rows = conn.execute(
            "SELECT id, resource, record_id, server_id, parent_id, operation, base, changes, "
            "state, attempts, not_applied, sent_at, updated_at FROM outbox ORDER BY id"
        ).fetchall()
    found = []
    for row in rows:
        entry = dict(row)
        entry["changes"] = json.loads(entry["changes"])
        entry["base"] = json.loads(entry["base"])
        entry["target"] = entry["server_id"] or entry["record_id"]
        found.append(entry)
    return found


def done_ids(client: Client) -> set[int]:
    with client.raw() as conn:
        return {row[0] for row in conn.execute("SELECT id FROM outbox WHERE state = 'done'")}


def id_map(client: Client) -> dict[str, str]:
    with client.raw() as conn:
        return {str(a): str(b) for a, b in conn.execute("SELECT local_id, server_id FROM id_map")}


class Checker:
    def __init__(self, world: World, ledger: Ledger, fail: Fail) -> None:
        self.world, self.ledger, self.fail = world, ledger, fail
        self.applied_checked = 0
        self.conflicts_checked: dict[str, int] = {}
        self.last_order: dict[tuple[str, str, str], int] = {}

    @property
    def mirror(self) -> Mirror:
        return self.world.oracle.mirror

    def client(self, name: str) -> Client:
        return next(c for c in self.world.clients if c.name == name)

    def maps(self) -> dict[str, dict[str, str]]:
        return {client.name: id_map(client) for client in self.world.clients}

    # -- after every step ---------------------------------------------------------------------

    def step(self) -> None:
        maps = self.maps()
        self.limits()
        self.applied(maps)
        self.deletes(maps)
        self.conflicts()
        self.creates(maps, final=False)

    def limits(self) -> None:
        for client in self.world.clients:
            refused = self.world.oracle.refused[client.name]
            if refused:
                self.fail("limit", f"the service refused client {client.name} {refused} times")

    def applied(self, maps: dict[str, dict[str, str]]) -> None:
        """Each field a client's write changed on the service: seen by its user if it replaced
        someone else's value, and never an older value over a newer one of its own."""
        seen: dict[tuple[str, str, str], set[str]] = {}
        typed: dict[tuple[str, str, str], dict[str, int]] = {}
        for (name, key, fld), values in self.ledger.seen.items():
            resolved = (name, maps.get(name, {}).get(key, key), fld)
            seen.setdefault(resolved, set()).update(values)
        for (name, key, fld), values in self.ledger.typed.items():
            resolved = (name, maps.get(name, {}).get(key, key), fld)
            typed.setdefault(resolved, {}).update(values)
        for change in self.mirror.applied[self.applied_checked :]:
            self.applied_checked += 1
            if change.actor not in maps:
                continue
            where = (change.actor, change.record, change.field)
            if change.old_writer != change.actor and canon(change.old) not in seen.get(where, ()):
                self.fail(
                    "overwrite",
                    f"client {change.actor} set {change.field} of {change.record} to "
                    f"{change.new!r} over {change.old_writer}'s {change.old!r}, never shown",
                )
            order = typed.get(where, {}).get(canon(change.new))
            if order is None:
                self.fail(
                    "stray",
                    f"client {change.actor} wrote {change.field} {change.new!r} on "
                    f"{change.record}, which its user never typed there",
                )
                continue
            if change.field not in UNIQUE_FIELDS:
                continue
            if order < self.last_order.get(where, 0):
                self.fail(
                    "order",
                    f"client {change.actor} put {change.field} of {change.record} back to "
                    f"{change.new!r} over a newer value it had typed",
                )
            self.last_order[where] = max(order, self.last_order.get(where, 0))

    def deletes(self, maps: dict[str, dict[str, str]]) -> None:
        """Every record a client deleted on the service, its user deleted."""
        meant = {(name, maps.get(name, {}).get(key, key)) for name, key in self.ledger.deletes}
        for record, actor in self.mirror.deleted.items():
            if actor in maps and (actor, record) not in meant:
                self.fail("stray", f"client {actor} deleted {record}, which its user never did")

    def conflicts(self) -> None:
        for client in self.world.clients:
            done = self.conflicts_checked.get(client.name, 0)
            rows = client.cache.outbox.conflicts(unresolved_only=False)
            entries = {row["id"]: row for row in outbox_rows(client)}
            for conflict in rows:
                if conflict.id <= done:
                    continue
                done = max(done, conflict.id)
                entry = entries.get(conflict.entry_id)
                target = entry["target"] if entry else "?"
                where = f"client {client.name}, {conflict.field} of {target}"
                if canon(conflict.mine) == canon(conflict.base):
                    self.fail("false-conflict", f"{where}: mine is the base {conflict.base!r}")
                if canon(conflict.theirs) == canon(conflict.base):
                    self.fail("false-conflict", f"{where}: theirs is the base {conflict.base!r}")
                stood = self.mirror.value_at(target, conflict.field, conflict.created_at)
                if stood is not None and stood[0] == client.name:
                    self.fail(
                        "false-conflict",
                        f"{where}: theirs {conflict.theirs!r} is its own write ({stood[1]!r})",
                    )
            self.conflicts_checked[client.name] = done

    def creates(self, maps: dict[str, dict[str, str]], *, final: bool) -> None:
        """Each create settled as a record its client made, one record per create; each record
        a client made settled by one create, or one still in doubt."""
        made = self.mirror.made
        for client in self.world.clients:
            links = maps[client.name]
            rows = outbox_rows(client)
            creates = {row["record_id"]: row for row in rows if row["operation"] == "create"}
            linked = Counter(links.values())
            for local, row in creates.items():
                if row["state"] == "done" and local not in links:
                    self.fail("claimed", f"client {client.name}'s create {local} done, no record")
            for local, server in links.items():
                origin = made.get(server)
                row = creates.get(local)
                if origin is None or origin.actor != client.name:
                    who = "nobody" if origin is None else origin.actor
                    unknowable = row is not None and (
                        row["resource"] == "issues" or self.world.config.spec
                    )
                    twin = unknowable and origin is not None and _in_window(row, origin)
                    self.fail(
                        "twin" if twin else "claimed",
                        f"client {client.name}'s create {local} settled as {server}, made by {who}",
                    )
                elif row is not None and canon(row["changes"]) != canon(origin.fields):
                    self.fail("claimed", f"{local} sent {row['changes']} is {origin.fields}")
                if linked[server] > 1:
                    self.fail(
                        "claimed", f"client {client.name}: {linked[server]} creates settled as "
                        f"{server}: all but one are silently gone",
                    )  # fmt: skip
            doubt: Counter[str] = Counter()
            for row in creates.values():
                # A create tried without a known outcome may have made its record: so may one
                # that failed after such a try (a comment whose issue was deleted meanwhile
                # fails with a 404 though its first try landed), visibly.
                tried = row["attempts"] > 0 and not row["not_applied"]
                visible = row["state"] in ("unsure", "failed") or (
                    not final and row["state"] in UNCERTAIN
                )
                if tried and visible:
                    doubt[canon(row["changes"])] += 1
            orphans: dict[str, list[str]] = {}
            for server, origin in made.items():
                if origin.actor == client.name and server not in linked:
                    orphans.setdefault(canon(origin.fields), []).append(server)
            for fingerprint, servers in orphans.items():
                if len(servers) <= doubt[fingerprint]:
                    continue
                gone = [server for server in servers if self._deleted(server, made[server])]
                limit = self.world.config.spec and len(servers) - len(gone) <= doubt[fingerprint]
                if limit:
                    self.fail("altered", f"client {client.name} made {servers}, {gone} deleted")
                    continue
                self.fail(
                    "duplicate",
                    f"client {client.name} made {len(servers)} records {fingerprint} no write "
                    f"accounts for ({doubt[fingerprint]} in doubt)",
                )

    def _deleted(self, server: str, origin: Made) -> bool:
        """Whether someone else deleted the record: on a server with only the published API a
        lost create's record is then nowhere to be found, and the client sends it again
        (`altered`)."""
        return self.mirror.deleted.get(server, origin.actor) != origin.actor

    # -- after the quiet sync -----------------------------------------------------------------

    def final(self, issues: list[dict[str, Any]], comments: list[dict[str, Any]]) -> None:
        maps = self.maps()
        self.limits()
        self.applied(maps)
        self.deletes(maps)
        self.conflicts()
        self.creates(maps, final=True)
        service = {
            "issues": {r["id"]: r for r in issues},
            "comments": {r["id"]: r for r in comments},
        }
        self.oracle_agrees(service)
        for client in self.world.clients:
            rows = outbox_rows(client)
            self.stuck(client, rows)
            self.copies(client, service)
            self.view(client, rows, service["issues"])
        self.gone(maps)

    def oracle_agrees(self, service: dict[str, dict[str, dict[str, Any]]]) -> None:
        """The mirror must be the service, or the other checks would judge by a wrong picture."""
        if set(self.mirror.issues) != set(service["issues"]):
            raise AssertionError("the model's mirror of the service lost track of its issues")
        for key, record in service["issues"].items():
            for name in FIELDS:
                if self.mirror.issues[key].get(name) != record.get(name):
                    raise AssertionError(f"the mirror has another {name} for {key}")

    def stuck(self, client: Client, rows: list[dict[str, Any]]) -> None:
        """Nothing the quiet sync could send is left: what still waits, waits on the user (a
        conflict of the same field, a create refused or unsure)."""
        waiting = [row for row in rows if row["state"] == "sending"]
        sendable = {entry.id for entry in client.cache.push.sendable()}
        waiting += [row for row in rows if row["id"] in sendable]
        for row in waiting:
            self.fail(
                "stuck",
                f"client {client.name}: {row['operation']} of {row['target']} still "
                f"{row['state']} after the quiet sync",
            )

    def copies(self, client: Client, service: dict[str, dict[str, dict[str, Any]]]) -> None:
        with client.raw() as conn:
            for table in ("issues", "comments"):
                spec = SPECS[Resource(table)]
                held = {
                    str(row[0]): spec.record_of(tuple(row))
                    for row in conn.execute(f"SELECT {spec.record_columns} FROM {table}")
                }
                truth = service[table]
                for key in set(held) | set(truth):
                    if held.get(key) != truth.get(key):
                        self.fail(
                            "copy",
                            f"client {client.name}'s copy of {table[:-1]} {key}: "
                            f"{_brief(held.get(key))} but the service has {_brief(truth.get(key))}",
                        )

    def view(
        self, client: Client, rows: list[dict[str, Any]], issues: dict[str, dict[str, Any]]
    ) -> None:
        """What the client shows: the service's issues with its active writes laid over them
        (a refused edit or delete is not shown; a create is, whatever became of it). An issue
        deleted on the service stays while a write of the client on it (or on a comment of it)
        is still in the outbox, as the cache last held it, so that write stays in sight."""
        expected: dict[str, dict[str, Any] | None] = {k: dict(v) for k, v in issues.items()}
        unknown = {}  # gone from the service, kept for a write: values as the cache last had them
        for row in rows:
            if row["state"] not in ACTIVE:
                continue
            if row["resource"] == "comments":
                parent = row["parent_id"]
                if parent is not None and parent not in expected:
                    expected[parent], unknown[parent] = {}, True
                continue
            if row["resource"] != "issues":
                continue
            target, failed = row["target"], row["state"] == "failed"
            if row["operation"] == "create":
                record = {"status": "todo", "priority": "none", "description": ""}
                expected[target] = {**record, **row["changes"]}
                continue
            if target not in expected:
                expected[target], unknown[target] = {}, True
            record = expected[target]
            if failed or record is None:
                continue
            if row["operation"] == "delete":
                expected[target] = None
            else:
                record.update(row["changes"])
        shown = {
            row.id for row in client.cache.reads.window(IssueFilter(), IssueSort(), 0, 100_000)
        }
        wanted = {key for key, record in expected.items() if record is not None}
        if shown != wanted:
            self.fail(
                "view",
                f"client {client.name} shows {sorted(shown - wanted)} it should not and hides "
                f"{sorted(wanted - shown)}",
            )
        for key in shown & wanted:
            detail = client.cache.reads.issue(key)
            record = expected[key] or {}
            for name in FIELDS:
                if key in unknown and name not in record:
                    continue
                if detail is not None and detail.record.get(name) != record.get(name):
                    self.fail(
                        "view",
                        f"client {client.name} shows {name} {detail.record.get(name)!r} of "
                        f"{key}, expected {record.get(name)!r}",
                    )

    def gone(self, maps: dict[str, dict[str, str]]) -> None:
        """Each write still owed is on the service or visible in its client's outbox."""
        rows = {client.name: outbox_rows(client) for client in self.world.clients}
        issues = self.mirror.issues
        for (name, key, fld), intent in self.ledger.fields.items():
            if intent.void:
                continue
            target = maps[name].get(key, key)
            wanted = canon(intent.value)
            if any(
                r["target"] == target
                and r["state"] in ACTIVE
                and canon(r["changes"].get(fld, object.__name__)) == wanted
                for r in rows[name]
            ):
                continue
            if target in issues and canon(issues[target].get(fld)) == wanted:
                continue
            if any(
                a.actor == name and a.record == target and a.field == fld and canon(a.new) == wanted
                for a in self.mirror.applied
            ):
                continue
            if any(self._held_when_done(r, target, fld, wanted) for r in rows[name]):
                continue
            origin = self.mirror.made.get(target)
            if (
                origin is not None
                and origin.actor == name
                and canon(origin.fields.get(fld)) == wanted
            ):
                continue
            self.fail("gone", f"client {name}'s {fld} {intent.value!r} of {key} is nowhere")
        for (name, key), _seq in self.ledger.deletes.items():
            target = maps[name].get(key, key)
            pending = any(
                r["target"] == target and r["operation"] == "delete" and r["state"] in ACTIVE
                for r in rows[name]
            )
            if target in issues and not pending:
                self.fail("gone", f"client {name}'s delete of {key} is nowhere")
        for create in self.ledger.creates:
            if create.void:
                continue
            if not any(r["record_id"] == create.local_id for r in rows[create.client]):
                self.fail(
                    "gone", f"client {create.client}'s create {create.local_id} left the outbox"
                )

    def _held_when_done(self, row: dict[str, Any], target: str, fld: str, wanted: str) -> bool:
        """An edit settled as done while the service held its value already (someone else
        had typed the same): nothing of it is owed, even once that record changed again."""
        if row["target"] != target or row["state"] != "done":
            return False
        if canon(row["changes"].get(fld, object.__name__)) != wanted:
            return False
        stood = self.mirror.value_at(target, fld, row["updated_at"])
        return stood is not None and canon(stood[1]) == wanted


def _in_window(row: dict[str, Any], origin: Made) -> bool:
    """Whether a record someone else made falls in the window in which the create's last
    attempt could have made it (`sync.push.reconcile._window`, at its widest: the attempt's end
    unknown). An issue carries no author, so on a server that does not honour keys such a
    twin cannot be told from the create's own result: the limit issue 15 accepts."""
    sent = row["sent_at"] or 0.0
    widest = ATTEMPT_LIMIT + KNOWN_OFFSET_MARGIN + LATE_APPLY
    return sent - KNOWN_OFFSET_MARGIN <= origin.at <= sent + widest


def _brief(record: dict[str, Any] | None) -> str:
    if record is None:
        return "nothing"
    return (
        "{"
        + ", ".join(f"{k}={record.get(k)!r}" for k in ("title", *FIELDS[1:], "updated_at"))
        + "}"
    )
