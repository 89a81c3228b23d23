"""The model: two or three clients and a colleague against one service, every interleaving
Hypothesis can think of (issue 15, part 3).

Rules are what users and networks do: local creates (identical ones too), edits of the same
fields from both sides, deletes, comments, bulk edits, conflicts settled mine or theirs, pushes
and pulls with a fault on any request and a process kill at any request, time passing, and
what a colleague does straight on the service (`model_colleague`). After every step the
invariants of `model_checks` hold; at the end every client pushes and pulls, faults off,
until nothing moves, and they are checked in full.

A step's arguments are plain values (client number, a pick among what that client shows, a
script of faults), so a failing run prints a program that a plain test can replay
(`test_model.py` pins each bug found that way).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from model_checks import ACTIVE, Checker, done_ids, id_map, outbox_rows
from model_colleague import (
    BODIES,
    BODY,
    CREATE_PRIORITY,
    FIELD,
    PICK,
    TITLE,
    TITLES,
    ColleagueRules,
)
from model_ledger import Ledger, canon
from model_wire import FAULTS, Fault, Kill
from model_world import FULL, Client, Config, World

from cache import IssueFilter, IssueSort, Resolution, Resource
from cache.outbox import is_local
from issuefields import TRANSITIONS
from sync.errors import SyncError
from sync.pull import pull
from sync.push import Backoff, push_outbox

PRIORITIES = ("none", "low", "medium", "high", "urgent")
STATUSES = tuple(TRANSITIONS)
WAITS = (1.0, 10.0, 31.0, 61.0, 600.0)
"""Virtual seconds: under and over a minute window, and past the reconcile's 30 s."""
QUIET_ROUNDS = 8
ACCEPTED = frozenset({"twin", "altered"})

CLIENT = st.integers(0, 2)
FAULT_SCRIPT = st.lists(st.sampled_from((*FAULTS, Fault.DROP_BEFORE, Fault.DROP_AFTER)), max_size=6)
"""Faults of a step's requests in turn; the drops, which leave a write's fate unknown, twice
as likely as the others."""
KILL = st.none() | st.builds(Kill, at=st.integers(0, 12), after=st.booleans())
"""A process killed at a request of a push or pull; killed at its first, it is a restart
between two steps (no rule of its own: one that cheap took a large share of the steps)."""


class Violation(AssertionError):
    pass


class Model(ColleagueRules, RuleBasedStateMachine):
    config: ClassVar[Config] = FULL
    collector: ClassVar[list[tuple[str, str, list[str]]] | None] = None
    """When set (the long run), violations are collected with the steps that led to them
    rather than raised."""
    rule_counts: ClassVar[dict[str, int]] = {}
    tallies: ClassVar[dict[str, int]] = {}
    accepted: ClassVar[dict[str, int]] = {}
    """Findings of an accepted or a known limit (`model_checks`: `twin`, `altered`), counted,
    never raised."""

    def __init__(self) -> None:
        super().__init__()
        self.world: World | None = None
        self.ledger = Ledger()
        self.steps: list[str] = []
        self.reported: set[tuple[str, str]] = set()
        self.tmp = Path(tempfile.mkdtemp(prefix="model-"))
        self.counter = 0

    # -- plumbing -----------------------------------------------------------------------------

    @property
    def w(self) -> World:
        assert self.world is not None
        return self.world

    def fail(self, category: str, message: str) -> None:
        accepted = category in ACCEPTED
        if not accepted and self.collector is None:
            raise Violation(f"[{category}] {message}")
        if (category, message) in self.reported:  # once an example, not after every step
            return
        self.reported.add((category, message))
        if accepted:
            Model.accepted[category] = Model.accepted.get(category, 0) + 1
        elif self.collector is not None:
            self.collector.append((category, message, list(self.steps)))

    def note(self, step: str, /, **args: Any) -> None:
        self.steps.append(f"{step}({', '.join(f'{k}={v!r}' for k, v in args.items())})")
        Model.rule_counts[step] = Model.rule_counts.get(step, 0) + 1

    def client(self, number: int) -> Client:
        return self.w.clients[number % len(self.w.clients)]

    def visible(self, client: Client) -> list[str]:
        """The issues the client shows, in an order a replay meets again (ids are random):
        server records by number, then records made offline in the order they were made."""
        rows = client.cache.window(IssueFilter(), IssueSort(), 0, 100_000)
        made = {row["record_id"]: row["id"] for row in outbox_rows(client)}
        return [
            row.id
            for row in sorted(
                rows, key=lambda r: (r.number is None, r.number or 0, made.get(r.id, 0))
            )
        ]

    def fresh(self, client: str, name: str) -> str:
        self.counter += 1
        return f"{client}{self.counter}-{name}"

    def backoff(self) -> Backoff:
        return Backoff(sleep=self.w.clock.sleep, random=lambda: 0.5)

    def retry(self) -> Backoff:
        return Backoff(tries=3, sleep=self.w.clock.sleep, random=lambda: 0.5)

    # -- set-up -------------------------------------------------------------------------------

    @initialize(clients=st.integers(2, 3))
    def start(self, clients: int) -> None:
        self.note("start", clients=clients)
        self.world = World(self.config, clients, self.tmp)
        self.checker = Checker(self.w, self.ledger, self.fail)
        for client in self.w.clients:
            self.w.run(pull(client.session, retry=self.retry()))  # type: ignore[arg-type]

    def teardown(self) -> None:
        try:
            if self.world is not None:
                self.quiet()
        finally:
            if self.world is not None:
                self._tally(self.world)
                self.world.close()
            shutil.rmtree(self.tmp, ignore_errors=True)

    def _tally(self, world: World) -> None:
        """What the example did to the clients, for the long run's table."""
        names = {client.name for client in world.clients}
        counts = {
            "requests the service served to clients": sum(
                n for actor, n in world.oracle.served.items() if actor in names
            ),
            "429s the fault injector made": sum(
                n
                for client in world.clients
                for fault, n in client.wire.fabricated.items()
                if fault is not Fault.STATUS_500
            ),
            "429s the service sent a client": sum(world.oracle.refused[n] for n in names),
            "processes killed": sum(client.crashes for client in world.clients),
            "conflicts shown to users": sum(
                len(client.cache.conflicts(unresolved_only=False)) for client in world.clients
            ),
            "waits for a rate limit (client limiter)": world.clock.waits["limiter"],
            "records made by the clients' creates": sum(
                1 for m in world.oracle.mirror.made.values() if m.actor in names
            ),
        }
        for name, count in counts.items():
            Model.tallies[name] = Model.tallies.get(name, 0) + count

    @invariant()
    def holds(self) -> None:
        if self.world is not None:
            self.checker.step()

    # -- what users do in their client --------------------------------------------------------

    @rule(c=CLIENT, title=TITLE, priority=CREATE_PRIORITY)
    def create(self, c: int, title: int, priority: str | None) -> None:
        self.note("create", c=c, title=title, priority=priority)
        client = self.client(c)
        fields: dict[str, Any] = {
            "title": TITLES[title] if title < len(TITLES) else self.fresh(client.name, "new")
        }
        if priority is not None:
            fields["priority"] = priority
        local = client.cache.create(Resource.ISSUES, fields)
        self.ledger.created(client.name, "issues", local, None)

    @rule(c=CLIENT, times=st.integers(2, 3), title=TITLE, priority=CREATE_PRIORITY)
    def create_same(self, c: int, times: int, title: int, priority: str | None) -> None:
        """The same issue made several times in a row, from a template ("Weekly review")."""
        self.note("create_same", c=c, times=times, title=title, priority=priority)
        client = self.client(c)
        fields: dict[str, Any] = {
            "title": TITLES[title] if title < len(TITLES) else self.fresh(client.name, "new")
        }
        if priority is not None:
            fields["priority"] = priority
        for _ in range(times):
            local = client.cache.create(Resource.ISSUES, fields)
            self.ledger.created(client.name, "issues", local, None)

    @rule(c=CLIENT, pick=PICK, name=FIELD, choice=st.integers(0, 9))
    def edit(self, c: int, pick: int, name: str, choice: int) -> None:
        self.note("edit", c=c, pick=pick, name=name, choice=choice)
        client = self.client(c)
        ids = self.visible(client)
        if not ids:
            return
        key = ids[pick % len(ids)]
        self._edit(client, [key], name, choice)

    @rule(c=CLIENT, picks=st.lists(PICK, min_size=1, max_size=4), choice=st.integers(0, 4))
    def bulk_edit(self, c: int, picks: list[int], choice: int) -> None:
        self.note("bulk_edit", c=c, picks=picks, choice=choice)
        client = self.client(c)
        ids = self.visible(client)
        if ids:
            keys = list(dict.fromkeys(ids[pick % len(ids)] for pick in picks))
            self._edit(client, keys, "priority", choice)

    def _edit(self, client: Client, keys: list[str], name: str, choice: int) -> None:
        shown = {key: self._shown(client, key).get(name) for key in keys}
        value = self._value(client.name, name, shown[keys[0]], choice)
        changing = [key for key in keys if shown[key] != value]
        if not changing:
            return
        for key in changing:
            self.ledger.edited(client.name, key, name, shown[key], value)
        if len(keys) == 1:
            client.cache.update(Resource.ISSUES, keys[0], {name: value})
        else:
            client.cache.update_many(Resource.ISSUES, keys, {name: value})
        for key in changing:
            self._typed(client, key, name, value)

    def _shown(self, client: Client, key: str) -> dict[str, Any]:
        detail = client.cache.issue(key)
        assert detail is not None, f"{key} is listed but cannot be opened"
        return detail.record

    def _value(self, client: str, name: str, shown: Any, choice: int) -> Any:
        if name in ("title", "description"):
            return self.fresh(client, name)
        if name == "priority":
            return PRIORITIES[choice % len(PRIORITIES)]
        moves = TRANSITIONS.get(str(shown), ())
        if choice < 8 and moves:
            return moves[choice % len(moves)]
        return STATUSES[choice % len(STATUSES)]

    def _typed(self, client: Client, key: str, name: str, value: Any) -> None:
        """The screen shows what was typed, and the outbox holds it (or it changes nothing)."""
        shown = self._shown(client, key).get(name)
        if canon(shown) != canon(value):
            self.fail("view", f"client {client.name} typed {value!r} into {name} of {key}, "
                      f"shows {shown!r}")  # fmt: skip
        target = client.cache.resolve_id(key)
        held = any(
            row["target"] == target
            and row["state"] in ACTIVE
            and canon(row["changes"].get(name, object.__name__)) == canon(value)
            for row in outbox_rows(client)
        )
        if held:
            return
        copy = client.cache.server_record(Resource.ISSUES, target) or {}
        if canon(copy.get(name)) == canon(value):
            intent = self.ledger.fields[(client.name, key, name)]
            intent.void = True
            return
        self.fail("gone", f"client {client.name}'s {name} {value!r} of {key} was never queued")

    @rule(c=CLIENT, pick=PICK)
    def delete(self, c: int, pick: int) -> None:
        self.note("delete", c=c, pick=pick)
        client = self.client(c)
        ids = self.visible(client)
        if not ids:
            return
        key = ids[pick % len(ids)]
        client.cache.delete(Resource.ISSUES, key)
        if is_local(key) and not any(row["record_id"] == key for row in outbox_rows(client)):
            self.ledger.vanished(client.name, key)
        else:
            self.ledger.deleted(client.name, key)

    @rule(c=CLIENT, pick=PICK, body=BODY)
    def comment(self, c: int, pick: int, body: int) -> None:
        self.note("comment", c=c, pick=pick, body=body)
        client = self.client(c)
        ids = self.visible(client)
        if not ids:
            return
        key = ids[pick % len(ids)]
        text = BODIES[body] if body < len(BODIES) else self.fresh(client.name, "comment")
        local = client.cache.create(Resource.COMMENTS, {"issue_id": key, "body": text})
        self.ledger.created(client.name, "comments", local, key)

    @precondition(lambda self: self.world is not None and self._any_conflict())
    @rule(c=CLIENT, pick=PICK, mine=st.booleans())
    def resolve(self, c: int, pick: int, mine: bool) -> None:
        self.note("resolve", c=c, pick=pick, mine=mine)
        holders = [client for client in self.w.clients if client.cache.conflicts()]
        if not holders:
            return
        client = holders[c % len(holders)]  # `c` counts the clients that have a conflict
        open_ = client.cache.conflicts()
        conflict = open_[pick % len(open_)]
        entry = client.cache.outbox_entry(conflict.entry_id)
        target = entry.target_id
        self.ledger.saw(client.name, target, conflict.field, conflict.theirs)
        client.cache.resolve_conflict(conflict.id, Resolution.MINE if mine else Resolution.THEIRS)
        if not mine:
            links = id_map(client)
            for (name, key, field_name), intent in self.ledger.fields.items():
                same_record = links.get(key, key) == target
                same_field = name == client.name and field_name == conflict.field
                if same_field and same_record and canon(intent.value) == canon(conflict.mine):
                    intent.void = True

    def _any_conflict(self) -> bool:
        return any(client.cache.conflicts() for client in self.w.clients)

    # -- sync, faults, crashes, time ----------------------------------------------------------

    @rule(c=CLIENT, faults=FAULT_SCRIPT, kill=KILL)
    def push(self, c: int, faults: list[Fault], kill: Kill | None) -> None:
        self.note("push", c=c, faults=faults, kill=kill)
        client = self.client(c)
        client.wire.arm(faults, kill)
        self._push(client, killable=True)
        client.wire.disarm()

    def _push(self, client: Client, *, killable: bool) -> None:
        """A push, and its report held against the outbox: each entry it counts as sent
        became done in it, and no other (a create whose fate is unknown is never counted)."""
        session = client.session
        assert session is not None
        before = done_ids(client)
        push = push_outbox(session, backoff=self.backoff())
        report = self.w.run_client(client, push) if killable else self.w.run(push)
        if report is None:  # killed: the process printed nothing
            return
        landed = done_ids(client) - before
        if report.done != len(landed):
            self.fail(
                "report",
                f"client {client.name}'s push reported {report.done} sent; "
                f"{len(landed)} entries became done",
            )

    @rule(c=CLIENT, faults=FAULT_SCRIPT, kill=KILL, full=st.booleans())
    def pull(self, c: int, faults: list[Fault], kill: Kill | None, full: bool) -> None:
        self.note("pull", c=c, faults=faults, kill=kill, full=full)
        client = self.client(c)
        client.wire.arm(faults, kill)
        self.w.run_client(client, self._pull(client, full))
        client.wire.disarm()

    async def _pull(self, client: Client, full: bool) -> None:
        assert client.session is not None
        with suppress(SyncError):  # the network stayed down: the next pull resumes there
            await pull(client.session, full=full, retry=self.retry())

    @rule(seconds=st.sampled_from(WAITS))
    def wait(self, seconds: float) -> None:
        self.note("wait", seconds=seconds)
        self.w.clock.advance(seconds)

    # -- the end: a quiet sync, then everything is checked -------------------------------------

    def quiet(self) -> None:
        """Faults off; every client pushes and pulls until a whole round changes nothing."""
        last: object = None
        for round_ in range(QUIET_ROUNDS):
            self.w.clock.advance(61.0)
            for client in self.w.clients:
                assert client.session is not None
                self._push(client, killable=False)
                self.w.run(pull(client.session, full=round_ == 0, retry=self.retry()))
            now = self._snapshot()
            if now == last:
                break
            last = now
        issues = self.w.run(self.w.listing("/issues"))
        comments = self.w.run(self.w.listing("/comments"))
        self.checker.final(issues, comments)

    def _snapshot(self) -> object:
        mirror = self.w.oracle.mirror
        states = [
            tuple((row["id"], row["state"], row["attempts"]) for row in outbox_rows(client))
            for client in self.w.clients
        ]
        return (states, len(mirror.applied), len(mirror.made), sorted(mirror.issues))


def model_for(config: Config) -> Callable[[], Model]:
    """A factory of machines against `config`, for the runners."""
    return type(f"Model_{config.name}", (Model,), {"config": config})
